import { Prisma, type Contact, type PrismaClient } from '../../generated/prisma/client.js';
import { sqlOn, type Db } from '../../db/types.js';
import type { RequestContext } from '../../context/types.js';
import { startingChannel } from '../../context/request.js';
import { InputError, NotFoundError, ValidationError } from '../../errors/domain.js';
import { isUniqueViolation } from '../../db/errors.js';
import { deriveE164, phoneKey, phoneSearchDigits, toE164 } from '../../lib/phone.js';
import { keysetOrder, keysetWhere, toPage, type Page, type PageRequest } from '../../lib/pagination.js';
import { keysetSql } from '../../db/keyset.js';
import { isUuid } from '../../lib/uuid.js';
import { parseInput } from '../../lib/validation.js';
import type { PrismaQuery } from '../../db/query.js';
import type { WriteGuard } from '../idempotency/idempotency.service.js';
import { recordEvents } from '../events/events.service.js';
import { MESSAGES, contactFiltersSchema, createContactSchema, findContactSchema, updateContactSchema, type UpdateContactInput } from './contacts.schemas.js';
import { pageArgs, type Columns, type RowLoad } from '../../db/view.js';
import { matchAndCreate } from './contacts.import.js';
import { CONTACT_ROW, contactPage, contactTable, withoutOptOuts, writeContact, type ContactChanges, type ContactRow } from './contacts.sql.js';

const live = (workspaceId: string) => ({ workspaceId, deletedAt: null });

/** A non-deleted contact of the caller's workspace, or NotFound (malformed ids included). */
export async function getContact(ctx: RequestContext, id: string, query: PrismaQuery = {}): Promise<Contact> {
  const contact = isUuid(id) ? await ctx.prisma.contact.findFirst({ ...query, where: { id: id.toLowerCase(), ...live(ctx.auth.workspace.id) } }) : null;
  if (!contact) throw new NotFoundError('Contact');
  return contact;
}

/** The other live contact holding an email or phone number, if any. */
async function holderOf(db: Db, workspaceId: string, field: 'email' | 'phone', value: string, exceptId?: string) {
  const where =
    field === 'email'
      ? { ...live(workspaceId), emailNormalized: value.toLowerCase() }
      : { ...live(workspaceId), phones: { some: { number: value, contactDeleted: false } } };
  return db.contact.findFirst({ where: { ...where, ...(exceptId ? { id: { not: exceptId } } : {}) }, select: { id: true } });
}

/**
 * Rejects an email or phone another live contact holds: every taken field is
 * reported, and `conflict` names the holder of the first (the email's).
 */
async function assertAvailable(db: Db, workspaceId: string, values: { email?: string | null; phone?: string | null }, exceptId?: string) {
  const [emailHolder, phoneHolder] = await Promise.all([
    values.email ? holderOf(db, workspaceId, 'email', values.email, exceptId) : null,
    values.phone ? holderOf(db, workspaceId, 'phone', values.phone, exceptId) : null,
  ]);
  refuseTaken(emailHolder?.id ?? null, phoneHolder?.id ?? null);
}

/** The 422 of a taken email or phone (their holders' ids): every taken field, `conflict` naming the first holder (the email's). */
function refuseTaken(emailHolder: string | null, phoneHolder: string | null) {
  const errors: Record<string, string[]> = {};
  if (emailHolder) errors.email = [MESSAGES.emailTaken];
  if (phoneHolder) errors.phone = [MESSAGES.phoneTaken];
  const holder = emailHolder ? { field: 'email', contactId: emailHolder } : phoneHolder ? { field: 'phone', contactId: phoneHolder } : null;
  if (holder) throw new ValidationError(errors, holder, Object.keys(errors));
}

/**
 * A unique violation, also as Prisma reports it from a raw statement: a P2010
 * whose driver error carries PostgreSQL's 23505.
 */
function violatesUniqueness(error: unknown): boolean {
  if (isUniqueViolation(error)) return true;
  const cause = (error as { meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; kind?: unknown } } } } | null)?.meta?.driverAdapterError
    ?.cause;
  return cause?.originalCode === '23505' || cause?.kind === 'UniqueConstraintViolation';
}

/**
 * Runs a write whose uniqueness the database enforces. When the unique indexes
 * refuse it (another contact holds the value, or a concurrent request won the
 * race) the same 422 as the pre-check is answered. `values` are read after the
 * write failed, so a write may fill them in as it parses its input.
 */
async function withUniqueness<T>(
  prisma: PrismaClient,
  workspaceId: string,
  values: { email?: string | null; phone?: string | null },
  exceptId: string | undefined,
  write: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!violatesUniqueness(error)) throw error;
      await assertAvailable(prisma, workspaceId, values, exceptId);
      // No holder any more: it was deleted or changed its value after refusing this write, which
      // may now succeed. Once: a value that keeps changing hands is not chased.
      if (attempt === 2) throw error;
    }
  }
}

/** Replaces a contact's phone forms by its new number (or none). */
async function setPhone(db: Db, contact: Pick<Contact, 'id' | 'workspaceId'>, phone: string | null) {
  await db.contactPhone.deleteMany({ where: { contactId: contact.id } });
  if (phone) await db.contactPhone.create({ data: { workspaceId: contact.workspaceId, contactId: contact.id, number: phone } });
}

/**
 * The sent phone when it is not valid E.164 but could be one of the legacy forms
 * a contact is also stored under (`0031 6 1234 5679` beside `+31612345679`):
 * rule 4 counts such a form as the current phone, so the locked read asks
 * whether the contact has it. Only text a phone could be stored as reaches the
 * query (no NUL, nothing unbounded).
 */
function storedPhoneForm(body: unknown): string | null {
  const phone = (body as { phone?: unknown } | null)?.phone;
  const sent = typeof phone === 'string' ? phone.trim() : '';
  return /^[+\d\s().\-/]{3,64}$/.test(sent) && !toE164(sent) ? sent : null;
}

/** The body's rules without the stored contact: what a request may ask for when it names no stored value. */
const updateWithoutStoredValues = updateContactSchema({ email: null, phone: null });

/**
 * The change a body asks for when its rules need nothing from the stored
 * contact: a name and/or an email valid as sent. Rule 4's stored values, rule 2's
 * last method (an email cleared) and phones (whose forms live beside the
 * contact) need the locked row; so does telling a bad body from a missing contact.
 */
function plainChange(body: unknown): UpdateContactInput | null {
  let input: UpdateContactInput;
  try {
    input = parseInput(updateWithoutStoredValues, body);
  } catch (error) {
    if (error instanceof ValidationError) return null;
    throw error;
  }
  return input.phone === undefined && input.email !== null ? input : null;
}

/**
 * The update under the contact's row lock, for bodies whose rules read the stored
 * contact: its current values, and whether the sent phone is one of its stored forms.
 */
async function lockedUpdate(tx: Db, workspaceId: string, id: string, body: unknown, at: Date, values: ContactChanges) {
  const form = storedPhoneForm(body);
  const [current] = await tx.$queryRaw<(Contact & { sentIsStoredForm: boolean })[]>`
    SELECT ${CONTACT_ROW.sql('contact')},
           ${form ? Prisma.sql`EXISTS (SELECT 1 FROM contact_phones WHERE contact_id = contact.id AND raw = ${form})` : Prisma.sql`false`} AS "sentIsStoredForm"
      FROM contacts AS contact
     WHERE contact.id = ${id}::uuid AND contact.workspace_id = ${workspaceId}::uuid AND contact.deleted_at IS NULL
       FOR UPDATE`;
  if (!current) throw new NotFoundError('Contact');
  // Parsed against the locked row: a value accepted because it is the stored one still is.
  const input = parseInput(updateContactSchema({ ...current, phoneForms: current.sentIsStoredForm && form ? [form] : [] }), body);
  Object.assign(values, input);

  const email = input.email === undefined ? current.email : input.email;
  const phone = input.phone === undefined ? current.phone : input.phone;
  if ((input.email !== undefined || input.phone !== undefined) && !email && !phone) {
    const field = input.phone !== undefined && input.email === undefined ? 'phone' : input.email !== undefined && input.phone === undefined ? 'email' : null;
    throw new ValidationError(field ? { [field]: [MESSAGES.lastMethod] } : { email: [MESSAGES.lastMethod], phone: [MESSAGES.lastMethod] });
  }

  const phoneChanged = input.phone !== undefined && phone !== current.phone;
  if (phoneChanged) await setPhone(tx, current, phone);
  const written = await writeContact(sqlOn(tx), workspaceId, id, { name: input.name, email: input.email, phone: phoneChanged ? phone : undefined }, at);
  // The row is locked by this transaction: it cannot have gone.
  return written!;
}

/**
 * PATCH /contacts/{contact} — spec §4.1, rule by rule. A real change is a
 * `contact.updated` event. A name or a valid email is one statement, the unique
 * indexes deciding a race; anything that needs the stored row runs under its lock.
 */
export async function updateContact(ctx: RequestContext, id: string, body: unknown): Promise<ContactRow> {
  const workspaceId = ctx.auth.workspace.id;
  if (!isUuid(id)) throw new NotFoundError('Contact');
  const contactId = id.toLowerCase();
  const at = new Date();

  const plain = plainChange(body);
  const values: ContactChanges = { ...plain };
  const written = await withUniqueness(ctx.prisma, workspaceId, values, contactId, async () =>
    plain
      ? await writeContact(ctx.sql, workspaceId, contactId, plain, at)
      : await ctx.prisma.$transaction((tx) => lockedUpdate(tx, workspaceId, contactId, body, at, values)),
  );
  if (!written) throw new NotFoundError('Contact');
  if (written.queued > 0) ctx.onMessageQueued?.();
  return written.contact;
}

/**
 * POST /contacts: creates a contact linked to `channelId` (GraphQL's input field), else to the
 * acting channel. Without an idempotency key it is one statement (the import's, for one row): the
 * holders of the email and phone are looked up and, when there are none, the contact is inserted
 * with its phone, its channel link and `contact.created`; a concurrent writer of the same value
 * makes the unique indexes refuse it, answered with the same 422. With a key, the key's claim and
 * answer join the write in a transaction.
 */
export async function createContact(ctx: RequestContext, body: unknown, guard?: WriteGuard<ContactRow>, channelId?: string | null): Promise<ContactRow> {
  const channel = startingChannel(ctx.auth, channelId);
  const workspaceId = ctx.auth.workspace.id;
  const input = parseInput(createContactSchema, body);
  if (!guard) {
    const outcome = await withUniqueness(ctx.prisma, workspaceId, input, undefined, async () => {
      const [row] = await matchAndCreate(ctx.sql, { workspaceId, channelId: channel.id }, [input], new Date(), true);
      refuseTaken(row!.emailHolder, row!.phoneHolder);
      return row!;
    });
    if (outcome.queued > 0) ctx.onMessageQueued?.();
    return outcome.contact!;
  }
  let queued = 0;
  const created = await withUniqueness(ctx.prisma, workspaceId, input, undefined, () =>
    ctx.prisma.$transaction(async (tx) => {
      await guard?.begin(tx);
      await assertAvailable(tx, workspaceId, input);
      const contact = withoutOptOuts(
        await tx.contact.create({
          data: {
            workspaceId,
            name: input.name,
            email: input.email,
            emailNormalized: input.email?.toLowerCase() ?? null,
            phone: input.phone,
            channels: { create: { channelId: channel.id } },
          },
        }),
      );
      await setPhone(tx, contact, input.phone);
      queued = await recordEvents(tx, workspaceId, [{ type: 'contact.created', data: contactTable.view(contact) }]);
      await guard?.end(tx, contact);
      return contact;
    }),
  );
  if (queued > 0) ctx.onMessageQueued?.();
  return created;
}

/** GET /contacts/find: exact match by email (any case) or by phone (E.164 and stored variants). */
export async function findContact(
  ctx: RequestContext,
  keys: { email?: string | null; phone?: string | null },
  query: PrismaQuery = {},
): Promise<Contact> {
  const { email, phone } = parseInput(findContactSchema, {
    email: keys.email ?? undefined,
    phone: keys.phone ?? undefined,
  });
  const workspaceId = ctx.auth.workspace.id;
  const where = email
    ? { ...live(workspaceId), emailNormalized: email.toLowerCase() }
    : { ...live(workspaceId), phones: { some: { number: phoneKey(phone!), contactDeleted: false } } };
  const contact = await ctx.prisma.contact.findFirst({ ...query, where });
  if (!contact) throw new NotFoundError('Contact');
  return contact;
}

/**
 * The ids of the page of live contacts whose name or email holds `term` (any case)
 * or, when the term is written as a phone number (see `phoneSearchDigits`), one of whose
 * phones holds its digits, newest first.
 *
 * Each way of matching is its own newest-first query, so that the planner may
 * serve each from its trigram index (a rare term: only matching rows are read)
 * or walk the workspace's newest contacts until the page is full (a common term);
 * one OR over all three would leave it only the walk. A term too short for a
 * trigram (one or two characters) can use no index to match: it is answered by
 * the walk, or by reading the table when PostgreSQL finds that cheaper.
 */
async function searchContactIds(prisma: Db, workspaceId: string, term: string, params: PageRequest) {
  // A literal substring: LIKE wildcards in the term match only themselves.
  const pattern = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const digits = phoneSearchDigits(term);
  const take = params.limit + 1;
  const liveRow = Prisma.sql`c.workspace_id = ${workspaceId}::uuid AND c.deleted_at IS NULL`;
  // One row comparison per bound, so that the walk starts at the cursor in the page index; a
  // backward page walks each way of matching oldest first.
  const { bounds, order } = keysetSql(params, 'c');
  const byPhone =
    digits
      ? Prisma.sql`UNION
        (SELECT c.id, c.created_at FROM contacts c
          WHERE ${liveRow}${bounds}
            AND EXISTS (SELECT FROM contact_phones p WHERE p.contact_id = c.id AND NOT p.contact_deleted AND p.number LIKE ${`%${digits}%`})
          ORDER BY ${order} LIMIT ${take})`
      : Prisma.empty;
  const rows = await prisma.$queryRaw<{ id: string }[]>`
    SELECT id FROM (
      (SELECT c.id, c.created_at FROM contacts c
        WHERE ${liveRow}${bounds} AND (c.name ILIKE ${pattern} OR c.email ILIKE ${pattern})
        ORDER BY ${order} LIMIT ${take})
      ${byPhone}
    ) AS found
    ORDER BY ${keysetSql(params).order} LIMIT ${take}`;
  return rows.map((row) => row.id);
}

/** What GET /contacts reads of each contact: its view's columns. */
const CONTACT_VIEW: RowLoad<Contact> = { columns: contactTable.columns as unknown as Columns<Contact> };

/** What a read of one contact for its view loads: its columns and its opt-outs. */
export const CONTACT_VIEW_QUERY = contactTable.query as PrismaQuery;

/**
 * GET /contacts: live contacts of the workspace, newest first, optionally searched. Each row
 * holds what `load` says: named columns (the view's, by default), read by one statement when
 * there is no search, or the query GraphQL planned for the relations its selection loads.
 */
export async function listContacts(
  ctx: RequestContext,
  params: PageRequest & { search?: string | null },
  load: RowLoad<Contact> = CONTACT_VIEW,
): Promise<Page<Contact>> {
  const workspaceId = ctx.auth.workspace.id;
  const term = parseInput(contactFiltersSchema, { search: params.search ?? undefined }).search;
  const view = load === CONTACT_VIEW;
  if (!term) {
    const rows =
      'columns' in load
        ? await contactPage(ctx.sql, workspaceId, load.columns, params, view)
        : await ctx.prisma.contact.findMany({
            ...load.query,
            where: { AND: [live(workspaceId), keysetWhere(params)] },
            orderBy: keysetOrder(params),
            take: params.limit + 1,
          });
    return toPage(rows, params);
  }
  // The search finds the page's ids; the rows are read with the caller's selection.
  const ids = await searchContactIds(ctx.prisma, workspaceId, term, params);
  const rows = ids.length
    ? ((await ctx.prisma.contact.findMany({ ...(view ? contactTable.query : pageArgs(load)), where: { id: { in: ids }, ...live(workspaceId) }, orderBy: keysetOrder(params) })) as Contact[])
    : [];
  return toPage(rows, params);
}

/**
 * The operators' import path: may create a legacy contact with neither email nor
 * phone, and keeps a phone exactly as given next to its E.164 form.
 */
export async function importContact(
  prisma: PrismaClient,
  input: { workspaceId: string; name: string; email?: string | undefined; phoneRaw?: string | undefined; isGroup: boolean },
): Promise<Contact> {
  const phone = input.phoneRaw?.trim();
  const number = phone ? phoneKey(phone) : undefined;
  if (phone && (!number || number.replace(/\D/g, '').length < 3)) {
    throw new InputError(`--phone-raw ${JSON.stringify(phone)} holds no phone number.`);
  }
  try {
    return await prisma.$transaction(async (tx) => {
      const contact = await tx.contact.create({
        data: {
          workspaceId: input.workspaceId,
          name: input.name,
          email: input.email ?? null,
          emailNormalized: input.email?.toLowerCase() ?? null,
          phone: phone ? (deriveE164(phone) ?? phone) : null,
          isGroup: input.isGroup,
        },
      });
      if (phone && number) {
        await tx.contactPhone.create({ data: { workspaceId: input.workspaceId, contactId: contact.id, number, raw: phone } });
      }
      await recordEvents(tx, input.workspaceId, [{ type: 'contact.created', data: contactTable.view(withoutOptOuts(contact)) }]);
      return contact;
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const holder =
      (input.email && (await holderOf(prisma, input.workspaceId, 'email', input.email))) ||
      (number && (await holderOf(prisma, input.workspaceId, 'phone', number)));
    throw new InputError(`Contact ${holder ? holder.id : '(unknown)'} already has that email or phone.`);
  }
}

/** Soft-deletes a contact; its email and phones stop counting for uniqueness. */
export async function deleteContact(prisma: PrismaClient, id: string): Promise<void> {
  const contact = isUuid(id) ? await prisma.contact.findFirst({ where: { id, deletedAt: null } }) : null;
  if (!contact) throw new InputError(`No contact has id ${id}.`);
  await prisma.$transaction([
    prisma.contact.update({ where: { id }, data: { deletedAt: new Date() } }),
    prisma.contactPhone.updateMany({ where: { contactId: id }, data: { contactDeleted: true } }),
  ]);
}
