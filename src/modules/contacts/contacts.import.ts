import { Prisma, type Contact } from '../../generated/prisma/client.js';
import type { RunSql } from '../../db/database.js';
import { ValidationError } from '../../errors/domain.js';
import { uuid7 } from '../../lib/uuid.js';
import { parseInput } from '../../lib/validation.js';
import { startingChannel } from '../../context/request.js';
import type { RequestContext } from '../../context/types.js';
import { queueEventsSql } from '../events/events.service.js';
import { createContactSchema, importContactsSchema } from './contacts.schemas.js';
import { CONTACT_ROW, contactTable, withoutOptOuts, type ContactRow } from './contacts.sql.js';

/** The most rows one import request (or one batch of the admin command) takes. */
export const IMPORT_BATCH_MAX = 10_000;

export type ImportStatus = 'created' | 'matched' | 'failed';

export interface ImportResult {
  index: number;
  id: string | null;
  status: ImportStatus;
  errors?: Record<string, string[]>;
}

/** A row that passed the field rules, with the keys it is matched by. */
interface ValidRow extends NewContact {
  index: number;
}

/** Attempts for a batch that lost a race with another writer of the same email or phone. */
const ATTEMPTS = 3;

/** A unique violation as the driver or Prisma reports it from a raw statement. */
function violatesUniqueness(error: unknown): boolean {
  const e = error as { code?: unknown; meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; kind?: unknown } } } } | null;
  const cause = e?.meta?.driverAdapterError?.cause;
  return e?.code === '23505' || e?.code === 'P2002' || cause?.originalCode === '23505' || cause?.kind === 'UniqueConstraintViolation';
}

/**
 * Imports contacts (docs/contacts.md, "Importing contacts"): each row is checked with the rules of
 * POST /contacts; a valid row whose email (any case) or phone (any stored form of it) a live contact
 * of the workspace holds is `matched` to that contact, which is left as it is; any other valid row
 * is `created` and linked to `channelId`, with its `contact.created` event. Within one call, a row
 * whose email or phone an earlier row of the call already has is matched to that earlier row's
 * contact. The valid rows are matched and created by one statement over arrays (a row is stored
 * whole or not at all: the statement is); a concurrent writer taking one of the values first makes
 * the statement fail as a whole and run again, matching it this time.
 */
export async function importContacts(
  sql: RunSql,
  target: { workspaceId: string; channelId: string | null },
  rows: readonly unknown[],
  at = new Date(),
): Promise<ImportResult[]> {
  const results: ImportResult[] = new Array(rows.length);
  const unique: ValidRow[] = [];
  /** Rows matched to an earlier row of the call: their index, and the index of the row they follow. */
  const following: [index: number, leader: number][] = [];
  const byEmail = new Map<string, number>();
  const byPhone = new Map<string, number>();
  rows.forEach((row, index) => {
    let input: { name: string; email: string | null; phone: string | null };
    try {
      input = parseInput(createContactSchema, row);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      results[index] = { index, id: null, status: 'failed', errors: error.errors };
      return;
    }
    const email = input.email?.toLowerCase() ?? null;
    const leader = (email !== null ? byEmail.get(email) : undefined) ?? (input.phone !== null ? byPhone.get(input.phone) : undefined);
    if (leader !== undefined) {
      following.push([index, leader]);
      return;
    }
    if (email !== null) byEmail.set(email, index);
    if (input.phone !== null) byPhone.set(input.phone, index);
    unique.push({ index, ...input });
  });

  if (unique.length) {
    for (let attempt = 1; ; attempt++) {
      try {
        const outcomes = await matchAndCreate(sql, target, unique, at);
        unique.forEach((row, i) => {
          const { contact, emailHolder, phoneHolder } = outcomes[i]!;
          results[row.index] = contact
            ? { index: row.index, id: contact.id, status: 'created' }
            : { index: row.index, id: (emailHolder ?? phoneHolder)!, status: 'matched' };
        });
        break;
      } catch (error) {
        if (attempt < ATTEMPTS && violatesUniqueness(error)) continue;
        throw error;
      }
    }
  }
  for (const [index, leader] of following) results[index] = { index, id: results[leader]!.id, status: 'matched' };
  return results;
}

/**
 * An import request of either transport: `body` is `{contacts: [...]}` (1 to IMPORT_BATCH_MAX rows,
 * else a ValidationError on `contacts`), created contacts are linked to `channelId` (one the
 * credential can act as) or else the acting channel.
 */
export async function importContactsFor(ctx: RequestContext, body: unknown, channelId?: string | null): Promise<ImportResult[]> {
  const { contacts } = parseInput(importContactsSchema, body);
  const channel = startingChannel(ctx.auth, channelId);
  const results = await importContacts(ctx.sql, { workspaceId: ctx.auth.workspace.id, channelId: channel.id }, contacts);
  // The contact.created events wait for the delivery worker.
  if (results.some((row) => row.status === 'created')) ctx.onMessageQueued?.();
  return results;
}

/** A contact to create, its fields as the rules of POST /contacts left them (the phone E.164). */
export interface NewContact {
  name: string;
  email: string | null;
  phone: string | null;
}

/** What `matchAndCreate` found for a row: the live contacts holding its email and its phone, else the contact it created. */
export interface MatchOutcome {
  emailHolder: string | null;
  phoneHolder: string | null;
  /** The new contact (every column with `whole`, else its id alone); null when a value was held. */
  contact: ContactRow | null;
  /** Deliveries queued by the statement, over all its rows. */
  queued: number;
}

/**
 * One statement over arrays (POST /contacts is one row of it): for each row, the live contacts of
 * the workspace holding its email (any case) and its phone (any stored form) are looked up; a row
 * that neither is held is inserted with its phone, its link to the channel and its
 * `contact.created` event. A concurrent writer taking one of the values first makes the statement
 * fail as a whole (a unique violation) and store nothing. The outcomes come in the rows' order.
 */
export async function matchAndCreate(
  sql: RunSql,
  target: { workspaceId: string; channelId: string | null },
  rows: readonly NewContact[],
  at: Date,
  whole = false,
): Promise<MatchOutcome[]> {
  const ids = rows.map(() => uuid7());
  const workspaceId = target.workspaceId;
  const event = queueEventsSql(workspaceId, [{ type: 'contact.created', data: contactTable.sql('inserted') }], at, Prisma.sql`inserted`);
  const link = target.channelId
    ? Prisma.sql`, linked AS (INSERT INTO contact_channels (contact_id, channel_id) SELECT id, ${target.channelId}::uuid FROM inserted RETURNING 1)`
    : Prisma.empty;
  const found = await sql<Contact & { emailHolder: string | null; phoneHolder: string | null; queued: number }>(Prisma.sql`
    WITH input AS (
      SELECT * FROM unnest(${rows.map((_, i) => i)}::int[], ${ids}::uuid[], ${rows.map((r) => r.name)}::text[],
                           ${rows.map((r) => r.email)}::text[], ${rows.map((r) => r.phone)}::text[])
               AS input(position, id, name, email, phone)),
    held AS (
      SELECT input.position, input.id AS new_id, input.name, input.email, input.phone,
             (SELECT c.id FROM contacts c
               WHERE c.workspace_id = ${workspaceId}::uuid AND c.deleted_at IS NULL AND c.email_normalized = lower(input.email)) AS email_holder,
             (SELECT p.contact_id FROM contact_phones p
               WHERE p.workspace_id = ${workspaceId}::uuid AND NOT p.contact_deleted AND p.number = input.phone) AS phone_holder
        FROM input),
    inserted AS (
      INSERT INTO contacts (id, workspace_id, name, email, email_normalized, phone, created_at, updated_at)
      SELECT new_id, ${workspaceId}::uuid, name, email, lower(email), phone, ${at}::timestamptz, ${at}::timestamptz
        FROM held WHERE email_holder IS NULL AND phone_holder IS NULL ORDER BY position
      RETURNING *),
    phones AS (
      INSERT INTO contact_phones (id, workspace_id, contact_id, number)
      SELECT gen_random_uuid(), ${workspaceId}::uuid, id, phone FROM inserted WHERE phone IS NOT NULL
      RETURNING 1)${link},
    queued AS (${event} RETURNING 1)
    SELECT held.email_holder AS "emailHolder", held.phone_holder AS "phoneHolder", ${whole ? CONTACT_ROW.sql('inserted') : Prisma.sql`inserted.id`},
           (SELECT count(*) FROM queued)::int AS queued
      FROM held LEFT JOIN inserted ON inserted.id = held.new_id
     ORDER BY held.position`);
  return found.map(({ emailHolder, phoneHolder, queued, ...contact }) => ({
    emailHolder,
    phoneHolder,
    contact: contact.id ? withoutOptOuts(contact as Contact) : null,
    queued,
  }));
}
