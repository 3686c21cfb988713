import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { TEST_SECRETS_KEY } from './secrets.js';

/** A port nothing listens on (just released by the system). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether something accepts connections on the port. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(true)).once('error', () => resolve(false));
    socket.once('close', () => socket.destroy());
    socket.once('connect', () => socket.destroy());
  });
}

/**
 * Starts `npm start`'s entry point (or `npm start` itself) and collects its output
 * until it listens (or exits). The delivery worker is off: a server on the test
 * run's PostgreSQL database must not claim other tests' deliveries.
 */
export function startServer(env: Record<string, string>, command: 'node' | 'npm' = 'node') {
  const [file, args] = command === 'npm' ? ['npm', ['start', '--silent']] : [process.execPath, ['--import', 'tsx', 'src/main.ts']];
  const child = spawn(file as string, args as string[], {
    // The suite's key, so that a server opens what the tests sealed; SECRETS_KEY: '' leaves it unset.
    env: { ...process.env, DATABASE_URL: '', PORT: '0', LOG_LEVEL: 'info', NODE_ENV: 'development', DELIVERY_WORKER: '0', SECRETS_KEY: TEST_SECRETS_KEY, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => {
    output += chunk;
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match) {
        clearInterval(timer);
        resolve(match[1]!);
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`server exited with ${code}: ${output}`));
    });
  });
  // A start that is meant to fail rejects `listening` with nobody waiting for it.
  listening.catch(() => {});
  return { child, listening, exited, output: () => output, stderr: () => stderr };
}

/** Resolves once the output matches, or rejects when the process exits first. */
export function waitFor(server: ServerProcess, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (pattern.test(server.output())) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
    void server.exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`server exited with ${code} before printing ${pattern}: ${server.output()}`));
    });
  });
}


export type ServerProcess = ReturnType<typeof startServer>;

/**
 * One request to a server process at `base` (its `listening` URL), a JSON body sent as JSON;
 * `host` names the workspace (fetch cannot set Host).
 */
export function requestServer(base: string, host: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(`${base}${path}`, { method, headers: { host, accept: 'application/json', ...(payload ? { 'content-type': 'application/json' } : {}), ...headers } }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}
