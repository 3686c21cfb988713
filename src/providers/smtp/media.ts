import { MediaUnavailable, type MediaFetcher } from '../provider.js';
import type { EmailStore } from './email.js';
import { readEmail } from './inbound.js';

/**
 * Attachments of inbound email. The email itself is the only copy (the relay that delivered it
 * keeps none), so an attachment is read back from the stored raw email: its ref is the stored
 * event's id and the attachment's position.
 */
export function smtpMedia(store: EmailStore | undefined): MediaFetcher {
  return {
    async open(channel, ref, limitBytes) {
      const match = /^([0-9a-f-]{36})\/(\d{1,4})$/.exec(ref);
      if (!match || !store) throw new MediaUnavailable('the email this file came with is not kept');
      const raw = await store.raw(channel.id, match[1]!);
      if (!raw) throw new MediaUnavailable('the email this file came with is not kept');
      const attachment = (await readEmail(raw))?.attachments[Number(match[2])];
      if (!attachment) throw new MediaUnavailable('the email no longer has this attachment');
      if (attachment.content.length > limitBytes) throw new MediaUnavailable(`the media is larger than ${limitBytes} bytes`);
      return { body: new Blob([new Uint8Array(attachment.content)]).stream(), contentType: attachment.contentType || null, length: attachment.content.length };
    },
  };
}
