import { z } from 'zod';

/** A credential as the provider's console shows it: no blanks, printable ASCII. */
export const tokenSetting = (what: string, max: number) =>
  z
    .string()
    .trim()
    .min(1, `must not be blank`)
    .max(max, `must be at most ${max} characters`)
    .regex(/^[\x21-\x7e]+$/, `must be the ${what} as given, without spaces`);

/** A phone number in E.164 form, as a provider's sending number. */
export const e164Setting = (what: string) =>
  z
    .string()
    .trim()
    .regex(/^\+[1-9]\d{1,14}$/, `must be the ${what} in E.164 form (+14155550100)`);

/** A setting read from the process's settings (src/env.ts) by name, or its default. */
export function setting(settings: Readonly<Record<string, unknown>>, name: string, fallback: string): string {
  const value = settings[name];
  return typeof value === 'string' && value ? value : fallback;
}
