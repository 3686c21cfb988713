import { randomBytes } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

let lastIdMs = -1;
let idSequence = 0;

/**
 * A time-ordered id (UUID version 7), as the schema's uuid(7) default makes them:
 * 48 bits of milliseconds, then a 30-bit sequence that starts at random each
 * millisecond and counts up within it, then random bits. Ids made by this process
 * keep their order within a millisecond, as messages listed newest first need.
 */
export function uuid7(): string {
  const bytes = randomBytes(16);
  const now = Date.now();
  if (now > lastIdMs) {
    lastIdMs = now;
    idSequence = bytes.readUInt32BE(6) >>> 3;
  } else if (++idSequence > 0x3fffffff) {
    lastIdMs++;
    idSequence = 0;
  }
  bytes.writeUIntBE(lastIdMs, 0, 6);
  bytes[6] = 0x70 | ((idSequence >>> 26) & 0x0f);
  bytes[7] = (idSequence >>> 18) & 0xff;
  bytes[8] = 0x80 | ((idSequence >>> 12) & 0x3f);
  bytes[9] = (idSequence >>> 4) & 0xff;
  bytes[10] = ((idSequence & 0x0f) << 4) | (bytes[10]! & 0x0f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
