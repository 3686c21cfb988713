import { Prisma } from '../generated/prisma/client.js';

/** A unique constraint violation, from Prisma or from the driver underneath. */
export function isUniqueViolation(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientKnownRequestError) return error.code === 'P2002';
  return (error as { code?: unknown } | null)?.code === '23505';
}

const CONNECTIVITY_CODES = new Set([
  // Prisma: cannot reach, timed out, connection closed, pool timeout.
  'P1001', 'P1002', 'P1008', 'P1017', 'P2024',
  // Node sockets.
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH',
  // PostgreSQL: connection exceptions and shutdowns.
  '08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03',
]);
/** The driver adapter's names for the same faults (a DriverAdapterError's cause.kind). */
const CONNECTIVITY_KINDS = new Set(['ConnectionClosed', 'DatabaseNotReachable', 'SocketTimeout', 'TooManyConnections']);
const CONNECTIVITY_MESSAGE = /connection terminated|timeout exceeded when trying to connect|can't reach database|connection refused|server closed the connection|connection .* closed/i;

interface ErrorLike {
  code?: unknown;
  kind?: unknown;
  message?: unknown;
  cause?: unknown;
  meta?: { code?: unknown; driverAdapterError?: { cause?: unknown } };
}

/**
 * Whether `test` holds for the error or anything beneath it: its cause, or the
 * driver adapter's error under a Prisma error (Prisma wraps what the driver said).
 */
function anyCause(error: unknown, test: (e: ErrorLike) => boolean, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 4) return false;
  const e = error as ErrorLike;
  return test(e) || anyCause(e.cause, test, depth + 1) || anyCause(e.meta?.driverAdapterError?.cause, test, depth + 1);
}

/** An error that says the database cannot be reached (rather than that a query was wrong). */
export function isDatabaseUnavailable(error: unknown): boolean {
  return anyCause(
    error,
    (e) =>
      (typeof e.code === 'string' && CONNECTIVITY_CODES.has(e.code)) ||
      (typeof e.kind === 'string' && CONNECTIVITY_KINDS.has(e.kind)) ||
      (typeof e.message === 'string' && CONNECTIVITY_MESSAGE.test(e.message)),
  );
}

/** A statement that gave up waiting for a lock (`lock_timeout`, PostgreSQL 55P03). */
export function isLockTimeout(error: unknown): boolean {
  return anyCause(error, (e) => e.code === '55P03' || e.meta?.code === '55P03' || (typeof e.message === 'string' && /lock timeout/i.test(e.message)));
}
