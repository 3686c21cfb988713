import fc from 'fast-check';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../src/lib/time.js';
import { parseTimestamptz } from '../../src/db/timestamps.js';

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

describe('parseTimestamptz', () => {
  /** PostgreSQL's text form of `date` at a UTC offset of `offsetMinutes`, with `digits` of fraction (0–6). */
  function postgresText(date: Date, offsetMinutes: number, digits: number, micros: number): string {
    const local = new Date(date.getTime() + offsetMinutes * 60_000).toISOString();
    const fraction = `${local.slice(20, 23)}${String(micros).padStart(3, '0')}`.slice(0, digits).replace(/0+$/, '');
    const sign = offsetMinutes < 0 ? '-' : '+';
    const abs = Math.abs(offsetMinutes);
    const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}${abs % 60 ? `:${String(abs % 60).padStart(2, '0')}` : ''}`;
    return `${local.slice(0, 10)} ${local.slice(11, 19)}${fraction ? `.${fraction}` : ''}${offset}`;
  }

  it('reads every timestamp PostgreSQL writes as pg’s own parser does', () => {
    const pgParser = pg.types.getTypeParser(1184, 'text') as (text: string) => Date;
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1000-01-02T00:00:00Z'), max: new Date('9999-12-30T00:00:00Z'), noInvalidDate: true }),
        fc.integer({ min: -15 * 60, max: 15 * 60 }).map((m) => m - (m % 15)),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 999 }),
        (date, offset, digits, micros) => {
          const text = postgresText(date, offset, digits, micros);
          expect(parseTimestamptz(text).getTime(), text).toBe(pgParser(text).getTime());
        },
      ),
      { numRuns: 20_000 },
    );
    for (const text of ['2026-11-26 08:09:20.266+00', '2026-11-26 08:09:20+00', '2026-11-26 09:39:20.5+01:30', '1999-12-31 19:00:00.123456-05', 'infinity', '-infinity', '0099-01-01 00:00:00+00', '0044-03-15 12:00:00+00 BC', '12345-01-01 00:00:00+00', '1900-01-01 00:00:00+00:19:32']) {
      expect(String(parseTimestamptz(text)), text).toBe(String(pgParser(text)));
    }
  });
});
