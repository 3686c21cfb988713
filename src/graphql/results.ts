import { NotFoundError } from '../errors/domain.js';
import { toUserErrors } from './errors.js';
import type { Payload } from './user-errors.js';

/** Reads answer null, never an error, for what the caller cannot see (other workspaces included). */
export async function orNull<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

/** A mutation's payload; expected failures become userErrors, anything else is thrown (and masked). */
export async function payloadOf(run: () => Promise<Payload>, rename?: (field: string) => string): Promise<Payload> {
  try {
    return await run();
  } catch (error) {
    const userErrors = toUserErrors(error, rename);
    if (!userErrors) throw error;
    return { id: null, userErrors };
  }
}

/** A mutation's object as its payload: the id, and the row itself for the payload to resolve from. */
export const accepted = (row: { id: string }): Payload => ({ id: row.id, userErrors: [], row });

/** Runs a mutation and answers its object, or the userErrors of an expected failure. */
export function asPayload(run: () => Promise<{ id: string }>, rename?: (field: string) => string): Promise<Payload> {
  return payloadOf(async () => accepted(await run()), rename);
}
