import type { OutboundProvider, ReceiptOutcome, SendJob, SendOutcome } from '../provider.js';
import { providerRequest, type ProviderAnswer, type ProviderHttp } from '../http.js';
import { WHATSAPP_OPTED_OUT_CODE } from './opt-out.js';

/** The WhatsApp Cloud API's media message types, by the extension of the link's path. */
const MEDIA_TYPES: [type: 'image' | 'video' | 'audio' | 'document', extensions: string[]][] = [
  ['image', ['jpg', 'jpeg', 'png', 'webp']],
  ['video', ['mp4', '3gp', '3gpp']],
  ['audio', ['aac', 'amr', 'mp3', 'm4a', 'ogg', 'opus']],
];

/** `image`, `video`, `audio` or (anything else) `document`, from the URL path's extension. */
export function mediaType(url: string): 'image' | 'video' | 'audio' | 'document' {
  let path: string;
  try {
    path = new URL(url).pathname.toLowerCase();
  } catch {
    return 'document';
  }
  const extension = /\.([a-z0-9]+)$/.exec(path)?.[1] ?? '';
  return MEDIA_TYPES.find(([, extensions]) => extensions.includes(extension))?.[0] ?? 'document';
}

/** The bodies of the Graph API requests a message is sent as: its text or template, then one per media link. */
export function whatsappParts(job: Pick<SendJob, 'message' | 'recipient'>): Record<string, unknown>[] {
  const { message, recipient } = job;
  const envelope = { messaging_product: 'whatsapp', recipient_type: 'individual', to: (recipient.phone ?? '').replace(/^\+/, '') };
  const first = message.template
    ? {
        ...envelope,
        type: 'template',
        template: {
          name: message.template.name,
          language: { code: message.template.language },
          ...(message.template.parameters.length
            ? { components: [{ type: 'body', parameters: message.template.parameters.map((text) => ({ type: 'text', text })) }] }
            : {}),
        },
      }
    : { ...envelope, type: 'text', text: { body: message.body, preview_url: false } };
  const media = message.mediaUrls.map((link) => {
    const type = mediaType(link);
    return { ...envelope, type, [type]: { link } };
  });
  return [first, ...media];
}

interface GraphError {
  error?: { message?: string; code?: number | string; error_subcode?: number; type?: string; error_data?: { details?: string } };
}

/** A part the Graph API took without naming its id (a truncated or unreadable answer). */
interface Unidentified {
  unidentified: string;
}

/**
 * The Graph API's answer as an outcome: any 2xx is taken (docs/operating-safely.md, Staying up), under the first message
 * id when it names one — without one, sending again could deliver the part twice, so it counts
 * as sent, with a warning, and its statuses cannot be matched; a 429 or 5xx is tried again; any
 * other 4xx fails with the error's code and message (its details when given) — unless the code
 * means rate limited, which the worker reads from the reply (docs/broadcasts.md#rate-limit-answers).
 */
function outcomeOf(answer: ProviderAnswer): { id: string } | Unidentified | SendOutcome {
  const { status, json: body } = answer;
  if (status >= 200 && status < 300) {
    const id = (body as { messages?: { id?: unknown }[] } | null)?.messages?.[0]?.id;
    if (typeof id === 'string' && id) return { id };
    const why = !answer.complete ? 'a cut-off answer' : body === null ? 'an answer that is not JSON' : 'no message id';
    return { unidentified: `WhatsApp answered HTTP ${status} with ${why}: sent, but its statuses cannot be matched` };
  }
  const error = (body as GraphError | null)?.error;
  const text = [error?.message, error?.error_data?.details].filter(Boolean).join(': ') || `HTTP ${status}`;
  const code = String(error?.code ?? status);
  // What the worker reads a rate-limit answer from (HTTP 429, or a code of the descriptor's limits.rateLimitedCodes).
  const reply = { status, code, retryAfter: answer.retryAfter };
  if (status === 429 || status >= 500) return { kind: 'retry', reason: `WhatsApp answered HTTP ${status}: ${text}`, reply };
  return { kind: 'failed', code, text, reply, ...(code === WHATSAPP_OPTED_OUT_CODE ? { optedOut: true } : {}) };
}

/**
 * What is recorded for a part taken without an id: a later attempt then skips it like any part
 * sent, and no status of WhatsApp's can ever name it.
 */
export function unidentifiedPart(messageId: string, part: number): string {
  return `unidentified:${messageId}:${part}`;
}

/**
 * Sends through the WhatsApp Cloud API (docs/channels.md): `POST {base}/{version}/{phone-number-id}/messages`
 * with the channel's access token, one request per part; the parts an earlier attempt sent are skipped.
 */
export function whatsappProvider(options: { baseUrl: string; version: string; http: ProviderHttp }): OutboundProvider {
  const messagesUrl = (settings: Record<string, string>) =>
    `${options.baseUrl.replace(/\/+$/, '')}/${options.version}/${encodeURIComponent(settings.phoneNumberId ?? '')}/messages`;
  return {
    name: 'whatsapp_cloud',
    async send(job): Promise<SendOutcome> {
      // The phone was checked when the message was accepted; it may have been cleared since.
      if (!job.recipient.phone) return { kind: 'failed', code: 'no_phone', text: 'The contact has no phone number to send the WhatsApp message to.' };
      const { settings, secrets } = job.channel;
      const url = messagesUrl(settings);
      const ids = [...job.sentParts];
      const warnings: string[] = [];
      const parts = whatsappParts(job);
      for (let part = ids.length; part < parts.length; part++) {
        const answer = await providerRequest(options.http, url, {
          method: 'POST',
          headers: { authorization: `Bearer ${secrets.accessToken ?? ''}`, 'content-type': 'application/json' },
          body: JSON.stringify(parts[part]),
        });
        if ('kind' in answer) return answer;
        const outcome = outcomeOf(answer);
        if ('kind' in outcome) return outcome;
        const id = 'id' in outcome ? outcome.id : unidentifiedPart(job.message.id, part);
        if ('unidentified' in outcome) warnings.push(parts.length > 1 ? `part ${part}: ${outcome.unidentified}` : outcome.unidentified);
        await job.recordPart(id, part);
        ids.push(id);
      }
      return { kind: 'sent', providerIds: ids, ...(warnings.length ? { warning: warnings.join('; ') } : {}) };
    },
    /**
     * Marks an inbound message read (and, on WhatsApp, every one before it), with a typing indicator
     * when asked (shown until the next message or for 25 s): the same endpoint and token as a send.
     */
    async markRead(job): Promise<ReceiptOutcome> {
      const answer = await providerRequest(options.http, messagesUrl(job.channel.settings), {
        method: 'POST',
        headers: { authorization: `Bearer ${job.channel.secrets.accessToken ?? ''}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          messaging_product: 'whatsapp',
          status: 'read',
          message_id: job.providerMessageId,
          ...(job.typing ? { typing_indicator: { type: 'text' } } : {}),
        }),
      });
      if ('kind' in answer) return answer;
      // Any 2xx is taken; otherwise a 429 or 5xx is tried again and any other 4xx refused, as for a send.
      const outcome = answer.status >= 200 && answer.status < 300 ? null : outcomeOf(answer);
      return outcome && 'kind' in outcome && outcome.kind !== 'sent' ? outcome : { kind: 'sent' };
    },
  };
}
