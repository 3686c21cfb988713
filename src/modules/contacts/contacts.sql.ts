import { Prisma, type Contact } from '../../generated/prisma/client.js';
import type { RunSql } from '../../db/database.js';
import { Columns, KEYSET, isoSql, viewFields, viewTable } from '../../db/view.js';
import { isoTimestamp } from '../../lib/time.js';
import type { PageRequest } from '../../lib/pagination.js';
import { keysetSql } from '../../db/keyset.js';
import { queueEventsSql } from '../events/events.service.js';
import type { ContactView } from './contacts.schemas.js';

/** An opt-out as a contact row holds it: read by Prisma (`at` a Date) or built as JSON by a statement (`at` already ISO text). */
export type OptOutRow = { channelId: string; at: Date | string; source: string };

/** A contact with its opt-outs: what the view is made of. */
export type ContactRow = Contact & { optOuts: OptOutRow[] };

/** A contact just created has opted out of nothing. */
export const withoutOptOuts = (contact: Contact): ContactRow => ({ ...contact, optOuts: [] });

/** The opt-outs of the contact `row` (a FROM item of contacts) as a JSON array, oldest first. */
export const optOutsSql = (row: Prisma.Sql) => Prisma.sql`coalesce((
  SELECT json_agg(json_build_object('channelId', opt_out.channel_id, 'at', ${isoSql(Prisma.sql`opt_out.at`)}, 'source', opt_out.source)
                  ORDER BY opt_out.at, opt_out.channel_id)
    FROM contact_opt_outs AS opt_out WHERE opt_out.contact_id = ${row}.id), '[]'::json)`;

/** What a Prisma read selects of a contact's opt-outs. */
export const OPT_OUTS_QUERY = { select: { channelId: true, at: true, source: true }, orderBy: [{ at: 'asc' }, { channelId: 'asc' }] } as const;

const field = viewFields<ContactRow>();

/** The API view of a contact (docs/conventions.md, Views); the phone is `phoneNumber` in answers. */
export const contactTable = viewTable<ContactRow, ContactView>({
  id: field.column('id'),
  name: field.column('name'),
  email: field.column('email'),
  phoneNumber: field.column('phone'),
  isGroup: field.column('isGroup'),
  createdAt: field.timestamp('createdAt'),
  updatedAt: field.timestamp('updatedAt'),
  optOuts: field.derived(
    ['optOuts'],
    (contact) =>
      contact.optOuts.map((optOut) => ({
        channelId: optOut.channelId,
        at: typeof optOut.at === 'string' ? optOut.at : isoTimestamp(optOut.at),
        source: optOut.source as 'keyword' | 'provider',
      })),
    { relations: { optOuts: OPT_OUTS_QUERY }, sql: optOutsSql },
  ),
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
export async function contactPage(
  sql: RunSql,
  workspaceId: string,
  columns: Columns<Contact>,
  params: PageRequest,
  withOptOuts = false,
): Promise<Contact[]> {
  const keyset = keysetSql(params);
  return sql<Contact>(Prisma.sql`
    SELECT ${columns.with(KEYSET).sql()}${withOptOuts ? Prisma.sql`, ${optOutsSql(Prisma.raw('contacts'))} AS "optOuts"` : Prisma.empty}
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
  const [row] = await sql<ContactRow & { queued: number }>(Prisma.sql`
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
    SELECT ${CONTACT_ROW.sql('updated')}, ${optOutsSql(Prisma.raw('updated'))} AS "optOuts", (SELECT count(*) FROM queued)::int AS queued FROM updated`);
  if (!row) return null;
  const { queued, ...contact } = row;
  return { contact: contact as ContactRow, queued };
}
