import { z } from 'zod';
import { isUuid } from './uuid.js';
import { ValidationError } from '../errors/domain.js';

/** PostgreSQL cannot store U+0000 in text; a value holding it is the caller's error, not ours. */
const UNSTORABLE = '\u0000';

export const unstorableMessage = (field: string) => `The ${field} field must not contain a NUL character (U+0000).`;

/** Request field paths (`to.email`, `media_urls.0`) of every string in `value` that holds U+0000. */
export function unstorablePaths(value: unknown, path: string[] = []): string[] {
  if (typeof value === 'string') return value.includes(UNSTORABLE) ? [path.join('.') || 'body'] : [];
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
    if (unstorable.length) throw new ValidationError(Object.fromEntries(unstorable.map((key) => [key, [unstorableMessage(key)]])));
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
export const characterCount = (value: string) => Array.from(value).length;

/** An optional query parameter that must be a UUID, with its message. */
export function uuidParam(name: string) {
  return z.string().refine(isUuid, `The ${name} must be a UUID.`).optional();
}

/** A record's entries without the null ones: for fields where null means absent. */
export function withoutNulls(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
}
