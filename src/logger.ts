import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Env } from './env.js';

/**
 * JSON logs; human-readable when a developer watches a terminal and pino-pretty is
 * installed. Authorization headers and bodies are never logged, so redaction
 * guards only against accidental additions.
 */
export function createLogger(env: Env, destination?: DestinationStream): Logger {
  const options = {
    level: env.LOG_LEVEL,
    redact: { paths: ['req.headers.authorization', '*.apiKey', '*.token', '*.body'], remove: true },
  };
  if (destination) return pino(options, destination);
  const pretty = process.stdout.isTTY && env.NODE_ENV !== 'production' && canResolve('pino-pretty');
  return pino({
    ...options,
    ...(pretty ? { transport: { target: 'pino-pretty', options: { ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss' } } } : {}),
  });
}

function canResolve(name: string): boolean {
  try {
    createRequire(import.meta.url).resolve(name);
    return true;
  } catch {
    return false;
  }
}
