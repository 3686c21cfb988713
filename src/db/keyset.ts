import { Prisma } from '../generated/prisma/client.js';
import type { PageRequest } from '../lib/pagination.js';

const NEWEST_FIRST = Prisma.raw('created_at DESC, id DESC');
const OLDEST_FIRST = Prisma.raw('created_at ASC, id ASC');

/**
 * The keyset of a page in SQL, over a table with `created_at` and `id` (`alias` written in code):
 * its bounds, each one row comparison (`AND …`, to follow a WHERE), so that the walk starts at
 * the cursor in the page index; and its order, newest first or, for a backward page, oldest first
 * (the same index walked the other way; `toPage` flips the rows).
 */
export function keysetSql(page: PageRequest, alias = ''): { bounds: Prisma.Sql; order: Prisma.Sql } {
  const prefix = alias ? `${alias}.` : '';
  const row = Prisma.raw(`(${prefix}created_at, ${prefix}id)`);
  const after = page.cursor ? Prisma.sql` AND ${row} < (${page.cursor.createdAt}::timestamptz, ${page.cursor.id}::uuid)` : Prisma.empty;
  const before = page.before ? Prisma.sql` AND ${row} > (${page.before.createdAt}::timestamptz, ${page.before.id}::uuid)` : Prisma.empty;
  const order = alias ? Prisma.raw(page.backward ? `${prefix}created_at ASC, ${prefix}id ASC` : `${prefix}created_at DESC, ${prefix}id DESC`) : page.backward ? OLDEST_FIRST : NEWEST_FIRST;
  return { bounds: Prisma.sql`${after}${before}`, order };
}
