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
 * the tests' SECRETS_KEY and `env` over it.
 */
export async function runAdminOn(db: Database, argv: string[], env: Record<string, string> = {}): Promise<AdminResult> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(
    argv,
    loadEnv({ NODE_ENV: 'test', SECRETS_KEY: TEST_SECRETS_KEY, ...env }),
    { stdout: (line) => out.push(line), stderr: (line) => err.push(line) },
    async () => ({ ...db, close: async () => {} }),
  );
  return { code, json: code === 0 && out[0]?.startsWith('{') ? JSON.parse(out.join('\n')) : undefined, stdout: out.join('\n'), stderr: err.join('\n') };
}
