import { z } from 'zod';
import { isUuid } from './uuid.js';
import { ValidationError } from '../errors/domain.js';

/**
 * Parses input with a schema; on failure throws a ValidationError whose keys are
 * request field paths (`template.parameters`, `media_urls.0`) and `body` for a
 * fault of the body as a whole.
 */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const errors: Record<string, string[]> = {};
  for (const issue of result.error.issues) {
    const key = issue.path.length ? issue.path.map(String).join('.') : 'body';
    const list = (errors[key] ??= []);
    if (!list.includes(issue.message)) list.push(issue.message);
  }
  throw new ValidationError(errors);
}

/** An optional query parameter that must be a UUID, with its message. */
export function uuidParam(name: string) {
  return z.string().refine(isUuid, `The ${name} must be a UUID.`).optional();
}
