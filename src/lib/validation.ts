import { z } from 'zod';
import { isUuid } from './uuid.js';
import { ValidationError } from '../errors/domain.js';

/** PostgreSQL cannot store U+0000 in text; a value holding it is the caller's error, not ours. */
const UNSTORABLE = '\u0000';

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (UTF-16 code units). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const unstorableMessage = (field: string) => `The ${field} field must not contain a NUL character (U+0000).`;

export const unpairedSurrogateMessage = (field: string) =>
  `The ${field} field must not contain an unpaired UTF-16 surrogate (a lone \\ud800–\\udfff escape): it has no UTF-8 form to store.`;

/**
 * Request field paths (`to.email`, `media_urls.0`) of every string in `value` that cannot be
 * stored exactly as sent, each with its message: U+0000, and an unpaired UTF-16 surrogate, which
 * UTF-8 would turn into U+FFFD.
 */
export function unstorablePaths(value: unknown, path: string[] = []): [string, string][] {
  if (typeof value === 'string') {
    const field = path.join('.') || 'body';
    if (value.includes(UNSTORABLE)) return [[field, unstorableMessage(field)]];
    return LONE_SURROGATE.test(value) ? [[field, unpairedSurrogateMessage(field)]] : [];
  }
  if (Array.isArray(value)) return value.flatMap((item, i) => unstorablePaths(item, [...path, String(i)]));
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.entries(value).flatMap(([key, item]) => unstorablePaths(item, [...path, key]));
  }
  return [];
}

/**
 * Parses input with a schema; on failure throws a ValidationError whose keys are
 * request field paths (`template.parameters`, `media_urls.0`) and `body` for a
 * fault of the body as a whole. Every input of both transports passes here, so
 * this is also where a string the database cannot store is refused: the parsed
 * output is what reaches SQL, and its paths are the request's (ignored fields
 * are not in it, so they stay ignored).
 */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const result = schema.safeParse(input);
  if (result.success) {
    const unstorable = unstorablePaths(result.data);
    if (unstorable.length) throw new ValidationError(Object.fromEntries(unstorable.map(([key, message]) => [key, [message]])));
    return result.data;
  }
  const errors: Record<string, string[]> = {};
  for (const issue of result.error.issues) {
    const key = issue.path.length ? issue.path.map(String).join('.') : 'body';
    const list = (errors[key] ??= []);
    if (!list.includes(issue.message)) list.push(issue.message);
  }
  throw new ValidationError(errors);
}

/** Characters as people count them (code points), not UTF-16 units: the measure of every length limit. */
/** A JSON object: not null, not an array. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const characterCount = (value: string) => Array.from(value).length;

/** An optional query parameter that must be a UUID, with its message. */
export function uuidParam(name: string) {
  return z.string().refine(isUuid, `The ${name} must be a UUID.`).meta({ format: 'uuid' }).optional();
}

/** A record's entries without the null ones: for fields where null means absent. */
export function withoutNulls(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
}

/** JSON Schema, as the OpenAPI document shows a request field. */
export type JsonSchema = Record<string, unknown>;

const inputDocumentation = new WeakMap<object, JsonSchema>();
const rendered = new WeakMap<object, JsonSchema>();

/**
 * Records what a schema accepts where zod cannot see it from the schema itself (a
 * transform over unknown input), so the OpenAPI document shows the field as
 * requests may send it. Validation is unchanged.
 */
export function documentedAs<T extends z.ZodType>(schema: T, accepts: JsonSchema | z.ZodType): T {
  inputDocumentation.set(schema, accepts instanceof z.ZodType ? inputJsonSchema(accepts) : accepts);
  return schema;
}

/** A schema's request-side JSON Schema: its recorded documentation, or zod's rendering of its input. */
export function inputJsonSchema(schema: z.ZodType): JsonSchema {
  const known = inputDocumentation.get(schema) ?? rendered.get(schema);
  if (known) return known;
  // Rendered once per schema: schemas built per request (an update's, around the
  // stored values) reuse their fields' renderings.
  const { $schema: _, ...json } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => replaceWithDocumentation(zodSchema, jsonSchema),
  });
  rendered.set(schema, json);
  return json;
}

/** Replaces a rendered JSON Schema in place by the documentation recorded for its schema, if any. */
export function replaceWithDocumentation(schema: object, rendered: JsonSchema): void {
  const recorded = inputDocumentation.get(schema);
  if (!recorded) return;
  for (const key of Object.keys(rendered)) delete rendered[key];
  Object.assign(rendered, structuredClone(recorded));
}

/**
 * A rendered object schema whose optional fields, and those of objects inside
 * them, also accept null: for request bodies where null means absent.
 */
export function nullMeansAbsent(schema: JsonSchema): JsonSchema {
  const withNull = (field: JsonSchema): JsonSchema => {
    visit(field);
    if (typeof field.type === 'string' && !field.anyOf) {
      return { ...field, type: [field.type, 'null'], ...(Array.isArray(field.enum) ? { enum: [...field.enum, null] } : {}) };
    }
    const { description, default: fallback, ...rest } = field;
    return { ...(description === undefined ? {} : { description }), ...(fallback === undefined ? {} : { default: fallback }), anyOf: [rest, { type: 'null' }] };
  };
  const visit = (node: JsonSchema) => {
    if (Array.isArray(node.anyOf)) (node.anyOf as JsonSchema[]).forEach(visit);
    const fields = node.properties as Record<string, JsonSchema> | undefined;
    const required = new Set((node.required as string[] | undefined) ?? []);
    if (fields) for (const key of Object.keys(fields)) fields[key] = required.has(key) ? (visit(fields[key]!), fields[key]!) : withNull(fields[key]!);
  };
  const copy = structuredClone(schema);
  visit(copy);
  return copy;
}
