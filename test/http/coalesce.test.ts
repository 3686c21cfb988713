import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { writeCoalescer, type WriteCoalescer } from '../../src/realtime/coalesce.js';

/*
 * The writes of a held connection leave together at most once per interval (src/realtime/coalesce.ts),
 * at once when it was quiet for longer, and a crowd's connections are written within the
 * coalescer's budget of socket writes a second. Real loopback sockets: what a client reads is what
 * the server's flushes wrote.
 */

const CONNECTIONS = 40;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/** `count` loopback connections held by `coalescer`: the server's sockets, once every one is accepted; `onData` hears each client's reads. */
async function heldConnections(coalescer: WriteCoalescer, count: number, onData: (index: number, chunk: Buffer) => void): Promise<net.Socket[]> {
  const accepted: net.Socket[] = [];
  const server = net.createServer((socket) => {
    coalescer.hold(socket);
    accepted.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const clients = await Promise.all(
    Array.from({ length: count }, (_, index) =>
      new Promise<net.Socket>((resolve) => {
        const client = net.connect(port, '127.0.0.1', () => resolve(client));
        client.on('data', (chunk: Buffer) => onData(index, chunk));
      }),
    ),
  );
  cleanup = async () => {
    coalescer.dispose();
    for (const client of clients) client.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  while (accepted.length < count) await sleep(5);
  return accepted;
}

/** `CONNECTIONS` connections held by `coalescer`, written to every 5 ms for `ms`: how many reads each client saw, and the bytes. */
async function writeFor(coalescer: WriteCoalescer, ms: number) {
  const reads: number[] = Array(CONNECTIONS).fill(0);
  const bytes: number[] = Array(CONNECTIONS).fill(0);
  const accepted = await heldConnections(coalescer, CONNECTIONS, (index, chunk) => {
    reads[index]!++;
    bytes[index]! += chunk.length;
  });
  const end = Date.now() + ms;
  let written = 0;
  while (Date.now() < end) {
    for (const socket of accepted) socket.write('x'.repeat(10));
    written += 10;
    await sleep(5);
  }
  // The last flush, then what is still on its way.
  await sleep(300);
  return { reads, bytes, written };
}

describe('write coalescing', () => {
  it('flushes each held connection once per interval, every byte delivered', { timeout: 20_000 }, async () => {
    const { reads, bytes, written } = await writeFor(writeCoalescer(20, 1_000_000), 1000);
    expect(bytes.every((count) => count === written)).toBe(true);
    // About one read per 20 ms interval (fewer when a busy client reads two flushes at once), never one per write.
    expect(Math.max(...reads)).toBeLessThan(70);
    expect(Math.min(...reads)).toBeGreaterThan(15);
  });

  it("spaces a crowd's writes so that they stay within the budget a second", { timeout: 20_000 }, async () => {
    // 40 connections with something to write every tick, 400 writes a second: each written about
    // every 100 ms — 10 in the second, the first ones at once from the allowance, the last after it
    // (at most 13), where the 20 ms interval alone would allow 50.
    const { reads, bytes, written } = await writeFor(writeCoalescer(20, 400), 1000);
    expect(bytes.every((count) => count === written)).toBe(true);
    expect(Math.max(...reads)).toBeLessThanOrEqual(13);
    expect(Math.min(...reads)).toBeGreaterThanOrEqual(5);
  });

  it("writes a quiet connection's results at once and a busy one's once its interval has passed", { timeout: 20_000 }, async () => {
    const coalescer = writeCoalescer(1000, 1_000_000);
    const arrived: { text: string; at: number }[] = [];
    const [socket] = (await heldConnections(coalescer, 1, (_, chunk) => arrived.push({ text: chunk.toString(), at: performance.now() }))) as [net.Socket];
    const sent = (count: number) =>
      new Promise<void>((resolve) => {
        const wait = () => (arrived.length >= count ? resolve() : void setTimeout(wait, 5));
        wait();
      });
    // Never written: what is deferred leaves at once, not up to an interval (1 s) later.
    let asked = performance.now();
    expect(coalescer.defer(socket, () => socket.write('a'))).toBe(true);
    await sent(1);
    expect(arrived[0]!.at - asked).toBeLessThan(200);
    // Written again at once, deferred and straight: these wait until the interval since the last
    // writes has passed, and leave together (the deferred write runs just before they leave).
    expect(coalescer.defer(socket, () => socket.write('b'))).toBe(true);
    socket.write('c');
    await sent(2);
    expect(arrived[1]!.at - arrived[0]!.at).toBeGreaterThan(800);
    // Quiet for longer than the interval: at once again.
    await sleep(1100);
    asked = performance.now();
    expect(coalescer.defer(socket, () => socket.write('d'))).toBe(true);
    await sent(3);
    expect(arrived[2]!.at - asked).toBeLessThan(200);
    expect(arrived.map((chunk) => chunk.text)).toEqual(['a', 'cb', 'd']);
  });
});
