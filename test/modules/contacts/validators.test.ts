import fc from 'fast-check';
import { getCountries, getExampleNumber } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';
import { describe, expect, it } from 'vitest';
import { contactEmailSchema, contactNameSchema, contactPhoneSchema, MESSAGES } from '../../../src/modules/contacts/contacts.schemas.js';

const codePoints = (s: string) => Array.from(s).length;
const firstMessage = (result: { success: boolean; error?: { issues: { message: string }[] } }) => result.error?.issues[0]?.message;

describe('name rule (2–255 characters after trimming)', () => {
  it('accepts exactly the strings whose trimmed length is within bounds, returning them trimmed', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-composite', maxLength: 300 }), fc.constantFrom('', ' ', '  \t', '\n '), (core, pad) => {
        const input = `${pad}${core}${pad}`;
        const result = contactNameSchema.safeParse(input);
        const trimmed = input.trim();
        const ok = codePoints(trimmed) >= 2 && codePoints(trimmed) <= 255;
        expect(result.success).toBe(ok);
        if (result.success) expect(result.data).toBe(trimmed);
        else expect(firstMessage(result)).toBe(trimmed === '' ? MESSAGES.nameCleared : codePoints(trimmed) < 2 ? MESSAGES.nameMin : MESSAGES.nameMax);
      }),
      { numRuns: 500 },
    );
  });
});

describe('email rule', () => {
  const local = fc.stringMatching(/^[a-z0-9](?:[a-z0-9._+-]{0,30}[a-z0-9])?$/).filter((s) => !s.includes('..'));
  const domain = fc.tuple(fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,20}[a-z0-9])?$/), fc.constantFrom('com', 'nl', 'io', 'co.uk'));

  it('accepts ordinary addresses of at most 255 characters, trimmed', () => {
    fc.assert(
      fc.property(local, domain, fc.constantFrom('', ' '), (user, [host, tld], pad) => {
        const email = `${user}@${host}.${tld}`;
        expect(contactEmailSchema.safeParse(`${pad}${email}${pad}`)).toEqual({ success: true, data: email });
      }),
      { numRuns: 300 },
    );
  });

  it('rejects over-long addresses with the length message, and strings without a single @ or with spaces', () => {
    fc.assert(
      fc.property(local, fc.integer({ min: 256, max: 400 }), (user, size) => {
        const email = `${user}@${'a'.repeat(Math.max(1, size - user.length - 5))}.com`;
        fc.pre(codePoints(email) > 255);
        expect(firstMessage(contactEmailSchema.safeParse(email))).toBe(MESSAGES.emailMax);
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }).filter((s) => !s.includes('@') || /\s/.test(s.trim())), (text) => {
        expect(contactEmailSchema.safeParse(text).success).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

describe('phone rule (E.164)', () => {
  const validNumbers = getCountries()
    .map((country) => getExampleNumber(country, examples)?.number)
    .filter((n): n is NonNullable<typeof n> => !!n);

  it('has example numbers to test with', () => {
    expect(validNumbers.length).toBeGreaterThan(150);
  });

  it('accepts every country’s valid number in E.164', () => {
    for (const number of validNumbers) expect(contactPhoneSchema.safeParse(number), number).toEqual({ success: true, data: number });
  });

  it('rejects the same numbers with a space or punctuation inserted, or without the leading +', () => {
    fc.assert(
      fc.property(fc.constantFrom(...validNumbers), fc.nat(), fc.constantFrom(' ', '-', '.', '(', ')', '/'), (number, at, mark) => {
        const position = 2 + (at % (number.length - 2));
        const broken = `${number.slice(0, position)}${mark}${number.slice(position)}`;
        expect(firstMessage(contactPhoneSchema.safeParse(broken))).toBe(MESSAGES.phoneFormat);
        expect(contactPhoneSchema.safeParse(number.slice(1)).success).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('rejects arbitrary strings that are not E.164 shaped', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }).filter((s) => !/^\+[1-9]\d{1,14}$/.test(s.trim())), (text) => {
        expect(contactPhoneSchema.safeParse(text).success).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
