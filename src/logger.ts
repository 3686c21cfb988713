import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Env } from './env.js';

/**
 * JSON logs on stdout; human-readable when a developer watches a terminal and
 * pino-pretty (a development dependency) is installed. Authorization headers
 * and bodies are never logged, so redaction guards only against accidental
 * additions.
 */
export function createLogger(env: Env, destination?: DestinationStream): Logger {
  const options = {
    level: env.LOG_LEVEL,
    redact: { paths: ['req.headers.authorization', '*.apiKey', '*.token', '*.body'], remove: true },
  };
  if (destination) return pino(options, destination);
  const pretty = process.stdout.isTTY && env.NODE_ENV !== 'production' ? prettyStream() : null;
  return pretty ? pino(options, pretty) : pino(options);
}

/**
 * pino-pretty in this thread, writing synchronously: lines stay in order with
 * what the server prints directly (the start-up banner) and none is lost when
 * the process exits right after logging. Null when it is not installed.
 */
function prettyStream(): DestinationStream | null {
  let build: (options: Record<string, unknown>) => DestinationStream;
  try {
    build = createRequire(import.meta.url)('pino-pretty') as typeof build;
  } catch {
    return null;
  }
  return build({ sync: true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss' });
}
