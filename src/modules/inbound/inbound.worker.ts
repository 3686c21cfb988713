import type { Channel } from '../../generated/prisma/client.js';
import type { Sealer } from '../../lib/sealed.js';
import type { InboundEvent, InboundParser } from '../../providers/provider.js';
import type { InboundParsers } from '../../providers/registry.js';
import { inboundProcessed } from '../../metrics/process.js';
import { redactSecrets } from '../../lib/redact.js';
import { openProviderSecrets } from '../channels/channel-secrets.js';
import { applyStatus, receiveMessage, type InboundContext } from './inbound.service.js';

/** How long a status for a provider id that is not stored yet is retried before it is dropped. */
export const UNKNOWN_STATUS_RETRY_MS = 10 * 60_000;

/** A status that named a message not stored yet: the event is processed again later. */
export class StatusAheadOfSend extends Error {
  override name = 'StatusAheadOfSend';
}

/**
 * Processes one stored inbound event (docs/channels.md): parses it with its provider and applies
 * every message and status, each to the channel it was sent to. Messages are idempotent and
 * statuses forward-only, so processing an event again (a retry, a reprocess) changes nothing twice.
 * Throws to be retried: a failure, or a status ahead of its send while the event is younger than
 * UNKNOWN_STATUS_RETRY_MS.
 */
export async function processInboundEvent(ctx: InboundContext & { parsers: InboundParsers; sealer: Sealer | null }, eventId: string): Promise<void> {
  const [stored] = await ctx.prisma.$queryRaw<{ size: number }[]>`SELECT octet_length(body)::int AS size FROM inbound_events WHERE id = ${eventId}::uuid`;
  if (!stored) return;
  if (stored.size <= LARGE_EVENT_BYTES) return processLoaded(ctx, eventId);
  const run = largeEvents.then(() => processLoaded(ctx, eventId));
  largeEvents = run.catch(() => {});
  return run;
}

/**
 * A stored event this large (a big email) is loaded and read with no other such event in this
 * process: reading holds it several times over (docs/operating-safely.md, Staying up).
 */
export const LARGE_EVENT_BYTES = 1024 * 1024;

/** The large events being processed, one after another. */
let largeEvents: Promise<unknown> = Promise.resolve();

async function processLoaded(ctx: InboundContext & { parsers: InboundParsers; sealer: Sealer | null }, eventId: string): Promise<void> {
  const event = await ctx.prisma.inboundEvent.findUnique({ where: { id: eventId }, include: { channel: true } });
  if (!event) return;
  const parser = ctx.parsers(event.provider);
  const groups = await parser.parse({
    // A view of the stored bytes, not a copy: a stored email may be megabytes.
    body: Buffer.from(event.body.buffer, event.body.byteOffset, event.body.byteLength),
    headers: event.headers as Record<string, string>,
    receivedAt: event.receivedAt,
    channel: event.channel,
    eventId: event.id,
  });
  let ahead = 0;
  for (const group of groups) {
    for (const reason of group.unsupported ?? []) {
      ctx.logger.info({ inboundEventId: event.id, channelId: event.channelId, reason }, 'inbound item not supported: ignored');
      inboundProcessed.labels(event.provider, 'unsupported').inc();
    }
    const channel = group.route === undefined ? event.channel : await routedChannel(ctx, event.channel, parser, group.route);
    if (!channel) {
      ctx.logger.warn(
        { inboundEventId: event.id, channelId: event.channelId, events: group.events.length },
        'inbound events for a number no channel of the workspace with the same signing secret has: ignored',
      );
      inboundProcessed.labels(event.provider, 'unrouted').inc(group.events.length);
      continue;
    }
    for (const item of group.events) ahead += (await apply(ctx, channel, item, event.provider)) ? 0 : 1;
  }
  if (ahead === 0) return;
  const age = Date.now() - event.receivedAt.getTime();
  if (age < UNKNOWN_STATUS_RETRY_MS) throw new StatusAheadOfSend(`${ahead} status(es) for messages not stored yet; retrying`);
  ctx.logger.warn({ inboundEventId: event.id, statuses: ahead }, 'statuses for provider ids never stored: dropped after 10 minutes');
}

/** Applies one event; false for a status whose message is not stored yet. */
async function apply(ctx: InboundContext & { sealer: Sealer | null }, channel: Channel, item: InboundEvent, provider: string): Promise<boolean> {
  if (item.kind === 'message') {
    const result = await receiveMessage(ctx, channel, item);
    inboundProcessed.labels(provider, result === 'stored' ? 'message' : 'duplicate').inc();
    return true;
  }
  // A provider's error text may echo a credential of the channel: it is stored and shown without it.
  const status = item.error ? { ...item, error: { code: item.error.code, text: redactSecrets(item.error.text, Object.values(openProviderSecrets(channel, ctx.sealer))) } } : item;
  const result = await applyStatus(ctx, channel, status);
  inboundProcessed.labels(provider, `status_${result.replace('-', '_')}`).inc();
  if (result === 'other-channel') ctx.logger.info({ channelId: channel.id }, 'status for another channel’s message: ignored');
  return result !== 'unknown';
}

/**
 * The active channel of the same workspace and provider whose route setting is `value` (a
 * number's id at the provider) and, when the parser names the secret that signed the webhook, whose secret is the
 * receiving channel's: the signature proved that secret only, so a channel with another secret
 * gets nothing from it.
 */
async function routedChannel(ctx: InboundContext & { sealer: Sealer | null }, receiving: Channel, parser: InboundParser, value: string): Promise<Channel | null> {
  const setting = parser.routeSetting!;
  if ((receiving.providerSettings as Record<string, unknown>)[setting] === value) return receiving;
  const candidates = await ctx.prisma.channel.findMany({
    where: { workspaceId: receiving.workspaceId, provider: receiving.provider, status: 'active', providerSettings: { path: [setting], equals: value } },
    orderBy: { createdAt: 'asc' },
  });
  if (!parser.routeSecret) return candidates[0] ?? null;
  const proven = openProviderSecrets(receiving, ctx.sealer)[parser.routeSecret];
  if (!proven) return null;
  return candidates.find((candidate) => openProviderSecrets(candidate, ctx.sealer)[parser.routeSecret!] === proven) ?? null;
}
