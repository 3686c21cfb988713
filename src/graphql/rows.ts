import { getModel } from '@pothos/plugin-prisma';
import { getNamedType, isObjectType, type GraphQLObjectType, type GraphQLResolveInfo, type GraphQLSchema } from 'graphql';
import { Columns, type RowLoad, type ViewTable } from '../db/view.js';
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

/**
 * How a connection field loads the rows of its page (its nodes): the columns their type's fields
 * read when the selection loads no relation, otherwise the query Pothos planned for the relations.
 * Made once per field, it works the columns out on its first call and keeps them.
 */
export function pageLoader<Row>(): (ctx: GraphQLContext, info: GraphQLResolveInfo) => RowLoad<Row> {
  let columns: { columns: Columns<Row> } | undefined;
  return (ctx, info) => {
    const query = selectionQuery(ctx, info, NODES);
    // A type in include mode is planned as `{}` until a relation is selected.
    if (query.include || query.select) return { query };
    return (columns ??= { columns: rowColumns<Row>(nodeType(info)) });
  };
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
