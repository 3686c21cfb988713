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
 * `<Name>Payload { <field>: <Model> userErrors: [UserError!]! }`: the object is
 * read by id with the selection Pothos plans for it.
 */
export function payloadType<Model extends 'Contact' | 'Conversation' | 'Message'>(
  model: Model,
  field: string,
  read: (ctx: GraphQLContext, id: string, query: object) => Promise<unknown>,
) {
  return builder.objectRef<Payload>(`${model}Payload`).implement({
    fields: (t) => ({
      [field]: t.prismaField({
        type: model,
        nullable: true,
        // The generic model defeats Pothos' inference of the row type; read() returns that row.
        resolve: (query, payload, _args, ctx) => (payload.id ? read(ctx, payload.id, query) : null) as never,
      }),
      userErrors: t.field({ type: [UserError], resolve: (payload) => payload.userErrors }),
    }),
  });
}
