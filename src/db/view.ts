import { Prisma } from '../generated/prisma/client.js';
import { isoTimestamp } from '../lib/time.js';
import type { PrismaQuery } from './query.js';

/** SQL for a timestamp as `Date.prototype.toISOString` writes it (UTC, milliseconds). */
export function isoSql(timestamp: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`to_char(${timestamp} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * SQL building a JSON object with `fields` in their order: a value that is SQL is
 * an expression of the statement, any other value is bound as JSON.
 */
export function jsonObjectSql(fields: Record<string, unknown>): Prisma.Sql {
  const pairs = Object.entries(fields).map(([key, value]) =>
    value instanceof Prisma.Sql ? Prisma.sql`${key}::text, ${value}` : Prisma.sql`${key}::text, ${JSON.stringify(value)}::json`,
  );
  return pairs.length ? Prisma.sql`json_build_object(${Prisma.join(pairs)})` : Prisma.sql`'{}'::json`;
}

/** The column a model field is stored in: the schema maps every camelCase field to its snake_case column. */
export function columnName(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

type FieldName<Row> = keyof Row & string;

/** The keyset every page is ordered and continued by (see `lib/pagination.ts`). */
export const KEYSET = ['id', 'createdAt'] as const;

/**
 * Columns of one table read by name: in a statement's select list, each named as its model field
 * (so that rows come back as Prisma reads them), or as a Prisma `select`. The SQL lists are made
 * once per alias and the unions once per list asked for: a request reuses them.
 */
export class Columns<Row> {
  readonly names: readonly FieldName<Row>[];
  /** The Prisma `select` of these columns. */
  readonly select: Readonly<Record<string, true>>;
  private readonly lists = new Map<string, Prisma.Sql>();
  private bareList: Prisma.Sql | undefined;
  private readonly unions = new WeakMap<readonly string[], Columns<Row>>();

  constructor(names: Iterable<FieldName<Row>>) {
    this.names = [...new Set(names)];
    this.select = Object.freeze(Object.fromEntries(this.names.map((name) => [name, true as const])));
  }

  /**
   * `alias.column AS "field", …` (or without `alias.` when it is empty), for rows read as the model
   * names them; `alias` is an identifier written in code.
   */
  sql(alias = ''): Prisma.Sql {
    let list = this.lists.get(alias);
    if (!list) {
      const prefix = alias ? `${alias}.` : '';
      list = Prisma.raw(
        this.names
          .map((name) => {
            const column = columnName(name);
            return column === name ? `${prefix}${column}` : `${prefix}${column} AS "${name}"`;
          })
          .join(', '),
      );
      this.lists.set(alias, list);
    }
    return list;
  }

  /** `column, …` by their own names, for a statement whose rows a statement around it reads (`sql` then names them). */
  bare(): Prisma.Sql {
    return (this.bareList ??= Prisma.raw(this.names.map(columnName).join(', ')));
  }

  /** These columns and `more` (a list written once in code: the union is kept by it). */
  with(more: readonly FieldName<Row>[]): Columns<Row> {
    let union = this.unions.get(more);
    if (!union) {
      union = more.every((name) => this.names.includes(name)) ? this : new Columns([...this.names, ...more]);
      this.unions.set(more, union);
    }
    return union;
  }
}

/**
 * What a read of rows loads: named columns of the row (a view's, or those a GraphQL type's fields
 * read when its selection loads no relation), or a Prisma query planned with relations.
 */
export type RowLoad<Row> = { readonly columns: Columns<Row> } | { readonly query: PrismaQuery };

/** The Prisma arguments of `load` for a page: named columns with the keyset that orders and continues it. */
export function pageArgs<Row extends { id: string; createdAt: Date }>(load: RowLoad<Row>): PrismaQuery {
  return 'columns' in load ? { select: load.columns.with(KEYSET).select } : load.query;
}

/** One field of a view: what of the row it reads, its value, and the same value built in SQL. */
export interface ViewField<Row, Value> {
  /** The row's fields the value is made of: columns, and the relations `relations` describes. */
  readonly reads: readonly FieldName<Row>[];
  /** Of each relation among `reads`, what is read (a Prisma relation query). */
  readonly relations: Readonly<Record<string, object>> | undefined;
  /** The value, from a row holding `reads`. */
  readonly value: (row: Row) => Value;
  /** SQL yielding the value as JSON over a FROM item `row` with the table's columns; absent where the view is never built in SQL. */
  readonly sql: ((row: Prisma.Sql) => Prisma.Sql) | undefined;
  /** The key is left out of the view when the value is undefined (NULL in SQL). */
  readonly optional: boolean;
  /** The row's field the value is, as it is (`column`). */
  readonly column?: FieldName<Row> | undefined;
}

type TimestampField<Row> = { [K in FieldName<Row>]: Row[K] extends Date | null ? K : never }[FieldName<Row>];

/** The kinds of field a view of `Row` is made of. */
export function viewFields<Row>() {
  return {
    /** A column as it is stored. */
    column<K extends FieldName<Row>>(field: K): ViewField<Row, Row[K]> {
      const column = Prisma.raw(columnName(field));
      return { reads: [field], relations: undefined, value: (row) => row[field], sql: (row) => Prisma.sql`${row}.${column}`, optional: false, column: field };
    },
    /** A timestamp column as ISO 8601 text (`Date.prototype.toISOString`); NULL stays null. */
    timestamp<K extends TimestampField<Row>>(field: K): ViewField<Row, null extends Row[K] ? string | null : string> {
      const column = Prisma.raw(columnName(field));
      return {
        reads: [field],
        relations: undefined,
        value: (row) => {
          const at = row[field] as Date | null;
          return (at === null ? null : isoTimestamp(at)) as null extends Row[K] ? string | null : string;
        },
        sql: (row) => isoSql(Prisma.sql`${row}.${column}`),
        optional: false,
      };
    },
    /**
     * A value made of the fields `reads` names, which is all `value` is given of the row (so that
     * it cannot read anything else); the relations among them are described in `relations`.
     */
    derived<const R extends readonly FieldName<Row>[], Value>(
      reads: R,
      value: (row: Pick<Row, R[number]>) => Value,
      options: { sql?: (row: Prisma.Sql) => Prisma.Sql; relations?: Record<string, object>; optional?: boolean } = {},
    ): ViewField<Row, Value> {
      return { reads, relations: options.relations, value, sql: options.sql, optional: options.optional ?? false };
    },
  };
}

/** A view's fields in the view's order, each giving the value of the view's key it stands under. */
export type ViewFields<Row, View> = { readonly [K in keyof View]-?: ViewField<Row, View[K]> };

/**
 * A domain's view defined once: from its fields come the columns it reads (for the statements of
 * the hot paths and Prisma reads alike), the row → view mapping, and the view built as JSON in
 * SQL (for events a statement writes with its change). `View` is the output of the domain's zod
 * view schema, the OpenAPI source of REST answers: a key missing from either side, or a value of
 * another type, does not compile.
 */
export class ViewTable<Row, View> {
  /** The columns the view reads. */
  readonly columns: Columns<Row>;
  /** The relations the view reads, as a Prisma `include`/`select` of them. */
  readonly relations: Readonly<Record<string, object>>;
  /** A Prisma query reading exactly what the view reads. */
  readonly query: { readonly select: Readonly<Record<string, unknown>> };
  /** The view of a row holding what the view reads (a function of its own: `rows.map(table.view)`). */
  readonly view: (row: Row) => View;
  private readonly keys: string[];
  private readonly values: ((row: Row) => unknown)[];
  private readonly optional: boolean[];
  private readonly json = new Map<string, Prisma.Sql>();

  constructor(readonly fields: ViewFields<Row, View>) {
    const entries = Object.entries(fields) as [string, ViewField<Row, unknown>][];
    const relations: Record<string, object> = {};
    for (const [, field] of entries) Object.assign(relations, field.relations);
    this.relations = Object.freeze(relations);
    this.columns = new Columns(entries.flatMap(([, field]) => field.reads.filter((name) => !(name in relations))));
    this.query = Object.freeze({ select: Object.freeze({ ...this.columns.select, ...relations }) });
    this.keys = entries.map(([key]) => key);
    this.values = entries.map(([, field]) => field.value);
    this.optional = entries.map(([, field]) => field.optional);
    this.view = this.compileView();
  }

  /**
   * The row → view function, written out for this view: one object literal with the view's keys in
   * order (a choice of literals when a field may be absent), each column read off the row by name
   * and each other value from its field. Built once, it costs what a hand-written mapping costs;
   * a loop assigning the keys one by one cost twice that for a page of contacts.
   */
  private compileView(): (row: Row) => View {
    const fields = this.keys.map((key) => this.fields[key as keyof View] as ViewField<Row, unknown>);
    const value = (i: number) => (fields[i]!.column === undefined ? `value[${i}](row)` : `row[${JSON.stringify(fields[i]!.column)}]`);
    const optional = fields.flatMap((field, i) => (field.optional ? [i] : []));
    const literal = (absent: Set<number>) =>
      `{ ${this.keys.flatMap((key, i) => (absent.has(i) ? [] : [`${JSON.stringify(key)}: ${optional.includes(i) ? `optional${i}` : value(i)}`])).join(', ')} }`;
    const choose = (next: number, absent: Set<number>): string => {
      const i = optional[next];
      if (i === undefined) return literal(absent);
      return `(optional${i} === undefined ? ${choose(next + 1, new Set([...absent, i]))} : ${choose(next + 1, absent)})`;
    };
    const body = `${optional.map((i) => `const optional${i} = ${value(i)};`).join(' ')} return ${choose(0, new Set())};`;
    // The source is made of the view's keys and column names (written in code) and indexes.
    return new Function('value', `return (row) => { ${body} };`)(this.values) as (row: Row) => View;
  }

  /** SQL yielding the view as JSON, keys in the view's order, over a FROM item `alias` of the table (written in code). */
  sql(alias: string): Prisma.Sql {
    let json = this.json.get(alias);
    if (!json) {
      const row = Prisma.raw(alias);
      const values = this.keys.map((key) => {
        const field = this.fields[key as keyof View] as ViewField<Row, unknown>;
        if (!field.sql) throw new Error(`The view's field ${key} has no SQL form.`);
        return field.sql(row);
      });
      json = this.objectSql(values, 0, new Set());
      this.json.set(alias, json);
    }
    return json;
  }

  /** The object with every optional field from `from` on present or left out as its value is NULL or not. */
  private objectSql(values: Prisma.Sql[], from: number, absent: Set<number>): Prisma.Sql {
    const next = this.optional.indexOf(true, from);
    if (next < 0) return jsonObjectSql(Object.fromEntries(this.keys.flatMap((key, i) => (absent.has(i) ? [] : [[key, values[i]]]))));
    const without = this.objectSql(values, next + 1, new Set([...absent, next]));
    const present = this.objectSql(values, next + 1, absent);
    return Prisma.sql`CASE WHEN (${values[next]!}) IS NULL THEN ${without} ELSE ${present} END`;
  }
}

/** The view whose fields are `fields` (see `ViewTable`). */
export function viewTable<Row, View>(fields: ViewFields<Row, View>): ViewTable<Row, View> {
  return new ViewTable(fields);
}

/**
 * A to-one relation a statement may read beside its rows by a join: the relation's table, the
 * field of the row holding the related row's `id`, and the relations of that row it may join in
 * turn. Declared by a domain for the reads that join (a page of conversations with its assignee,
 * contact and newest message).
 */
export interface Joinable {
  readonly table: string;
  readonly on: string;
  readonly joins?: Readonly<Record<string, Joinable>>;
}

/** A relation read by a join: what it is, the columns read of its row, and the relations joined beside it. */
export interface JoinedRelation {
  readonly relation: Joinable;
  readonly columns: Columns<Record<string, unknown>>;
  readonly joins: Readonly<Record<string, JoinedRelation>>;
}

/**
 * A read of rows with their to-one relations joined in the same statement: the rows' columns and
 * each relation's. The rows come back as Prisma reads them with the same relations selected
 * (each relation an object of its columns, or null), so that what reads Prisma's rows reads these.
 */
export interface JoinedLoad<Row> {
  readonly columns: Columns<Row>;
  readonly joins: Readonly<Record<string, JoinedRelation>>;
}

/** The SQL of a joined read over a FROM item (see `joinedSql`), and the row → Prisma-shaped row function. */
export interface JoinedSql<Row> {
  /** `alias.column AS "field", …, j1.column AS "relation.field", …`: every column read, rows' and relations'. */
  readonly select: Prisma.Sql;
  /** `LEFT JOIN table AS j1 ON j1.id = alias.column …`: the relations' rows. */
  readonly joins: Prisma.Sql;
  /** The row as Prisma shapes it, from a row the statement read. */
  readonly shape: (row: Record<string, unknown>) => Row;
}

const joinedSqls = new WeakMap<object, Map<string, JoinedSql<unknown>>>();

/**
 * The select list, joins and row shape of `load` over the FROM item `alias` (written in code), made
 * once per load and alias. Each relation is a LEFT JOIN on its row's id (a missing row reads as
 * null); the joined tables are named `j1`, `j2`, … and their columns `"relation.field"`.
 */
export function joinedSql<Row>(load: JoinedLoad<Row>, alias: string): JoinedSql<Row> {
  let byAlias = joinedSqls.get(load);
  if (!byAlias) joinedSqls.set(load, (byAlias = new Map()));
  let built = byAlias.get(alias);
  if (!built) {
    const select: string[] = [];
    const joins: string[] = [];
    let tables = 0;
    /** Walks the relations of one level: its select entries and joins, and the object literal of its row. */
    const level = (columns: Columns<Record<string, unknown>>, from: string, path: string, relations: Readonly<Record<string, JoinedRelation>>): string => {
      const entries = columns.names.map((name) => {
        const key = `${path}${name}`;
        select.push(`${from}.${columnName(name)} AS "${key}"`);
        return `${JSON.stringify(name)}: row[${JSON.stringify(key)}]`;
      });
      for (const [name, joined] of Object.entries(relations)) {
        const table = `j${++tables}`;
        joins.push(`LEFT JOIN ${joined.relation.table} AS ${table} ON ${table}.id = ${from}.${columnName(joined.relation.on)}`);
        const key = `${path}${name}.`;
        // The joined row's id tells a missing row (null) from a row of nulls.
        const columns = joined.columns.names.includes('id') ? joined.columns : new Columns<Record<string, unknown>>(['id', ...joined.columns.names]);
        const literal = level(columns, table, key, joined.joins);
        entries.push(`${JSON.stringify(name)}: row[${JSON.stringify(`${key}id`)}] === null ? null : ${literal}`);
      }
      return `{ ${entries.join(', ')} }`;
    };
    const literal = level(load.columns as unknown as Columns<Record<string, unknown>>, alias, '', load.joins);
    built = {
      select: Prisma.raw(select.join(', ')),
      joins: Prisma.raw(joins.join('\n      ')),
      // The source is made of model field names and relation names (written in code) and aliases.
      shape: new Function(`return (row) => (${literal});`)() as (row: Record<string, unknown>) => unknown,
    };
    byAlias.set(alias, built);
  }
  return built as JoinedSql<Row>;
}
