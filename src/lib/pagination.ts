import { z } from 'zod';
import { ValidationError } from '../errors/domain.js';
import { isUuid } from './uuid.js';
import { documentedAs } from './validation.js';
import { isoTimestamp } from './time.js';

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

export const limitSchema = z
  .string()
  .regex(/^\d+$/, `The limit must be an integer between 1 and ${MAX_PAGE_SIZE}.`)
  .transform(Number)
  .refine((n) => n >= 1 && n <= MAX_PAGE_SIZE, `The limit must be an integer between 1 and ${MAX_PAGE_SIZE}.`);

/** The position after a row in newest-first order: its creation time and id. */
export interface Cursor {
  createdAt: Date;
  id: string;
}

/**
 * On a row of a page ordered by another key than its creation time (conversations by their last
 * message), the position the page is continued from.
 */
export const PAGE_POSITION = Symbol('pagePosition');

/** The position after `row`: its own creation time and id, unless its page says otherwise (`PAGE_POSITION`). */
export function positionOf(row: Cursor): Cursor {
  return (row as Cursor & { [PAGE_POSITION]?: Cursor })[PAGE_POSITION] ?? row;
}

export function encodeCursor(row: Cursor): string {
  return Buffer.from(`${isoTimestamp(row.createdAt)}|${row.id}`).toString('base64url');
}

const CURSOR_INVALID = 'The cursor is invalid.';

/** Every row was created within these years; a cursor outside them is forged (and PostgreSQL may not hold its date). */
const CURSOR_YEARS = { from: 1970, to: 9999 };

export function decodeCursor(value: string, field = 'cursor'): Cursor {
  const [at, id] = Buffer.from(value, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(at ?? '');
  const year = createdAt.getUTCFullYear();
  if (
    !at ||
    !isUuid(id) ||
    Number.isNaN(createdAt.getTime()) ||
    year < CURSOR_YEARS.from ||
    year > CURSOR_YEARS.to ||
    encodeCursor({ createdAt, id }) !== value
  ) {
    throw ValidationError.field(field, CURSOR_INVALID);
  }
  return { createdAt, id };
}

/** Prisma `where` for rows strictly after the cursor in (createdAt desc, id desc) order. */
export function afterCursor(cursor: Cursor | undefined) {
  if (!cursor) return {};
  return {
    OR: [{ createdAt: { lt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { lt: cursor.id } }],
  };
}

export const NEWEST_FIRST = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
  hasMore: boolean;
  perPage: number;
}

/** Turns `limit + 1` fetched rows into a page and the cursor after its last row. */
export function toPage<T extends Cursor>(rows: T[], limit: number): Page<T> {
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  return { items, hasMore, perPage: limit, nextCursor: hasMore && last ? encodeCursor(positionOf(last)) : null };
}

/** `?cursor=`: the opaque position a previous page handed out; empty means the first page. */
export const cursorSchema = z
  .string()
  .transform((value, ctx): Cursor | undefined => {
    if (value === '') return undefined;
    try {
      return decodeCursor(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: CURSOR_INVALID });
      return z.NEVER;
    }
  })
  .meta({ description: 'The `next_cursor` of the previous page.' });

/** Query-string paging parameters: `limit` 1–100 (default 25), opaque `cursor`. */
export const pageQuerySchema = z.object({
  limit: documentedAs(limitSchema, {
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE_SIZE,
    default: DEFAULT_PAGE_SIZE,
    description: `Page size, 1 to ${MAX_PAGE_SIZE}.`,
  }).default(DEFAULT_PAGE_SIZE),
  cursor: cursorSchema.optional(),
});
