import { z } from 'zod';

/** A DNS hostname (or `localhost`), stored lowercased without port. */
export const hostnameSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(253, 'must be at most 253 characters')
  .regex(
    /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/,
    'must be a hostname such as api.example.com (no scheme, port or path)',
  );

export const labelSchema = z
  .string()
  .trim()
  .min(1, 'must not be blank')
  .max(255, 'must be at most 255 characters');
