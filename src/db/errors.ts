import { Prisma } from '../generated/prisma/client.js';

/** A unique constraint violation, from Prisma or from the driver underneath. */
export function isUniqueViolation(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientKnownRequestError) return error.code === 'P2002';
  return (error as { code?: unknown } | null)?.code === '23505';
}
