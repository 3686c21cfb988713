import type { Contact, PrismaClient } from '../../generated/prisma/client.js';
import type { Db } from '../../db/types.js';
import type { RequestContext } from '../../context/types.js';
import { actingChannel } from '../../context/request.js';
import { InputError, NotFoundError, ValidationError } from '../../errors/domain.js';
import { isUniqueViolation } from '../../db/errors.js';
import { deriveE164, phoneKey, toE164 } from '../../lib/phone.js';
import { NEWEST_FIRST, afterCursor, toPage, type Cursor, type Page } from '../../lib/pagination.js';
import { isUuid } from '../../lib/uuid.js';
import { parseInput } from '../../lib/validation.js';
import type { PrismaQuery } from '../../db/query.js';
import type { WriteGuard } from '../idempotency/idempotency.service.js';
import { recordEvents } from '../events/events.service.js';
import { MESSAGES, contactFiltersSchema, createContactSchema, findContactSchema, isValidEmail, updateContactSchema } from './contacts.schemas.js';

export interface ContactView {
  id: string;
  name: string;
  email: string | null;
  phoneNumber: string | null;
  isGroup: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The API view of a contact; the phone field is named `phoneNumber` in responses. */
export function contactView(contact: Contact): ContactView {
  return {
    id: contact.id,
    name: contact.name,
    email: contact.email,
    phoneNumber: contact.phone,
    isGroup: contact.isGroup,
    createdAt: contact.createdAt.toISOString(),
    updatedAt: contact.updatedAt.toISOString(),
  };
}

const live = (workspaceId: string) => ({ workspaceId, deletedAt: null });

/** A non-deleted contact of the caller's workspace, or NotFound (malformed ids included). */
export async function getContact(ctx: RequestContext, id: string, query: PrismaQuery = {}): Promise<Contact> {
  actingChannel(ctx.auth);
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
  const errors: Record<string, string[]> = {};
  if (emailHolder) errors.email = [MESSAGES.emailTaken];
  if (phoneHolder) errors.phone = [MESSAGES.phoneTaken];
  const holder = emailHolder ? { field: 'email', contactId: emailHolder.id } : phoneHolder ? { field: 'phone', contactId: phoneHolder.id } : null;
  if (holder) throw new ValidationError(errors, holder, Object.keys(errors));
}

/**
 * Runs a write whose uniqueness the database enforces. When a concurrent request
 * won the race (a unique violation), the same 422 as the pre-check is answered.
 */
async function withUniqueness<T>(
  prisma: PrismaClient,
  workspaceId: string,
  values: { email?: string | null; phone?: string | null },
  exceptId: string | undefined,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    await assertAvailable(prisma, workspaceId, values, exceptId);
    throw error;
  }
}

/** Replaces a contact's phone forms by its new number (or none). */
async function setPhone(db: Db, contact: Pick<Contact, 'id' | 'workspaceId'>, phone: string | null) {
  await db.contactPhone.deleteMany({ where: { contactId: contact.id } });
  if (phone) await db.contactPhone.create({ data: { workspaceId: contact.workspaceId, contactId: contact.id, number: phone } });
}

/**
 * The sent phone when it is neither valid E.164 nor the stored phone but one of
 * the legacy forms the contact is also stored under (`0031 6 1234 5679` beside
 * `+31612345679`): rule 4 counts it as the current phone. Asked only then.
 */
async function storedPhoneForm(db: Db, contact: Contact, body: unknown): Promise<string[]> {
  const phone = (body as { phone?: unknown } | null)?.phone;
  const sent = typeof phone === 'string' ? phone.trim() : '';
  // Only text a phone could be stored as reaches the query (no NUL, nothing unbounded).
  if (!/^[+\d\s().\-/]{3,64}$/.test(sent) || sent === contact.phone || toE164(sent)) return [];
  const form = await db.contactPhone.findFirst({ where: { contactId: contact.id, raw: sent }, select: { id: true } });
  return form ? [sent] : [];
}

/** PATCH /contacts/{contact} — spec §4.1, rule by rule. A real change is a `contact.updated` event. */
export async function updateContact(ctx: RequestContext, id: string, body: unknown): Promise<Contact> {
  const workspaceId = ctx.auth.workspace.id;
  const current = await getContact(ctx, id);
  const input = parseInput(updateContactSchema({ ...current, phoneForms: await storedPhoneForm(ctx.prisma, current, body) }), body);
  let queued = 0;

  const updated = await withUniqueness(ctx.prisma, workspaceId, input, id, () =>
    ctx.prisma.$transaction(async (tx) => {
      // Lock the row: concurrent updates of one contact apply one after the other.
      const locked = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM contacts WHERE id = ${id}::uuid AND workspace_id = ${workspaceId}::uuid AND deleted_at IS NULL FOR UPDATE`;
      if (locked.length === 0) throw new NotFoundError('Contact');
      const current = await tx.contact.findUniqueOrThrow({ where: { id } });
      // A value accepted only because it was the stored one must still be the stored one.
      if (input.email && input.email !== current.email && !isValidEmail(input.email)) throw ValidationError.field('email', MESSAGES.emailFormat);
      if (input.phone && input.phone !== current.phone && !toE164(input.phone)) throw ValidationError.field('phone', MESSAGES.phoneFormat);

      const email = input.email === undefined ? current.email : input.email;
      const phone = input.phone === undefined ? current.phone : input.phone;
      if ((input.email !== undefined || input.phone !== undefined) && !email && !phone) {
        const field = input.phone !== undefined && input.email === undefined ? 'phone' : input.email !== undefined && input.phone === undefined ? 'email' : null;
        throw new ValidationError(field ? { [field]: [MESSAGES.lastMethod] } : { email: [MESSAGES.lastMethod], phone: [MESSAGES.lastMethod] });
      }

      const emailChanged = input.email !== undefined && (email?.toLowerCase() ?? null) !== current.emailNormalized;
      const phoneChanged = input.phone !== undefined && phone !== current.phone;
      await assertAvailable(tx, workspaceId, { email: emailChanged ? email : null, phone: phoneChanged ? phone : null }, id);

      if (phoneChanged) await setPhone(tx, current, phone);
      const updated = await tx.contact.update({
        where: { id },
        data: {
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.email !== undefined ? { email, emailNormalized: email?.toLowerCase() ?? null } : {}),
          ...(phoneChanged ? { phone } : {}),
        },
      });
      if (updated.name !== current.name || updated.email !== current.email || updated.phone !== current.phone) {
        queued = await recordEvents(tx, workspaceId, [{ type: 'contact.updated', data: contactView(updated) }]);
      }
      return updated;
    }),
  );
  if (queued > 0) ctx.onMessageQueued?.();
  return updated;
}

/** POST /contacts: creates a contact linked to the acting channel. */
export async function createContact(ctx: RequestContext, body: unknown, guard?: WriteGuard<Contact>): Promise<Contact> {
  const channel = actingChannel(ctx.auth);
  const workspaceId = ctx.auth.workspace.id;
  const input = parseInput(createContactSchema, body);
  let queued = 0;
  const created = await withUniqueness(ctx.prisma, workspaceId, input, undefined, () =>
    ctx.prisma.$transaction(async (tx) => {
      await guard?.begin(tx);
      await assertAvailable(tx, workspaceId, input);
      const contact = await tx.contact.create({
        data: {
          workspaceId,
          name: input.name,
          email: input.email,
          emailNormalized: input.email?.toLowerCase() ?? null,
          phone: input.phone,
          channels: { create: { channelId: channel.id } },
        },
      });
      await setPhone(tx, contact, input.phone);
      queued = await recordEvents(tx, workspaceId, [{ type: 'contact.created', data: contactView(contact) }]);
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
  actingChannel(ctx.auth);
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

/** GET /contacts: live contacts of the workspace, newest first, optionally searched. */
export async function listContacts(
  ctx: RequestContext,
  params: { limit: number; cursor?: Cursor | undefined; search?: string | null },
  query: PrismaQuery = {},
): Promise<Page<Contact>> {
  actingChannel(ctx.auth);
  const term = parseInput(contactFiltersSchema, { search: params.search ?? undefined }).search;
  const digits = term?.replace(/\D/g, '') ?? '';
  // A literal substring: LIKE wildcards in the term match only themselves.
  const literal = term?.replace(/[\\%_]/g, (c) => `\\${c}`);
  const search = literal
    ? {
        OR: [
          { name: { contains: literal, mode: 'insensitive' as const } },
          { email: { contains: literal, mode: 'insensitive' as const } },
          ...(digits.length >= 3 ? [{ phones: { some: { number: { contains: digits }, contactDeleted: false } } }] : []),
        ],
      }
    : {};
  const rows = await ctx.prisma.contact.findMany({
    ...query,
    where: { AND: [live(ctx.auth.workspace.id), search, afterCursor(params.cursor)] },
    orderBy: NEWEST_FIRST,
    take: params.limit + 1,
  });
  return toPage(rows, params.limit);
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
      await recordEvents(tx, input.workspaceId, [{ type: 'contact.created', data: contactView(contact) }]);
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
