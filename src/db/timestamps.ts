import pg from 'pg';

/** PostgreSQL's `timestamptz` type. */
const TIMESTAMPTZ_OID = 1184;

const digit = (text: string, at: number) => text.charCodeAt(at) - 48;
const two = (text: string, at: number) => digit(text, at) * 10 + digit(text, at + 1);

/** pg's own parser (postgres-date), for every form the fast path does not read. */
const parseAnyTimestamp = pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (text: string) => Date;

/**
 * A `timestamptz` in PostgreSQL's text form as a Date: `YYYY-MM-DD HH:MM:SS[.ffffff]±HH[:MM]`, the
 * form every row the hot paths read comes in (ISO DateStyle, years 1000 to 9999), read digit by
 * digit; anything else (`infinity`, BC, a five-digit year, an offset with seconds) by pg's own
 * parser. Fractions beyond milliseconds are cut off, as pg's parser does. A page of 25 contacts
 * holds 50 timestamps: the regular expressions of pg's parser cost about 0.8 µs each.
 */
export function parseTimestamptz(text: string): Date {
  const length = text.length;
  if (length < 22 || text[4] !== '-' || text[7] !== '-' || text[10] !== ' ' || text[13] !== ':' || text[16] !== ':') return parseAnyTimestamp(text);
  let at = 19;
  let ms = 0;
  if (text[at] === '.') {
    let scale = 100;
    for (at++; at < length; at++) {
      const d = digit(text, at);
      if (d < 0 || d > 9) break;
      ms += d * scale;
      scale /= 10;
    }
    ms = Math.floor(ms);
  }
  const sign = text[at] === '+' ? 1 : text[at] === '-' ? -1 : 0;
  const rest = length - at;
  if (sign === 0 || (rest !== 3 && !(rest === 6 && text[at + 3] === ':'))) return parseAnyTimestamp(text);
  const year = digit(text, 0) * 1000 + digit(text, 1) * 100 + two(text, 2);
  if (!(year >= 1000 && year <= 9999)) return parseAnyTimestamp(text);
  const offsetMinutes = sign * (two(text, at + 1) * 60 + (rest === 6 ? two(text, at + 4) : 0));
  const utc = Date.UTC(year, two(text, 5) - 1, two(text, 8), two(text, 11), two(text, 14), two(text, 17), ms) - offsetMinutes * 60_000;
  return Number.isNaN(utc) ? parseAnyTimestamp(text) : new Date(utc);
}

/** The types the pool's own statements read with (`Database.query`): pg's, with `parseTimestamptz`. */
export const poolTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    return oid === TIMESTAMPTZ_OID && format !== 'binary' ? parseTimestamptz : pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;
