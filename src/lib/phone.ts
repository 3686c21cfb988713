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

/**
 * Lenient derivation for stored or imported variants such as `0031 6 1234 5678`:
 * punctuation is dropped and an international `00` prefix read as `+`.
 */
export function deriveE164(raw: string): string | null {
  const compact = raw.replace(/[\s().\-/]/g, '');
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
