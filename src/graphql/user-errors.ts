import { getRefFromModel, queryFromInfo } from '@pothos/plugin-prisma';
import { builder, type GraphQLContext } from './builder.js';

export const UserErrorCode = builder.enumType('UserErrorCode', {
  values: {
    INVALID: { description: 'The value breaks a field rule.' },
    TAKEN: { description: 'Another contact already holds the value.' },
    NOT_FOUND: { description: 'The object does not exist or is not visible to the caller.' },
  } as const,
});

export interface UserErrorShape {
  field: string[];
  message: string;
  code: 'INVALID' | 'TAKEN' | 'NOT_FOUND';
}

export const UserError = builder.objectRef<UserErrorShape>('UserError').implement({
  description: 'An expected failure of a mutation; the message is the REST 422 message for the same input.',
  fields: (t) => ({
    field: t.exposeStringList('field', { description: 'The input path, e.g. ["input", "email"].' }),
    message: t.exposeString('message'),
    code: t.field({ type: UserErrorCode, resolve: (e) => e.code }),
  }),
});

/** The payload every mutation returns: its object (by id) and the user errors. */
export interface Payload {
  id: string | null;
  userErrors: UserErrorShape[];
}

/**
 * `<Name>Payload { <field>: <Model> userErrors: [UserError!]! }`. The object is read by id with
 * the selection Pothos plans for it, relations included. A refused mutation has no id, so nothing
 * is planned and nothing is read: a `prismaField` would plan a query it cannot use, which
 * `onUnusedQuery` rightly reports.
 */
export function payloadType<Model extends 'Contact' | 'Conversation' | 'Message'>(
  model: Model,
  field: string,
  read: (ctx: GraphQLContext, id: string, query: object) => Promise<unknown>,
) {
  const modelRef = getRefFromModel(model, builder);
  return builder.objectRef<Payload>(`${model}Payload`).implement({
    fields: (t) => ({
      [field]: t.field({
        type: modelRef,
        nullable: true,
        resolve: async (payload, _args, ctx, info) => {
          if (!payload.id) return null;
          // The generic model defeats Pothos' inference of the row type; read() returns that row.
          return (await read(ctx, payload.id, await queryFromInfo({ context: ctx, info, awaitSelections: true }))) as never;
        },
      }),
      userErrors: t.field({ type: [UserError], resolve: (payload) => payload.userErrors }),
    }),
  });
}
