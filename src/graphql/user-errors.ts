import { getModel, getRefFromModel, queryFromInfo } from '@pothos/plugin-prisma';
import { builder, type GraphQLContext } from './builder.js';
import { fixedQuery } from './selection.js';

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
  /** The row the mutation wrote and returned, when it has one; never stored for idempotent replays. */
  row?: object;
}

type PrismaQuery = { select?: Record<string, unknown>; include?: Record<string, unknown> } & Record<string, unknown>;
type ModelFields = { scalars: string[]; relations: Map<string, string> };

const modelFields = new Map<string, ModelFields>();

/** A model's scalar field names and its relations' target models, from the datamodel Pothos reads. */
function fieldsOf(model: string): ModelFields {
  let fields = modelFields.get(model);
  if (!fields) {
    const all = getModel(model, builder).fields;
    fields = {
      scalars: all.filter((field) => field.kind !== 'object').map((field) => field.name),
      relations: new Map(all.filter((field) => field.kind === 'object').map((field) => [field.name, field.type])),
    };
    modelFields.set(model, fields);
  }
  return fields;
}

/**
 * Whether `row` already holds everything `query` would read for `model`: every selected scalar
 * (all of them in include mode), and every selected relation loaded, recursively. A relation
 * planned with arguments (`where`, `orderBy`, `take`, …) or a `_count` never counts as held: the
 * row cannot say it was loaded with the same ones.
 */
function holds(model: string, row: Record<string, unknown>, query: PrismaQuery): boolean {
  for (const key in query) if (key !== 'select' && key !== 'include') return false;
  const fields = fieldsOf(model);
  if (!query.select) {
    for (const name of fields.scalars) if (!(name in row)) return false;
  }
  const selection = query.select ?? query.include ?? {};
  for (const name in selection) {
    const value = selection[name];
    if (!value) continue;
    if (!(name in row)) return false;
    const target = fields.relations.get(name);
    if (target === undefined) {
      if (value !== true) return false;
      continue;
    }
    const related = row[name];
    if (related === null) continue;
    const nested = (value === true ? {} : value) as PrismaQuery;
    const rows = (Array.isArray(related) ? related : [related]) as Record<string, unknown>[];
    if (!rows.every((item) => holds(target, item, nested))) return false;
  }
  return true;
}

/**
 * `<Name>Payload { <field>: <Model> userErrors: [UserError!]! }`. The object is the row the
 * mutation returned when that row holds the selection Pothos plans for it (relations included),
 * and is read by id with that selection otherwise. The plan is made either way: it records where
 * the nested fields find their data. A refused mutation has no id, so nothing is planned and
 * nothing is read: a `prismaField` would plan a query it cannot use, which `onUnusedQuery`
 * rightly reports.
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
          const query = (fixedQuery(ctx, info) ?? (await queryFromInfo({ context: ctx, info, awaitSelections: true }))) as PrismaQuery;
          // The generic model defeats Pothos' inference of the row type; both are that row.
          if (payload.row && holds(model, payload.row as Record<string, unknown>, query)) return payload.row as never;
          return (await read(ctx, payload.id, query)) as never;
        },
      }),
      userErrors: t.field({ type: [UserError], resolve: (payload) => payload.userErrors }),
    }),
  });
}
