import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { accepts, freePort } from './server-process.js';

/**
 * A redis-server of the test's own, on a free port, that the test may stop and start again: the
 * shared Redis on 6379 is never touched. Nothing is persisted (no RDB, no AOF).
 */
export interface OwnRedis {
  url: string;
  port: number;
  /** Stops the server (SIGKILL: gone at once, as a crashed or unplugged Redis is) and waits until the port refuses. */
  stop(): Promise<void>;
  /** Starts it again on the same port and waits until it accepts connections. */
  start(): Promise<void>;
}

async function until(probe: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`redis-server: ${what} not reached in time`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function startOwnRedis(): Promise<OwnRedis & { close(): Promise<void> }> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  const start = async () => {
    if (child) return;
    const started = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', os.tmpdir(), '--loglevel', 'warning'], {
      stdio: 'ignore',
    });
    child = started;
    exited = new Promise((resolve) => started.once('exit', () => resolve()));
    await until(() => accepts(port), 'accepting connections');
  };
  const stop = async () => {
    if (!child) return;
    child.kill('SIGKILL');
    child = null;
    await exited;
    await until(async () => !(await accepts(port)), 'refusing connections');
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, start, stop, close: stop };
}
