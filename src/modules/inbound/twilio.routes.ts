import type { AppDeps } from '../../context/deps.js';
import type { Channel, ChannelProvider } from '../../generated/prisma/client.js';
import { publicUrl } from '../../env.js';
import { isUuid } from '../../lib/uuid.js';
import { inboundReceived } from '../../metrics/process.js';
import { HttpError } from '../../rest/http.js';
import type { WebhookAnswer, WebhookCall } from './webhook-call.js';
import { TWILIO_KIND_HEADER, formParams, twilioFormProblem, type TwilioWebhookKind } from '../../providers/twilio/inbound.js';
import { TWILIO_SIGNATURE_HEADER, twilioSignatureWellFormed, verifyTwilioSignature } from '../../providers/twilio/signature.js';

/** What the Twilio routes need of the inbound routes: the channel lookup, the refusal, the store. */
export interface TwilioRouteParts {
  channelOf(id: string): Promise<{ channel: Pick<Channel, 'id' | 'workspaceId' | 'provider' | 'status'>; secrets: Record<string, string> } | null>;
  refuse(provider: string, outcome: string, status: number, message: string, channelId: string): WebhookAnswer;
  store(channel: Pick<Channel, 'id' | 'workspaceId'>, provider: ChannelProvider, headers: Record<string, string>, body: Buffer): Promise<void>;
  bodyLimit: number;
}

/** The answer to an inbound message: empty TwiML, so Twilio sends no reply of its own. */
const TWIML_EMPTY = '<Response></Response>';

/**
 * POST /webhooks/twilio/{channelId} (messages) and /webhooks/twilio/{channelId}/status
 * (CONTRACT §6), checked in the contract's order: an unknown, inactive or other-provider channel
 * is 404; a missing or wrong `X-Twilio-Signature` 403; a body over the limit 413; a verified body
 * that is not a readable form 400. The signature is checked against the URL under PUBLIC_URL —
 * the URL Twilio requested, not the one a proxy in front of the gateway forwarded to.
 */
export function twilioWebhook(deps: AppDeps, parts: TwilioRouteParts) {
  const base = publicUrl(deps.env);
  return async (request: WebhookCall, channelId: string, kind: TwilioWebhookKind): Promise<WebhookAnswer> => {
    request.label(kind === 'status' ? 'POST /webhooks/twilio/{channelId}/status' : 'POST /webhooks/twilio/{channelId}');
    const found = isUuid(channelId) ? await parts.channelOf(channelId.toLowerCase()) : null;
    if (!found || found.channel.status !== 'active' || found.channel.provider !== 'twilio') {
      return parts.refuse('twilio', 'not_found', 404, 'Channel not found.', channelId);
    }
    const signature = request.header(TWILIO_SIGNATURE_HEADER);
    if (!twilioSignatureWellFormed(signature)) return parts.refuse('twilio', 'bad_signature', 403, 'Missing or malformed X-Twilio-Signature.', channelId);
    let body: Buffer;
    try {
      body = (await request.body(parts.bodyLimit)) ?? Buffer.alloc(0);
    } catch (error) {
      if (error instanceof HttpError && error.status === 413) return parts.refuse('twilio', 'too_large', 413, 'Request body too large.', channelId);
      throw error;
    }
    const contentType = request.header('content-type');
    const signedUrl = `${base}${request.url.pathname}${request.url.search}`;
    if (!verifyTwilioSignature(signature, found.secrets.authToken ?? '', signedUrl, formParams(body, contentType))) {
      return parts.refuse('twilio', 'bad_signature', 403, 'The signature does not match the request.', channelId);
    }
    const problem = twilioFormProblem(kind, body, contentType);
    if (problem) return parts.refuse('twilio', 'malformed', 400, problem, channelId);
    await parts.store(found.channel, 'twilio', { 'content-type': contentType ?? '', [TWILIO_KIND_HEADER]: kind }, body);
    inboundReceived.labels('twilio', 'accepted').inc();
    if (kind === 'status') return { status: 200, headers: {}, body: null };
    return { status: 200, headers: { 'content-type': 'text/xml; charset=utf-8' }, body: TWIML_EMPTY };
  };
}
