import { expect } from 'vitest';
import { onPostgres, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';

/** One provider channel as the shared inbound scenarios drive it. */
export interface InboundChannel {
  workspaceId: string;
  channelId: string;
  /** Posts the same inbound message every time, signed as the provider signs it. */
  postCopy(): Promise<{ status: number }>;
  /** Inbound events stored for the channel. */
  stored(): Promise<number>;
  /** Stored inbound events not yet processed. */
  pendingInbound(): Promise<number>;
  messages(): Promise<{ body: string | null }[]>;
  /** Starts one more worker beside the app (stopped by the test's cleanup). */
  startWorker(): void;
}

/**
 * Copies of one inbound message, sent one after another or at once and processed by several
 * workers at once, make one message, one contact and one conversation; a copy arriving after
 * processing changes nothing either. Every provider's webhook holds to this.
 */
export async function expectCopiesStoredOnce(app: TestApp, channel: InboundChannel, text: string): Promise<void> {
  const copies = onPostgres ? 12 : 4;
  const answers = await Promise.all(Array.from({ length: copies }, () => channel.postCopy()));
  expect(answers.map((a) => a.status)).toEqual(Array(copies).fill(200));
  expect(await channel.stored()).toBe(copies);
  // Several workers at once, each claiming some of the copies.
  for (let n = 0; n < 3; n++) channel.startWorker();
  await until(async () => (await channel.pendingInbound()) === 0, 'all processed');
  // And one more copy afterwards.
  expect((await channel.postCopy()).status).toBe(200);
  await until(async () => (await channel.pendingInbound()) === 0, 'the late copy processed');
  expect((await channel.messages()).map((m) => m.body)).toEqual([text]);
  expect(await app.db.prisma.contact.count({ where: { workspaceId: channel.workspaceId } })).toBe(1);
  expect(await app.db.prisma.conversation.count({ where: { channelId: channel.channelId } })).toBe(1);
}
