import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { SqlSession } from '../../src/db/database.js';

/**
 * Compares a migrated database with prisma/schema.prisma: extensions, tables,
 * columns (type, length, precision, nullability), enums, primary keys, unique and
 * plain indexes (columns, order, method, operator classes, partial predicate) and
 * foreign keys. Returns one line per difference; an empty list means they agree.
 *
 * The model comes from Prisma's own schema parser (DMMF). The DMMF omits
 * Unsupported fields, partial-index predicates and the datasource's extensions,
 * so those are read from the schema text.
 */

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: 'scalar' | 'enum' | 'object' | 'unsupported';
  type: string;
  isList: boolean;
  isRequired: boolean;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
interface DmmfIndex {
  model: string;
  type: 'id' | 'unique' | 'normal' | 'fulltext';
  dbName?: string | null;
  algorithm?: string;
  fields: { name: string; sortOrder?: 'asc' | 'desc'; operatorClass?: string }[];
}
interface Dmmf {
  models: DmmfModel[];
  enums: { name: string; dbName: string | null; values: { name: string; dbName: string | null }[] }[];
  indexes: DmmfIndex[];
}

export const SCHEMA_PATH = new URL('../../prisma/schema.prisma', import.meta.url);

export function loadDmmf(schemaText = fs.readFileSync(SCHEMA_PATH, 'utf8')): Dmmf {
  const wasm = createRequire(import.meta.url)('@prisma/prisma-schema-wasm') as { get_dmmf(params: string): string };
  return JSON.parse(wasm.get_dmmf(JSON.stringify({ prismaSchema: [['schema.prisma', schemaText]] }))).datamodel;
}

/** Unsupported fields and partial-index predicates, per model, from the schema text. */
function readSchemaText(schemaText: string) {
  const unsupported = new Map<string, DmmfField[]>();
  const predicates = new Map<string, string>();
  for (const block of schemaText.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)) {
    const [, model, body] = block as unknown as [string, string, string];
    for (const line of body.split('\n')) {
      const field = /^\s*(\w+)\s+Unsupported\("([^"]+)"\)(\?)?(.*)$/.exec(line);
      if (field) {
        const list = unsupported.get(model) ?? [];
        list.push({
          name: field[1]!,
          dbName: /@map\("([^"]+)"\)/.exec(field[4]!)?.[1] ?? null,
          kind: 'unsupported',
          type: field[2]!,
          isList: false,
          isRequired: !field[3],
        });
        unsupported.set(model, list);
      }
      const where = /where:\s*raw\("((?:[^"\\]|\\.)*)"\)/.exec(line);
      if (where) {
        const name = /map:\s*"([^"]+)"/.exec(line)?.[1];
        predicates.set(name ?? `${model}: a partial index without map: name`, where[1]!.replace(/\\"/g, '"'));
      }
    }
  }
  // `extensions = [pg_trgm, postgis(version: "3.4"), citext(map: "ci")]` in the datasource block.
  const extensions = new Set<string>();
  const datasource = /^datasource\s+\w+\s*\{([\s\S]*?)^\}/m.exec(schemaText)?.[1] ?? '';
  const list = /^\s*extensions\s*=\s*\[([^\]]*)\]/m.exec(datasource)?.[1] ?? '';
  for (const entry of list.matchAll(/(\w+)(?:\(([^)]*)\))?/g)) {
    extensions.add(/map:\s*"([^"]+)"/.exec(entry[2] ?? '')?.[1] ?? entry[1]!);
  }
  return { unsupported, predicates, extensions };
}

const normalisePredicate = (sql: string) =>
  sql
    .toLowerCase()
    .replace(/::[a-z_ ]+/g, '')
    .replace(/[()"]/g, '')
    .replace(/\s+/g, ' ')
    .trim();

function expectedType(field: DmmfField, enumDbNames: Map<string, string>): string {
  if (field.isList) return `${expectedType({ ...field, isList: false }, enumDbNames)}[]`;
  if (field.kind === 'unsupported') return field.type;
  if (field.kind === 'enum') return enumDbNames.get(field.type) ?? field.type;
  const [native, args = []] = field.nativeType ?? [];
  switch (field.type) {
    case 'String':
      if (native === 'VarChar') return `varchar(${args[0]})`;
      if (native === 'Char') return `char(${args[0]})`;
      if (native === 'Uuid') return 'uuid';
      return 'text';
    case 'DateTime':
      return native === 'Timestamptz' ? `timestamptz(${args[0] ?? 6})` : `timestamp(${args[0] ?? 3})`;
    case 'Int':
      return native === 'SmallInt' ? 'int2' : 'int4';
    case 'BigInt':
      return 'int8';
    case 'Boolean':
      return 'bool';
    case 'Json':
      return native === 'Json' ? 'json' : 'jsonb';
    case 'Float':
      return 'float8';
    case 'Bytes':
      return 'bytea';
    default:
      return field.type;
  }
}

interface DbColumn {
  table_name: string;
  column_name: string;
  udt_name: string;
  is_nullable: 'YES' | 'NO';
  character_maximum_length: number | null;
  datetime_precision: number | null;
}

function actualType(column: DbColumn): string {
  const array = column.udt_name.startsWith('_');
  const udt = array ? column.udt_name.slice(1) : column.udt_name;
  let type = udt;
  if (udt === 'varchar' || udt === 'bpchar') {
    type = `${udt === 'varchar' ? 'varchar' : 'char'}${column.character_maximum_length ? `(${column.character_maximum_length})` : ''}`;
  } else if (udt === 'timestamptz' || udt === 'timestamp') {
    type = `${udt}(${column.datetime_precision})`;
  }
  return array ? `${type}[]` : type;
}

const ON_DELETE: Record<string, string> = {
  Cascade: 'CASCADE',
  SetNull: 'SET NULL',
  Restrict: 'RESTRICT',
  NoAction: 'NO ACTION',
  SetDefault: 'SET DEFAULT',
};

export async function diffDatabaseAgainstSchema(session: SqlSession, schemaText = fs.readFileSync(SCHEMA_PATH, 'utf8')) {
  const dmmf = loadDmmf(schemaText);
  const { unsupported, predicates, extensions } = readSchemaText(schemaText);
  const differences: string[] = [];
  const enumDbNames = new Map(dmmf.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const tableOf = new Map(dmmf.models.map((m) => [m.name, m.dbName ?? m.name]));
  const columnOf = (model: DmmfModel, fieldName: string) => {
    const field = [...model.fields, ...(unsupported.get(model.name) ?? [])].find((f) => f.name === fieldName);
    return field?.dbName ?? fieldName;
  };

  // Extensions (plpgsql is in every database).
  const dbExtensions = await session.query<{ name: string }>(`SELECT extname AS name FROM pg_extension WHERE extname <> 'plpgsql'`);
  const extensionsLeft = new Set(dbExtensions.map((e) => e.name));
  for (const name of extensions) if (!extensionsLeft.delete(name)) differences.push(`extension ${name} is missing`);
  for (const extra of extensionsLeft) differences.push(`extension ${extra} is not in the schema`);

  // Tables and columns.
  const columns = await session.query<DbColumn>(
    `SELECT table_name, column_name, udt_name, is_nullable, character_maximum_length, datetime_precision
       FROM information_schema.columns WHERE table_schema = current_schema() AND table_name <> '_prisma_migrations'`,
  );
  const dbTables = new Set(columns.map((c) => c.table_name));
  for (const model of dmmf.models) {
    const table = tableOf.get(model.name)!;
    if (!dbTables.delete(table)) {
      differences.push(`table ${table} (model ${model.name}) is missing`);
      continue;
    }
    const dbColumns = new Map(columns.filter((c) => c.table_name === table).map((c) => [c.column_name, c]));
    const fields = [...model.fields.filter((f) => f.kind === 'scalar' || f.kind === 'enum'), ...(unsupported.get(model.name) ?? [])];
    for (const field of fields) {
      const name = field.dbName ?? field.name;
      const column = dbColumns.get(name);
      dbColumns.delete(name);
      if (!column) {
        differences.push(`column ${table}.${name} is missing`);
        continue;
      }
      const want = expectedType(field, enumDbNames);
      const have = actualType(column);
      if (want !== have) differences.push(`column ${table}.${name} is ${have}, schema says ${want}`);
      // Prisma leaves scalar lists nullable in PostgreSQL; every other required field is NOT NULL.
      const wantNullable = field.isList || !field.isRequired;
      if (wantNullable !== (column.is_nullable === 'YES')) {
        differences.push(`column ${table}.${name} is ${column.is_nullable === 'YES' ? 'nullable' : 'NOT NULL'}, schema says ${wantNullable ? 'nullable' : 'required'}`);
      }
    }
    for (const extra of dbColumns.keys()) differences.push(`column ${table}.${extra} is not in the schema`);
  }
  for (const extra of dbTables) differences.push(`table ${extra} is not in the schema`);

  // Enums.
  const dbEnums = await session.query<{ name: string; labels: string[] }>(
    `SELECT t.typname AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
       FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname = current_schema() GROUP BY t.typname`,
  );
  const enumsLeft = new Map(dbEnums.map((e) => [e.name, e.labels]));
  for (const e of dmmf.enums) {
    const name = e.dbName ?? e.name;
    const labels = enumsLeft.get(name);
    enumsLeft.delete(name);
    const want = e.values.map((v) => v.dbName ?? v.name);
    if (!labels) differences.push(`enum ${name} is missing`);
    else if (JSON.stringify(labels) !== JSON.stringify(want)) differences.push(`enum ${name} is (${labels}), schema says (${want})`);
  }
  for (const extra of enumsLeft.keys()) differences.push(`enum ${extra} is not in the schema`);

  // Indexes, primary keys included.
  const dbIndexes = await session.query<{
    table: string;
    name: string;
    unique: boolean;
    primary: boolean;
    method: string;
    predicate: string | null;
    keys: string[];
    /** Per key column: its operator class, or null for its type's default one. */
    opclasses: (string | null)[];
  }>(
    `SELECT t.relname AS "table", i.relname AS name, ix.indisunique AS "unique", ix.indisprimary AS "primary",
            am.amname AS method, pg_get_expr(ix.indpred, ix.indrelid) AS predicate,
            array(SELECT pg_get_indexdef(ix.indexrelid, k, true) || CASE WHEN ix.indoption[k - 1] & 1 = 1 THEN ' DESC' ELSE '' END
                    FROM generate_series(1, ix.indnkeyatts) AS k ORDER BY k) AS keys,
            array(SELECT CASE WHEN opc.opcdefault THEN NULL ELSE opc.opcname::text END
                    FROM generate_series(1, ix.indnkeyatts) AS k JOIN pg_opclass opc ON opc.oid = ix.indclass[k - 1] ORDER BY k) AS opclasses
       FROM pg_index ix
       JOIN pg_class i ON i.oid = ix.indexrelid
       JOIN pg_class t ON t.oid = ix.indrelid
       JOIN pg_am am ON am.oid = i.relam
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = current_schema() AND t.relname <> '_prisma_migrations'`,
  );
  const indexesLeft = new Map(dbIndexes.map((i) => [i.name, i]));
  for (const index of dmmf.indexes) {
    const model = dmmf.models.find((m) => m.name === index.model)!;
    const table = tableOf.get(model.name)!;
    const cols = index.fields.map((f) => columnOf(model, f.name));
    const suffix = index.type === 'id' ? 'pkey' : index.type === 'unique' ? 'key' : 'idx';
    const name = index.dbName ?? (index.type === 'id' ? `${table}_pkey` : `${table}_${cols.join('_')}_${suffix}`);
    const actual = indexesLeft.get(name);
    indexesLeft.delete(name);
    if (!actual) {
      differences.push(`index ${name} on ${table}(${cols}) is missing`);
      continue;
    }
    const wantKeys = index.fields.map((f, i) => `${cols[i]}${f.sortOrder === 'desc' ? ' DESC' : ''}`);
    const haveKeys = actual.keys.map((k) => k.replace(/"/g, ''));
    if (JSON.stringify(haveKeys) !== JSON.stringify(wantKeys)) differences.push(`index ${name} is on (${haveKeys}), schema says (${wantKeys})`);
    if (actual.table !== table) differences.push(`index ${name} is on table ${actual.table}, schema says ${table}`);
    if (actual.primary !== (index.type === 'id')) differences.push(`index ${name}: primary key mismatch`);
    if (actual.unique !== (index.type === 'id' || index.type === 'unique')) {
      differences.push(`index ${name} is ${actual.unique ? 'unique' : 'not unique'}, schema says ${index.type}`);
    }
    // Prisma names operator classes `JsonbPathOps` or raw("gin_trgm_ops"); PostgreSQL `jsonb_path_ops`.
    const opclass = (op: string | null | undefined) => op?.replace(/_/g, '').toLowerCase() ?? '(default)';
    const wantOps = index.fields.map((f) => opclass(f.operatorClass));
    const haveOps = actual.opclasses.map(opclass);
    if (JSON.stringify(haveOps) !== JSON.stringify(wantOps)) differences.push(`index ${name} uses operator classes (${haveOps}), schema says (${wantOps})`);
    const wantMethod = (index.algorithm ?? 'BTree').toLowerCase();
    if (actual.method !== wantMethod) differences.push(`index ${name} uses ${actual.method}, schema says ${wantMethod}`);
    const wantPredicate = predicates.get(name);
    predicates.delete(name);
    const havePredicate = actual.predicate;
    if ((wantPredicate ?? null) === null ? havePredicate !== null : normalisePredicate(wantPredicate!) !== normalisePredicate(havePredicate ?? '')) {
      differences.push(`index ${name} has predicate ${havePredicate ?? '(none)'}, schema says ${wantPredicate ?? '(none)'}`);
    }
  }
  for (const orphan of predicates.keys()) differences.push(`partial index ${orphan} of the schema matches no index`);
  for (const extra of indexesLeft.keys()) differences.push(`index ${extra} is not in the schema`);

  // Foreign keys.
  const dbForeignKeys = await session.query<{ table: string; definition: string }>(
    `SELECT c.conrelid::regclass::text AS "table", pg_get_constraintdef(c.oid) AS definition
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE c.contype = 'f' AND n.nspname = current_schema()`,
  );
  const fkLeft = new Set(dbForeignKeys.map((fk) => `${fk.table.replace(/"/g, '')}: ${normaliseForeignKey(fk.definition)}`));
  for (const model of dmmf.models) {
    for (const field of model.fields.filter((f) => f.kind === 'object' && f.relationFromFields?.length)) {
      const target = dmmf.models.find((m) => m.name === field.type)!;
      const from = field.relationFromFields!.map((f) => columnOf(model, f));
      const to = field.relationToFields!.map((f) => columnOf(target, f));
      const onDelete = ON_DELETE[field.relationOnDelete ?? (field.isRequired ? 'Restrict' : 'SetNull')];
      const key = `${tableOf.get(model.name)}: (${from}) -> ${tableOf.get(target.name)}(${to}) on delete ${onDelete}`;
      if (!fkLeft.delete(key)) differences.push(`foreign key ${key} is missing`);
    }
  }
  for (const extra of fkLeft) differences.push(`foreign key ${extra} is not in the schema`);

  return differences;
}

function normaliseForeignKey(definition: string): string {
  const match = /FOREIGN KEY \((.+?)\) REFERENCES (.+?)\((.+?)\)(.*)$/.exec(definition.replace(/"/g, ''));
  if (!match) return definition;
  const onDelete = /ON DELETE (CASCADE|SET NULL|RESTRICT|SET DEFAULT)/.exec(match[4]!)?.[1] ?? 'NO ACTION';
  return `(${match[1]!.replace(/\s/g, '')}) -> ${match[2]}(${match[3]!.replace(/\s/g, '')}) on delete ${onDelete}`;
}
