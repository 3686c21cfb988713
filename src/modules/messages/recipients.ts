import type { Contact } from '../../generated/prisma/client.js';
import type { Db } from '../../db/types.js';
import { ValidationError } from '../../errors/domain.js';
import type { QueuedEvent } from '../events/events.service.js';
import { contactTable, withoutOptOuts } from '../contacts/contacts.sql.js';
import { MESSAGES, type Recipient, type RecipientDetails, type SendMessageInput } from './messages.schemas.js';

/** The recipient field that decides: `to`, then `contact`, then the legacy `sender`. */
export function chooseRecipient(input: SendMessageInput): { field: 'to' | 'contact' | 'sender'; recipient: Recipient } {
  if (input.to) return { field: 'to', recipient: input.to };
  if (input.contact) return { field: 'contact', recipient: input.contact };
  return { field: 'sender', recipient: input.sender! };
}

async function matchDetails(tx: Db, workspaceId: string, details: RecipientDetails): Promise<Contact | null> {
  const live = { workspaceId, deletedAt: null };
  if (details.phone) {
    const byPhone = await tx.contact.findFirst({ where: { ...live, phones: { some: { number: details.phone, contactDeleted: false } } } });
    if (byPhone) return byPhone;
  }
  if (details.email) return tx.contact.findFirst({ where: { ...live, emailNormalized: details.email.toLowerCase() } });
  return null;
}

/**
 * The contact a message goes to. A UUID must name a live contact of the workspace
 * (groups included). Details reuse the live contact matched by phone, then email,
 * or create one (named after its phone or email unless a name is given), adding
 * `contact.created` to `events`. The statement storing the message links the
 * contact to the acting channel.
 */
export async function resolveRecipient(
  tx: Db,
  input: { workspaceId: string; field: string; recipient: Recipient; events?: QueuedEvent[] },
): Promise<Contact> {
  const { workspaceId, recipient } = input;
  if ('contactId' in recipient) {
    const contact = await tx.contact.findFirst({ where: { id: recipient.contactId, workspaceId, deletedAt: null } });
    if (!contact) throw ValidationError.field(input.field, MESSAGES.recipientUnknown);
    return contact;
  }
  const details = recipient;
  const matched = await matchDetails(tx, workspaceId, details);
  if (matched) return matched;
  const contact = await tx.contact.create({
    data: {
      workspaceId,
      name: details.name ?? details.phone ?? details.email!,
      email: details.email ?? null,
      emailNormalized: details.email?.toLowerCase() ?? null,
      phone: details.phone ?? null,
    },
  });
  // Apart from the contact: a nested create would read the contact back once more.
  if (details.phone) await tx.contactPhone.create({ data: { workspaceId, contactId: contact.id, number: details.phone }, select: { id: true } });
  input.events?.push({ type: 'contact.created', data: contactTable.view(withoutOptOuts(contact)) });
  return contact;
}
