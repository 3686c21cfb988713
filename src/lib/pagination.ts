import { z } from 'zod';
import { ValidationError } from '../errors/domain.js';
import { isUuid } from './uuid.js';

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

export function encodeCursor(row: Cursor): string {
  return Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString('base64url');
}

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
    throw ValidationError.field(field, 'The cursor is invalid.');
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
  return { items, hasMore, perPage: limit, nextCursor: hasMore && last ? encodeCursor(last) : null };
}

/** Query-string paging parameters, validated: `limit` 1–100 (default 25), opaque `cursor`. */
export function pageParams(query: URLSearchParams): { limit: number; cursor: Cursor | undefined } {
  const rawLimit = query.get('limit');
  let limit = DEFAULT_PAGE_SIZE;
  if (rawLimit !== null) {
    const parsed = limitSchema.safeParse(rawLimit);
    if (!parsed.success) throw ValidationError.field('limit', parsed.error.issues[0]!.message);
    limit = parsed.data;
  }
  const rawCursor = query.get('cursor');
  return { limit, cursor: rawCursor ? decodeCursor(rawCursor) : undefined };
}
