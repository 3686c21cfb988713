import { NotFoundError } from '../errors/domain.js';
import { toUserErrors } from '../errors/graphql.js';
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

/** Runs a mutation; expected failures become userErrors, anything else is thrown (and masked). */
export async function asPayload(run: () => Promise<{ id: string }>, rename?: (field: string) => string): Promise<Payload> {
  try {
    return { id: (await run()).id, userErrors: [] };
  } catch (error) {
    const userErrors = toUserErrors(error, rename);
    if (!userErrors) throw error;
    return { id: null, userErrors };
  }
}
