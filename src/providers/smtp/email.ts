/**
 * What email needs of the stored domain that no other provider does: the thread a reply goes
 * under, and the stored raw email an attachment is read back from. The domain implements it
 * (src/modules/inbound/email.store.ts); the provider knows only this shape.
 */

/** An inbound email's headers a reply threads under, as stored with its message (`provider_meta`). */
export interface EmailMeta {
  /** Its Message-ID, without angle brackets. */
  messageId: string;
  /** Its References, oldest first, without angle brackets. */
  references: string[];
  subject: string | null;
}

export interface EmailStore {
  /** The latest inbound email of a conversation, or null when it has none. */
  thread(conversationId: string): Promise<EmailMeta | null>;
  /** The raw bytes of a stored inbound email of the channel, or null when there is none. */
  raw(channelId: string, eventId: string): Promise<Buffer | null>;
}

/** The part of an address after its last `@`, lowercased. */
export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/** A Message-ID header's value without its angle brackets and blanks. */
export function bareMessageId(value: string): string {
  return value.trim().replace(/^<+/, '').replace(/>+$/, '').trim();
}
