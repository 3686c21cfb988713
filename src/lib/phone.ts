import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

const E164_SHAPE = /^\+[1-9]\d{1,14}$/;

/**
 * Strict E.164 for API input: a leading `+`, the country code, digits only, and a
 * number that libphonenumber-js considers valid for its country.
 */
export function toE164(input: string): string | null {
  if (!E164_SHAPE.test(input)) return null;
  const parsed = parsePhoneNumberFromString(input);
  return parsed?.isValid() && parsed.number === input ? parsed.number : null;
}

/** What a phone number is written with besides its digits and `+`: spaces and `( ) . - /`. */
const PUNCTUATION = /[\s().\-/]/g;

/**
 * Lenient derivation for stored or imported variants such as `0031 6 1234 5678`:
 * punctuation is dropped and an international `00` prefix read as `+`.
 */
export function deriveE164(raw: string): string | null {
  const compact = raw.replace(PUNCTUATION, '');
  const international = compact.startsWith('00') ? `+${compact.slice(2)}` : compact;
  if (!/^\+\d+$/.test(international)) return null;
  const parsed = parsePhoneNumberFromString(international);
  return parsed?.isValid() ? parsed.number : null;
}

/**
 * The key a phone is stored and matched under: its E.164 form when one can be
 * derived, otherwise its digits (with a leading `+` kept) as given.
 */
export function phoneKey(raw: string): string {
  const e164 = deriveE164(raw);
  if (e164) return e164;
  const trimmed = raw.trim();
  return (trimmed.startsWith('+') ? '+' : '') + trimmed.replace(/\D/g, '');
}

/**
 * The digits a search term names a phone by: a term written as a phone number (digits, `+`
 * and punctuation only, as `+31 6 1230 0` or `(415) 555-01`) with three digits or more. Other
 * terms hold no phone: `room 101` or `user12345@` name a name or an email.
 */
export function phoneSearchDigits(term: string): string | null {
  const compact = term.replace(PUNCTUATION, '');
  if (!/^[+\d]+$/.test(compact)) return null;
  const digits = compact.replace(/\D/g, '');
  return digits.length >= 3 ? digits : null;
}
