import { createHash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

/** Recognisable prefixes, so that secret scanners can find leaked credentials. */
export const TOKEN_PREFIX = { channelKey: 'cak_', connection: 'cct_', session: 'cst_' } as const;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 40 base62 characters: about 238 random bits. */
const RANDOM_LENGTH = 40;
const CHECKSUM_LENGTH = 6;

function base62(value: number, width: number): string {
  let out = '';
  for (let rest = value; out.length < width; rest = Math.floor(rest / 62)) out = BASE62[rest % 62] + out;
  return out;
}

/** CRC32 of the random part in 6 base62 characters, as GitHub's tokens carry it. */
function checksum(random: string): string {
  return base62(crc32(random), CHECKSUM_LENGTH);
}

/** `<prefix><40 random base62><6 base62 CRC32 of the random part>`. */
export function generateToken(prefix: string): string {
  let random = '';
  for (let i = 0; i < RANDOM_LENGTH; i++) random += BASE62[randomInt(62)];
  return prefix + random + checksum(random);
}

const CURRENT_SHAPE = new RegExp(`^(?:cak|cct|cst)_([0-9A-Za-z]{${RANDOM_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`);
/** Tokens issued before the checksum (backend credentials only): 32 random bytes in base64url. */
const EARLIER_SHAPE = /^(?:cak|cct)_[0-9A-Za-z_-]{43}$/;

/**
 * Whether a bearer value can be one of our tokens at all: a current token whose
 * checksum matches, or one issued before checksums. A mistyped or malformed
 * token is refused without asking the database.
 */
export function isWellFormedToken(token: string): boolean {
  const current = CURRENT_SHAPE.exec(token);
  if (current) return checksum(current[1]!) === current[2];
  return EARLIER_SHAPE.test(token);
}

/** Tokens carry over 230 random bits, so a plain SHA-256 is a safe one-way digest for lookup. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The non-secret start of a token, kept to tell keys apart. */
export function displayPrefix(token: string): string {
  return token.slice(0, 12);
}
