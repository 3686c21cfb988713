import { z } from 'zod';

/** Contact name: 2–255 characters after trimming (spec §2, §4.1). */
export const contactNameSchema = z
  .string({ error: 'The name must be a string.' })
  .trim()
  .min(2, 'The name must be at least 2 characters.')
  .max(255, 'The name must not be greater than 255 characters.');

/** Contact email: a valid address of at most 255 characters, stored as given after trimming. */
export const contactEmailSchema = z
  .string({ error: 'The email must be a string.' })
  .trim()
  .max(255, 'The email must not be greater than 255 characters.')
  .pipe(z.email({ error: 'The email must be a valid email address.' }));
