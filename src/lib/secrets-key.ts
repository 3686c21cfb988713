import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Sealer, newKey, parseKey } from './sealed.js';

/** Where the embedded database keeps its generated key: `secrets.key` beside the PGlite directory. */
export function keyFilePath(pgliteDir: string): string {
  const dir = path.resolve(pgliteDir);
  return path.join(path.dirname(dir), 'secrets.key');
}

/**
 * The sealer of this process (docs/channels.md): SECRETS_KEY (with SECRETS_KEY_PREVIOUS during a
 * rotation) when set. Otherwise, on the embedded database, a key generated once into
 * `secrets.key` (mode 0600) beside its directory — or kept in memory for an in-memory one; on
 * PostgreSQL, none: secrets can then be neither stored nor opened.
 */
export function loadSealer(options: {
  key: Buffer | undefined;
  previous: Buffer | undefined;
  kind: 'postgres' | 'pglite';
  pgliteDir: string;
}): Sealer | null {
  if (options.key) return new Sealer(options.key, options.previous);
  if (options.kind === 'postgres') return null;
  if (options.pgliteDir.startsWith('memory://')) return new Sealer(newKey());
  const file = keyFilePath(options.pgliteDir);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (!fs.existsSync(file)) createKeyFile(file);
  const key = parseKey(fs.readFileSync(file, 'utf8'));
  if (!key) throw new Error(`${file} holds no key (base64 of 32 bytes): restore it from a backup, or set SECRETS_KEY`);
  return new Sealer(key, options.previous);
}

/**
 * Writes a new key to `file` whole or not at all: the key is written to a file of its own first,
 * then linked into place, which fails when `file` exists. Two processes starting at once thus
 * agree on one key, and neither ever reads a file the other is still writing.
 */
function createKeyFile(file: string): void {
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(temporary, `${newKey().toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
    fs.linkSync(temporary, file);
  } catch (error) {
    // Another process linked its key first: that one is read.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}
