import { Prisma, type Contact } from '../../generated/prisma/client.js';
import type { RunSql } from '../../db/database.js';
import { Columns, KEYSET, viewFields, viewTable } from '../../db/view.js';
import type { PageRequest } from '../../lib/pagination.js';
import { keysetSql } from '../../db/keyset.js';
import { queueEventsSql } from '../events/events.service.js';
import type { ContactView } from './contacts.schemas.js';

const field = viewFields<Contact>();

/** The API view of a contact (docs/conventions.md, Views); the phone is `phoneNumber` in answers. */
export const contactTable = viewTable<Contact, ContactView>({
  id: field.column('id'),
  name: field.column('name'),
  email: field.column('email'),
  phoneNumber: field.column('phone'),
  isGroup: field.column('isGroup'),
  createdAt: field.timestamp('createdAt'),
  updatedAt: field.timestamp('updatedAt'),
});

/** Every column of a contact, for statements that answer the whole row (a model column missing here does not compile). */
export const CONTACT_ROW = new Columns<Contact>(
  Object.keys({
    id: true,
    workspaceId: true,
    name: true,
    email: true,
    emailNormalized: true,
    phone: true,
    isGroup: true,
    status: true,
    metadata: true,
    deletedAt: true,
    createdAt: true,
    updatedAt: true,
  } satisfies Record<keyof Contact, true>) as (keyof Contact)[],
);

/**
 * GET /contacts without a search (and a GraphQL page of them): a page of the workspace's live
 * contacts with `columns`, one past the limit, in the order `keysetSql` walks them (newest first,
 * or oldest first for a backward page), in one statement.
 */
export async function contactPage(sql: RunSql, workspaceId: string, columns: Columns<Contact>, params: PageRequest): Promise<Contact[]> {
  const keyset = keysetSql(params);
  return sql<Contact>(Prisma.sql`
    SELECT ${columns.with(KEYSET).sql()}
      FROM contacts
     WHERE workspace_id = ${workspaceId}::uuid AND deleted_at IS NULL${keyset.bounds}
     ORDER BY ${keyset.order}
     LIMIT ${params.limit + 1}`);
}

export type ContactChanges = { name?: string | undefined; email?: string | null | undefined; phone?: string | null | undefined };

/**
 * PATCH /contacts/{contact}: applies `changes` to a live contact of the workspace in one
 * statement. The row is locked and read as it was, updated, and `contact.updated` queued from the
 * updated row when a value really changed (only then does `updated_at` move). Null when there is
 * no such contact. The unique indexes decide whether the email is free (a unique violation).
 */
export async function writeContact(sql: RunSql, workspaceId: string, id: string, changes: ContactChanges, at: Date) {
  const value = (field: 'name' | 'email' | 'phone') => (changes[field] !== undefined ? Prisma.sql`${changes[field]}::text` : Prisma.raw(`previous.${field}`));
  const set = [
    ...(changes.name !== undefined ? [Prisma.sql`name = ${value('name')}`] : []),
    ...(changes.email !== undefined ? [Prisma.sql`email = ${value('email')}, email_normalized = ${changes.email?.toLowerCase() ?? null}`] : []),
    ...(changes.phone !== undefined ? [Prisma.sql`phone = ${value('phone')}`] : []),
    // Moves only when a value changes, taken by the database under the row lock: the last
    // write to commit has the latest time, never earlier than the one it replaced.
    Prisma.sql`updated_at = CASE WHEN (${value('name')}, ${value('email')}, ${value('phone')}) IS DISTINCT FROM (previous.name, previous.email, previous.phone)
      THEN greatest(clock_timestamp(), previous.updated_at) ELSE previous.updated_at END`,
  ];
  const event = queueEventsSql(workspaceId, [{ type: 'contact.updated', data: contactTable.sql('updated') }], at, Prisma.sql`(SELECT * FROM updated WHERE changed) AS updated`);
  const [row] = await sql<Contact & { queued: number }>(Prisma.sql`
    WITH previous AS (
      SELECT id, name, email, phone, updated_at FROM contacts
       WHERE id = ${id}::uuid AND workspace_id = ${workspaceId}::uuid AND deleted_at IS NULL
         FOR UPDATE),
    updated AS (
      UPDATE contacts AS contact SET ${Prisma.join(set)}
        FROM previous
       WHERE contact.id = previous.id
      RETURNING contact.*, (contact.name, contact.email, contact.phone) IS DISTINCT FROM (previous.name, previous.email, previous.phone) AS changed),
    queued AS (${event} RETURNING 1)
    SELECT ${CONTACT_ROW.sql('updated')}, (SELECT count(*) FROM queued)::int AS queued FROM updated`);
  if (!row) return null;
  const { queued, ...contact } = row;
  return { contact: contact as Contact, queued };
}
