import type { Contact, PrismaClient } from '../../generated/prisma/client.js';
import { InputError } from '../../errors/domain.js';
import { isUniqueViolation } from '../../db/errors.js';
import { deriveE164, phoneKey } from '../../lib/phone.js';
import { isUuid } from '../../lib/uuid.js';

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
      return contact;
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const holder = await prisma.contact.findFirst({
      where: {
        workspaceId: input.workspaceId,
        deletedAt: null,
        OR: [
          ...(input.email ? [{ emailNormalized: input.email.toLowerCase() }] : []),
          ...(number ? [{ phones: { some: { number, contactDeleted: false } } }] : []),
        ],
      },
      select: { id: true },
    });
    throw new InputError(`Contact ${holder?.id ?? '(unknown)'} already has that email or phone.`);
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
