import { describe, expect, it } from 'vitest';
import { isUuid, uuid7 } from '../src/lib/uuid.js';

describe('uuid7', () => {
  it('makes version 7 ids, unique and in order, across many refills of its random bytes', () => {
    // 10 000 ids take the random bytes of about 40 refills.
    const ids = Array.from({ length: 10_000 }, () => uuid7());
    for (const id of ids) {
      expect(isUuid(id)).toBe(true);
      expect(id[14]).toBe('7');
      expect('89ab').toContain(id[19]);
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    // Their random tails differ: the bytes are not handed out twice.
    expect(new Set(ids.map((id) => id.slice(24))).size).toBe(ids.length);
  });
});
