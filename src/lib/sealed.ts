import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (docs/channels.md): provider credentials and webhook signing secrets are stored
 * sealed with AES-256-GCM under SECRETS_KEY, never in clear. A sealed value names the key that
 * sealed it (the first 8 hex digits of its SHA-256), so a rotation can read values sealed with
 * the previous key while it re-seals them, and a wrong key is told apart from a damaged value.
 *
 *   sealed:v1:<key id>:<base64 of IV (12 bytes) ‖ tag (16 bytes) ‖ ciphertext>
 */
const PREFIX = 'sealed:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SealError extends Error {
  override name = 'SealError';
}

/** The id of a key as sealed values name it. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

export function isSealed(value: string): boolean {
  return value.startsWith(PREFIX);
}

/** The id of the key that sealed `value`, or null for a value that is not sealed. */
export function sealedKeyId(value: string): string | null {
  if (!isSealed(value)) return null;
  return value.slice(PREFIX.length, PREFIX.length + 8);
}

/** A key from its setting: base64 of exactly 32 bytes. */
export function parseKey(base64: string): Buffer | null {
  const trimmed = base64.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed)) return null;
  const key = Buffer.from(trimmed, 'base64');
  return key.length === 32 ? key : null;
}

export function newKey(): Buffer {
  return randomBytes(32);
}

/** Seals with the current key; opens with it or with the previous one (during a rotation). */
export class Sealer {
  readonly currentKeyId: string;
  private readonly keys: Map<string, Buffer>;

  constructor(current: Buffer, previous?: Buffer | null) {
    this.currentKeyId = keyId(current);
    this.keys = new Map([[this.currentKeyId, current]]);
    if (previous) this.keys.set(keyId(previous), previous);
  }

  /** Whether values sealed with the key `id` can be opened. */
  knows(id: string): boolean {
    return this.keys.has(id);
  }

  seal(plain: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId)!, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${PREFIX}${this.currentKeyId}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /** The clear text of a sealed value; a SealError names what is wrong, never the value. */
  open(sealed: string): string {
    const id = sealedKeyId(sealed);
    if (id === null) throw new SealError('the value is not sealed');
    const key = this.keys.get(id);
    if (!key) throw new SealError(`the value was sealed with key ${id}, which is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS`);
    const packed = Buffer.from(sealed.slice(PREFIX.length + 9), 'base64');
    if (packed.length < IV_BYTES + TAG_BYTES) throw new SealError(`a value sealed with key ${id} is damaged`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, packed.subarray(0, IV_BYTES));
      decipher.setAuthTag(packed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(packed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SealError(`a value sealed with key ${id} does not open with that key: it is damaged`);
    }
  }

  /** Seals a value sealed with another key, or in clear, with the current key; one sealed with it is kept. */
  reseal(value: string): string {
    if (sealedKeyId(value) === this.currentKeyId) return value;
    return this.seal(isSealed(value) ? this.open(value) : value);
  }
}
