/**
 * The bus against yoga's pub/sub (`npx tsx bench/pubsub.ts [subscribers] [events] [channels]`):
 * one process, no Redis, the shape of the crowd row — many subscribers of one event type, each
 * following one of `channels` channels — with each subscriber reading its stream as a
 * subscription's source does (for await). The same events go through src/realtime/bus.ts (a
 * filter tested as each event is published, one bounded queue per subscriber) and through
 * graphql-yoga's `createPubSub` with `pipe(subscribe(topic), filter(...))`, as yoga's docs filter a
 * topic. Printed: the time from the first publish until every subscriber has its events, the CPU
 * spent, and the heap held by the idle subscribers. Recorded in docs/decisions.md, Serving.
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { createPubSub, filter, pipe } from 'graphql-yoga';
import { pino } from 'pino';
import type { DomainEvent } from '../src/context/services.js';
import { createEventBus } from '../src/realtime/bus.js';

// yoga's pub/sub is an EventTarget with a listener per subscriber: no warning for thousands of them.
setMaxListeners(Infinity);

const SUBSCRIBERS = Number(process.argv[2] ?? 2000);
const EVENTS = Number(process.argv[3] ?? 1000);
const CHANNELS = Number(process.argv[4] ?? 20);
/** Events published in one turn of the event loop, as a burst of sends answered together. */
const BURST = 50;

type Created = Extract<DomainEvent, { type: 'message.created' }>;
const event = (n: number): Created => ({
  type: 'message.created',
  messageId: `m${n}`,
  conversationId: `c${n % 400}`,
  workspaceId: 'w',
  channelId: `ch${n % CHANNELS}`,
});
const expected = (channel: number) => Math.floor(EVENTS / CHANNELS) + (channel < EVENTS % CHANNELS ? 1 : 0);

const collect = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
};

/** Subscribes every subscriber with `open`, then publishes in bursts: the figures of one run. */
async function run(label: string, open: (channel: string) => AsyncIterable<Created>, publish: (event: Created) => void) {
  const before = collect();
  let pending = SUBSCRIBERS;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const streams = Array.from({ length: SUBSCRIBERS }, (_, i) => ({ channel: i % CHANNELS, stream: open(`ch${i % CHANNELS}`) }));
  for (const { channel, stream } of streams) {
    void (async () => {
      let seen = 0;
      const want = expected(channel);
      for await (const _event of stream) {
        if (++seen === want) break;
      }
      if (--pending === 0) done();
    })();
  }
  await new Promise((resolve) => setImmediate(resolve));
  const idle = (collect() - before) / SUBSCRIBERS;
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let n = 0; n < EVENTS; n += BURST) {
    for (let k = n; k < Math.min(n + BURST, EVENTS); k++) publish(event(k));
    await new Promise((resolve) => setImmediate(resolve));
  }
  await finished;
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  console.log(
    `${label.padEnd(28)} ${ms.toFixed(0).padStart(6)} ms   CPU ${((used.user + used.system) / 1000).toFixed(0).padStart(6)} ms   ` +
      `${(idle / 1024).toFixed(1).padStart(6)} KiB per idle subscriber`,
  );
}

console.log(`${SUBSCRIBERS} subscribers over ${CHANNELS} channels, ${EVENTS} events in bursts of ${BURST} (node ${process.version})`);
for (let round = 0; round < 3; round++) {
  const bus = createEventBus({ logger: pino({ level: 'silent' }), maxPending: EVENTS });
  await run('src/realtime/bus.ts', (channel) => bus.subscribe('message.created', (e) => e.channelId === channel), (e) => bus.publish(e));
  await bus.dispose();
  const pubsub = createPubSub<{ 'message.created': [Created] }>();
  await run(
    "yoga createPubSub + filter",
    (channel) => pipe(pubsub.subscribe('message.created'), filter((e: Created) => e.channelId === channel)),
    (e) => pubsub.publish('message.created', e),
  );
}
