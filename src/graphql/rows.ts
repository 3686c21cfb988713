import { getModel } from '@pothos/plugin-prisma';
import { getNamedType, isObjectType, type GraphQLObjectType, type GraphQLResolveInfo, type GraphQLSchema } from 'graphql';
import { Columns, KEYSET, type Joinable, type JoinedLoad, type JoinedRelation, type RowLoad, type ViewTable } from '../db/view.js';
import { builder, type GraphQLContext } from './builder.js';
import { selectionQuery } from './selection.js';

/** The field extension naming the columns a field computed from the row reads (`viewField` sets it). */
const READS = 'rowColumns';

/**
 * The options of a field of a Prisma object type that resolves the view field `key` of `table`:
 * the view's value, and the columns it reads, so that rows loaded for the type hold them. A field
 * reading a relation selects it instead (Pothos' `select`).
 */
export function viewField<Row, View, K extends keyof View & string>(table: ViewTable<Row, View>, key: K) {
  const field = table.fields[key];
  if (field.relations) throw new Error(`The view's field ${key} reads a relation: its GraphQL field selects it.`);
  // Typed by the rows the view reads (its reads, checked where the field is defined); Pothos gives the model's row.
  return { resolve: field.value as (row: any) => View[K], extensions: { [READS]: field.reads } };
}

/**
 * The columns a row must hold for every field of a Prisma object type `type` to resolve, when the
 * selection loads no relation: each exposed column, each column a field computed from the row
 * reads (`viewField`, or the columns of Pothos' `select`). A field that selects a relation only
 * resolves from rows Pothos' plan loads whole, with the relation. Any other field computed from
 * the row could read anything: the schema refuses to build (`checkRowColumns`), rather than
 * resolve it from a row that lacks what it reads.
 */
export function rowColumns<Row>(type: GraphQLObjectType): Columns<Row> {
  return new Columns(columnsRead(type) as (keyof Row & string)[]);
}

function columnsRead(type: GraphQLObjectType): string[] {
  const model = type.extensions.pothosPrismaModel as string;
  const scalars = new Set(
    getModel(model, builder)
      .fields.filter((field) => field.kind !== 'object')
      .map((field) => field.name),
  );
  const names: string[] = [];
  for (const field of Object.values(type.getFields())) {
    const extensions = field.extensions as { pothosExposedField?: unknown; pothosPrismaSelect?: unknown; [READS]?: unknown };
    const select = extensions.pothosPrismaSelect;
    if (typeof extensions.pothosExposedField === 'string' && scalars.has(extensions.pothosExposedField)) names.push(extensions.pothosExposedField);
    else if (Array.isArray(extensions[READS])) names.push(...(extensions[READS] as string[]));
    else if (typeof select === 'function') continue;
    else if (select && typeof select === 'object') names.push(...Object.keys(select).filter((name) => scalars.has(name)));
    else {
      throw new Error(
        `${type.name}.${field.name} is computed from the row without saying what it reads: expose a column (t.expose…), ` +
          `resolve a view field (viewField in src/graphql/rows.ts), or select what it reads (select).`,
      );
    }
  }
  return names;
}

/** Works out the columns of every Prisma object type of `schema` as it is built: a field that says nothing of what it reads fails here. */
export function checkRowColumns(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (isObjectType(type) && type.extensions.pothosPrismaModel) rowColumns(type);
  }
  return schema;
}

const NODES = ['edges', 'node'];

/** How a page's rows are loaded for one request: its columns, or one statement with its joined relations. */
type PageLoad<Row> = (ctx: GraphQLContext, info: GraphQLResolveInfo) => RowLoad<Row> | JoinedLoad<Row>;

/**
 * How a connection field loads the rows of its page (its nodes): the columns their type's fields
 * read when the selection loads no relation, otherwise the query Pothos planned for the relations.
 * Made once per field, it works the columns out on its first call and keeps them.
 *
 * Given the to-one relations the page's statement may join (`joinable`), a plan that selects only
 * those (with their columns, and in turn only relations they may join) is a `JoinedLoad`: the page
 * and those relations in one statement, its rows shaped as Prisma would have read them, so that
 * the relation fields resolve from them as from Prisma's. Any other plan (a list relation, a
 * filtered or ordered one, a relation not declared) is Pothos' query, run by Prisma.
 */
export function pageLoader<Row>(): (ctx: GraphQLContext, info: GraphQLResolveInfo) => RowLoad<Row>;
export function pageLoader<Row>(joinable: Readonly<Record<string, Joinable>>): PageLoad<Row>;
export function pageLoader<Row>(joinable?: Readonly<Record<string, Joinable>>): PageLoad<Row> {
  let columns: { columns: Columns<Row> } | undefined;
  // By the plan's text: a plan is made afresh for each request that selects a relation.
  const joined = new Map<string, JoinedLoad<Row> | null>();
  return (ctx, info) => {
    const query = selectionQuery(ctx, info, NODES);
    // A type in include mode is planned as `{}` until a relation is selected.
    if (query.include || query.select) {
      if (!joinable) return { query };
      const key = JSON.stringify(query);
      let load = joined.get(key);
      if (load === undefined) {
        const planned = joinedLoad(query, nodeType(info).extensions.pothosPrismaModel as string, joinable);
        load = planned ? { columns: planned.columns.with(KEYSET) as Columns<Row>, joins: planned.joins } : null;
        // Plans differ by selection, not by request: a bound only against a client that varies them without end.
        if (joined.size >= PLANS_KEPT) joined.clear();
        joined.set(key, load);
      }
      return load ?? { query };
    }
    return (columns ??= { columns: rowColumns<Row>(nodeType(info)) });
  };
}

const PLANS_KEPT = 64;

/** The columns of every scalar field of a model: what Prisma reads of a row it loads whole. */
const wholeRows = new Map<string, Columns<Record<string, unknown>>>();
function wholeRow(model: string): Columns<Record<string, unknown>> {
  let columns = wholeRows.get(model);
  if (!columns) {
    columns = new Columns(
      getModel(model, builder)
        .fields.filter((field) => field.kind !== 'object')
        .map((field) => field.name),
    );
    wholeRows.set(model, columns);
  }
  return columns;
}

/**
 * The joined read of a Prisma query planned for rows of `model`, or undefined when the query
 * reads anything a join of `joinable` cannot: an argument (where, orderBy, take…), a list
 * relation, a count, a relation not declared joinable.
 */
function joinedLoad(
  query: Record<string, unknown>,
  model: string,
  joinable: Readonly<Record<string, Joinable>>,
): { columns: Columns<Record<string, unknown>>; joins: Record<string, JoinedRelation> } | undefined {
  const keys = Object.keys(query);
  const mode = keys[0];
  if (keys.length !== 1 || (mode !== 'include' && mode !== 'select')) return undefined;
  const fields = getModel(model, builder).fields;
  const names: string[] = mode === 'include' ? [...wholeRow(model).names] : [];
  const joins: Record<string, JoinedRelation> = {};
  for (const [name, value] of Object.entries(query[mode] as Record<string, unknown>)) {
    if (value === false || value === undefined) continue;
    const field = fields.find((candidate) => candidate.name === name);
    if (!field) return undefined;
    if (field.kind !== 'object') {
      if (mode !== 'select' || value !== true) return undefined;
      names.push(name);
      continue;
    }
    const relation = joinable[name];
    const from = (field as { relationFromFields?: readonly string[] }).relationFromFields;
    if (!relation || field.isList || from?.length !== 1 || from[0] !== relation.on) return undefined;
    const nested =
      value === true
        ? { columns: wholeRow(field.type), joins: {} }
        : value && typeof value === 'object'
          ? joinedLoad(value as Record<string, unknown>, field.type, relation.joins ?? {})
          : undefined;
    if (!nested) return undefined;
    joins[name] = { relation, ...nested };
  }
  return { columns: new Columns(names), joins };
}

/** The type of the nodes of the connection `info` resolves. */
function nodeType(info: GraphQLResolveInfo): GraphQLObjectType {
  let type = getNamedType(info.returnType);
  for (const name of NODES) {
    const field = isObjectType(type) ? type.getFields()[name] : undefined;
    if (!field) throw new Error(`No field ${name} on ${type.name}.`);
    type = getNamedType(field.type);
  }
  if (!isObjectType(type)) throw new Error(`${type.name} is not an object type.`);
  return type;
}
