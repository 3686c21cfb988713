import { Writable } from 'node:stream';
import { runAdmin } from '../../src/cli/run-admin.js';
import type { Database } from '../../src/db/database.js';
import { loadEnv } from '../../src/env.js';
import { TEST_SECRETS_KEY } from './secrets.js';

export interface AdminResult {
  code: number;
  /** Standard output as JSON, when the command succeeded and printed an object. */
  json: any;
  stdout: string;
  stderr: string;
}

/**
 * Runs an admin command in this process, the way `npm run admin` does, on `db` (left open), with
 * the tests' SECRETS_KEY and `env` over it; `terminal` stands for the stderr stream a progress bar
 * is drawn on (a terminal when its `isTTY` is true); `onInterrupt` stands for Ctrl-C (it receives
 * what a command does on Ctrl-C, for the test to call). `stderrTimes`: when each stderr line came.
 */
export async function runAdminOn(
  db: Database,
  argv: string[],
  env: Record<string, string> = {},
  options: { terminal?: NodeJS.WritableStream & { isTTY?: boolean }; onInterrupt?: (stop: () => void) => () => void } = {},
): Promise<AdminResult & { stderrTimes: number[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const stderrTimes: number[] = [];
  const code = await runAdmin(
    argv,
    loadEnv({ NODE_ENV: 'test', SECRETS_KEY: TEST_SECRETS_KEY, ...env }),
    {
      stdout: (line) => out.push(line),
      stderr: (line) => {
        err.push(line);
        stderrTimes.push(Date.now());
      },
      ...(options.terminal ? { terminal: options.terminal } : {}),
      ...(options.onInterrupt ? { onInterrupt: options.onInterrupt } : {}),
    },
    async () => ({ ...db, close: async () => {} }),
  );
  return { code, json: code === 0 && out[0]?.startsWith('{') ? JSON.parse(out.join('\n')) : undefined, stdout: out.join('\n'), stderr: err.join('\n'), stderrTimes };
}

/** A stand-in for a terminal (`isTTY`, 200 columns) for runAdminOn's `terminal`: what was drawn on it, as `drawn()`. */
export function recordingTerminal(): { terminal: NodeJS.WritableStream & { isTTY: boolean }; drawn(): string } {
  let drawn = '';
  const terminal = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        drawn += String(chunk);
        done();
      },
    }),
    { isTTY: true, columns: 200 },
  );
  return { terminal, drawn: () => drawn };
}
