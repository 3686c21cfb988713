import { z } from 'zod';
import { FetchResponse } from '../../lib/response.js';
import type { WebhookDeclaration } from '../provider.js';
import { TWILIO_KIND_HEADER, formParams, twilioFormProblem, type TwilioWebhookKind } from './inbound.js';
import { TWILIO_SIGNATURE_HEADER, twilioSignatureWellFormed, verifyTwilioSignature } from './signature.js';

/** The answer to an inbound message: empty TwiML, so Twilio sends no reply of its own. */
const TWIML_EMPTY = '<Response></Response>';

const SIGNATURE = {
  header: 'X-Twilio-Signature',
  description: 'Base64 HMAC-SHA1, keyed with the auth token, of the URL under PUBLIC_URL followed by each form key and value, sorted by key.',
};

const FORM = { contentType: 'application/x-www-form-urlencoded', description: 'The form Twilio posts (at most 1 MiB).' };

const params = z.object({ channelId: z.string().meta({ format: 'uuid', description: 'The channel the webhook URL was made for.' }) });

/** Where Twilio posts a channel's inbound messages; statuses go to the same URL + `/status`, which every sent message names. */
export const twilioAddress = (publicUrl: string, channelId: string) => `${publicUrl}/webhooks/twilio/${channelId}`;

/**
 * POST /webhooks/twilio/{channelId} (messages) and /webhooks/twilio/{channelId}/status
 * (docs/providers.md, Inbound), checked in order: an unknown, inactive or other-provider channel
 * is 404; a missing or wrong `X-Twilio-Signature` 403; a body over the limit 413; a verified body
 * that is not a readable form 400. The signature is checked against the URL under PUBLIC_URL —
 * the URL Twilio requested, not the one a proxy in front of the gateway forwarded to.
 */
function twilioRoutes(): WebhookDeclaration[] {
  const handler =
    (kind: TwilioWebhookKind): WebhookDeclaration['handler'] =>
    async ({ request, url, params: matched }, parts) => {
      const channelId = matched.channelId!;
      const found = await parts.channelOf(channelId, 'twilio');
      if (!found) return parts.refuse('twilio', 'not_found', 404, 'Channel not found.', channelId);
      const signature = request.headers.get(TWILIO_SIGNATURE_HEADER);
      if (!twilioSignatureWellFormed(signature)) return parts.refuse('twilio', 'bad_signature', 403, 'Missing or malformed X-Twilio-Signature.', channelId);
      const read = await parts.body(request, 'twilio', channelId);
      if ('refused' in read) return read.refused;
      const body = read.bytes;
      const contentType = request.headers.get('content-type');
      const signedUrl = `${parts.publicUrl}${url.pathname}${url.search}`;
      if (!verifyTwilioSignature(signature, found.secrets.authToken ?? '', signedUrl, formParams(body, contentType))) {
        return parts.refuse('twilio', 'bad_signature', 403, 'The signature does not match the request.', channelId);
      }
      const problem = twilioFormProblem(kind, body, contentType);
      if (problem) return parts.refuse('twilio', 'malformed', 400, problem, channelId);
      await parts.store(found.channel, 'twilio', { 'content-type': contentType ?? '', [TWILIO_KIND_HEADER]: kind }, body);
      if (kind === 'status') return new FetchResponse(null, { status: 200 });
      return new FetchResponse(TWIML_EMPTY, { status: 200, headers: { 'content-type': 'text/xml; charset=utf-8' } });
    };
  const refusals = {
    400: { description: 'The signed body is not a form Twilio sends.' },
    403: { description: 'The signature is missing, malformed or does not match the request.' },
    404: { description: 'No active Twilio channel has this id.' },
    413: { description: 'The body is over 1 MiB.' },
  };
  return [
    {
      method: 'POST',
      path: '/webhooks/twilio/:channelId',
      operationId: 'receiveTwilioMessage',
      summary: 'Twilio inbound SMS/MMS',
      description: "The channel's number's messaging webhook: stored before the answer, then processed.",
      params,
      signature: SIGNATURE,
      body: FORM,
      responses: { 200: { description: 'Stored; empty TwiML, so Twilio sends no reply of its own.', contentType: 'text/xml' }, ...refusals },
      handler: handler('message'),
    },
    {
      method: 'POST',
      path: '/webhooks/twilio/:channelId/status',
      operationId: 'receiveTwilioStatus',
      summary: 'Twilio delivery statuses',
      description: "The `StatusCallback` of the channel's sends: statuses move a message forward only.",
      params,
      signature: SIGNATURE,
      body: FORM,
      responses: { 200: { description: 'Stored; it will be processed.' }, ...refusals },
      handler: handler('status'),
    },
  ];
}

export const twilioWebhooks = twilioRoutes();
