import type { OutboundProvider, SendJob, SendOutcome } from '../provider.js';
import { providerRequest, type ProviderAnswer, type ProviderHttp } from '../http.js';
import { TWILIO_OPTED_OUT_CODE } from './opt-out.js';

export interface TwilioOptions {
  /** TWILIO_API_URL, without a trailing slash. */
  baseUrl: string;
  /** PUBLIC_URL: the status callback of every message is under it. */
  publicUrl: string;
  http: ProviderHttp;
}

/** Where Twilio posts a channel's delivery statuses (the StatusCallback of its messages). */
export function twilioStatusUrl(publicUrl: string, channelId: string): string {
  return `${publicUrl}/webhooks/twilio/${channelId}/status`;
}

/**
 * The form a message is sent as (docs/channels.md): `To`, `From` (the channel's number), `Body` (a
 * template's rendered text), one `MediaUrl` per media link, and the channel's `StatusCallback`.
 */
export function twilioForm(job: Pick<SendJob, 'message' | 'recipient' | 'channel'>, publicUrl: string): URLSearchParams {
  const from = job.channel.settings.from ?? '';
  const form = new URLSearchParams();
  form.append('To', job.recipient.phone ?? '');
  form.append('From', from);
  form.append('Body', job.message.body);
  for (const url of job.message.mediaUrls) form.append('MediaUrl', url);
  form.append('StatusCallback', twilioStatusUrl(publicUrl, job.channel.id));
  return form;
}

/** Twilio's error answer: `{code, message, more_info, status}`. */
interface TwilioError {
  code?: number | string;
  message?: string;
}

/**
 * Twilio's answer as an outcome: any 2xx is taken, under the message's `sid` when it names one
 * (without one, sending again could send the SMS twice: it is sent, with a warning, and its
 * statuses cannot be matched); a 429 or 5xx is tried again; any other 4xx fails with Twilio's
 * error code and message (21610, the recipient opted out, says so).
 */
function outcomeOf({ status, json: body, retryAfter }: ProviderAnswer): SendOutcome {
  if (status >= 200 && status < 300) {
    const sid = (body as { sid?: unknown } | null)?.sid;
    if (typeof sid === 'string' && sid) return { kind: 'sent', providerIds: [sid] };
    return { kind: 'sent', providerIds: [], warning: `Twilio answered HTTP ${status} without a message sid: sent, but its statuses cannot be matched` };
  }
  const error = body as TwilioError | null;
  const text = (typeof error?.message === 'string' && error.message) || `HTTP ${status}`;
  const code = String(error?.code ?? status);
  // What the worker reads a rate-limit answer from (HTTP 429, or a code of the descriptor's limits.rateLimitedCodes).
  const reply = { status, code, retryAfter };
  if (status === 429 || status >= 500) return { kind: 'retry', reason: `Twilio answered HTTP ${status}: ${text}`, reply };
  return { kind: 'failed', code, text, reply, ...(code === TWILIO_OPTED_OUT_CODE ? { optedOut: true } : {}) };
}

/**
 * Sends through Twilio Programmable Messaging (docs/channels.md): one
 * `POST {base}/2010-04-01/Accounts/{AccountSid}/Messages.json` per message, with HTTP Basic
 * `AccountSid:AuthToken`. Twilio takes text and media in one message, so a message is one part:
 * once its sid is recorded, an attempt sends nothing again.
 */
export function twilioProvider(options: TwilioOptions): OutboundProvider {
  return {
    name: 'twilio',
    async send(job): Promise<SendOutcome> {
      if (job.sentParts.length) return { kind: 'sent', providerIds: [...job.sentParts] };
      // The phone was checked when the message was accepted; it may have been cleared since.
      if (!job.recipient.phone) return { kind: 'failed', code: 'no_phone', text: 'The contact has no phone number to send the SMS to.' };
      const { settings, secrets } = job.channel;
      const accountSid = settings.accountSid ?? '';
      const url = `${options.baseUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`;
      const answer = await providerRequest(options.http, url, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${accountSid}:${secrets.authToken ?? ''}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: twilioForm(job, options.publicUrl).toString(),
      });
      if ('kind' in answer) return answer;
      const outcome = outcomeOf(answer);
      const sid = outcome.kind === 'sent' ? outcome.providerIds[0] : undefined;
      if (sid) await job.recordPart(sid, 0);
      return outcome;
    },
  };
}
