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

/** Prisma `where` for rows strictly before the cursor in (createdAt desc, id desc) order: newer ones. */
export function beforeCursor(cursor: Cursor | undefined) {
  if (!cursor) return {};
  return {
    OR: [{ createdAt: { gt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { gt: cursor.id } }],
  };
}

export const NEWEST_FIRST = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];
export const OLDEST_FIRST = [{ createdAt: 'asc' as const }, { id: 'asc' as const }];

/**
 * A page asked for, of a list ordered newest first: `limit` rows within the bounds, from the
 * bounded list's start (forward) or from its end (`backward`). A backward page is read oldest
 * first, the keyset walked the other way, and flipped (`toPage`), so both directions are one walk
 * of the same index.
 */
export interface PageRequest {
  limit: number;
  /** Only rows after this position (older ones): REST's `cursor`, GraphQL's `after`. */
  cursor?: Cursor | undefined;
  /** Only rows before this position (newer ones): GraphQL's `before`. */
  before?: Cursor | undefined;
  /** The last `limit` rows within the bounds rather than the first (GraphQL's `last`). */
  backward?: boolean | undefined;
}

/** Prisma `where` for the rows within a page's bounds. */
export function keysetWhere(page: PageRequest) {
  if (!page.before) return afterCursor(page.cursor);
  if (!page.cursor) return beforeCursor(page.before);
  return { AND: [afterCursor(page.cursor), beforeCursor(page.before)] };
}

/** The order a page's rows are read in: newest first, or oldest first for a backward page. */
export function keysetOrder(page: PageRequest) {
  return page.backward ? OLDEST_FIRST : NEWEST_FIRST;
}

export interface Page<T> {
  /** Newest first, whichever way the page was read. */
  items: T[];
  nextCursor: string | null;
  /** Rows follow the page (older ones). */
  hasMore: boolean;
  /** Rows precede the page (newer ones). */
  hasPrevious: boolean;
  perPage: number;
}

/**
 * Turns the `limit + 1` rows read for a page, in the order they were read (`keysetOrder`), into
 * the page, newest first. The extra row tells whether more follow in the direction of reading;
 * the other way, rows lie beyond the page exactly when it starts at a cursor (Relay's
 * `hasPreviousPage` of a forward page, `hasNextPage` of a backward one): the cursor's own row at
 * least, unless it was deleted since.
 */
export function toPage<T extends Cursor>(rows: T[], page: PageRequest | number): Page<T> {
  const request: PageRequest = typeof page === 'number' ? { limit: page } : page;
  const { limit } = request;
  const beyond = rows.length > limit;
  if (request.backward) {
    const items = rows.slice(0, limit).reverse();
    const hasMore = request.before !== undefined;
    const last = items[items.length - 1];
    return { items, hasMore, hasPrevious: beyond, perPage: limit, nextCursor: hasMore && last ? encodeCursor(positionOf(last)) : null };
  }
  const items = beyond ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  return { items, hasMore: beyond, hasPrevious: request.cursor !== undefined, perPage: limit, nextCursor: beyond && last ? encodeCursor(positionOf(last)) : null };
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
