import { z } from 'zod';
import { apiUuid } from '../../rest/schemas.js';

export const templateStatusSchema = z.enum(['approved', 'pending', 'rejected'], {
  error: 'must be one of approved, pending, rejected',
});

export const templateLanguageSchema = z
  .string()
  .trim()
  .regex(/^[a-z]{2,3}([_-][A-Za-z0-9]{2,8})*$/, 'must be a language code such as en or pt_BR')
  .max(16, 'must be at most 16 characters');

const PLACEHOLDER = /\{\{\s*(\d+)\s*\}\}/g;

/**
 * The number of parameters a template body takes. Placeholders are numbered
 * {{1}}…{{n}} without gaps; a body breaking that rule is rejected.
 */
export function countParameters(body: string): { count: number } | { error: string } {
  const numbers = new Set([...body.matchAll(PLACEHOLDER)].map((m) => Number(m[1])));
  const sorted = [...numbers].sort((a, b) => a - b);
  if (sorted.some((n, i) => n !== i + 1)) {
    return { error: `placeholders must be numbered {{1}} to {{${sorted.length}}} without gaps` };
  }
  return { count: sorted.length };
}

/** Fills {{n}} placeholders with their parameters. */
export function renderTemplate(body: string, parameters: string[]): string {
  return body.replace(PLACEHOLDER, (_, n: string) => parameters[Number(n) - 1] ?? '');
}

/** The API view of a channel template. */
export const templateViewSchema = z
  .object({
    id: apiUuid,
    name: z.string(),
    language: z.string(),
    category: z.string(),
    status: z.enum(['approved', 'pending', 'rejected']),
    body: z.string().meta({ description: 'The text with `{{1}}`, `{{2}}`… placeholders.' }),
    parameterCount: z.int().meta({ description: 'How many parameters a send must give.' }),
  })
  .meta({ id: 'Template' });

export type TemplateView = z.output<typeof templateViewSchema>;
