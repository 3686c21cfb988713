import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../src/lib/time.js';

describe('isoTimestamp', () => {
  it('writes every date exactly as toISOString does', () => {
    // The whole range a Date can hold, so the years it leaves to toISOString are covered too.
    fc.assert(
      fc.property(fc.date({ noInvalidDate: true }), (date) => {
        expect(isoTimestamp(date)).toBe(date.toISOString());
      }),
      { numRuns: 20_000 },
    );
    for (const at of ['0999-12-31T23:59:59.999Z', '1000-01-01T00:00:00.000Z', '1970-01-01T00:00:00.000Z', '2024-02-29T09:05:03.007Z', '2026-11-23T23:59:59.090Z', '9999-12-31T23:59:59.999Z', '+010000-01-01T00:00:00.000Z']) {
      expect(isoTimestamp(new Date(at))).toBe(at);
    }
  });

  it('refuses an invalid date as toISOString does', () => {
    expect(() => isoTimestamp(new Date(Number.NaN))).toThrow(RangeError);
  });
});
