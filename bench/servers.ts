import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A server under test: the gateway or the floor, as its own process. */
export interface ServerProcess {
  name: 'gateway' | 'floor';
  pid: number;
  base: string;
  /** Where its stdout and stderr go. */
  logFile: string;
  child: ChildProcess;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `npm run build`: the gateway as production runs it, compiled to dist/. */
export function buildGateway(): void {
  const result = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
  if (result.status !== 0) throw new Error(`npm run build failed:\n${result.stdout}${result.stderr}`);
}

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; input?: Buffer }): Buffer {
  const result = spawnSync(command, args, { cwd: options.cwd, env: options.env ?? process.env, input: options.input, maxBuffer: 512 * 2 ** 20, timeout: 300_000 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

/**
 * The gateway of a commit, built apart from the working tree: its sources exported
 * with git archive into a directory inside the repository (so that node_modules is
 * found as from dist/), its Prisma client generated, then compiled. Lets a run
 * measure a commit while the working tree holds other changes, or compare two
 * commits run after run. Returns the directory of its main.js and the commit.
 */
export function buildRef(ref: string): { dist: string; dir: string; commit: string } {
  const commit = run('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: ROOT }).toString().trim();
  const dir = path.join(ROOT, `.build-bench-${commit.slice(0, 12)}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir);
  const files = ['src', 'prisma', 'scripts', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'prisma.config.ts'];
  const archive = run('git', ['archive', '--format=tar', commit, ...files], { cwd: ROOT });
  run('tar', ['-x', '-C', dir], { cwd: ROOT, input: archive });
  const bin = path.join(ROOT, 'node_modules/.bin');
  run(process.execPath, ['scripts/prisma-generate.mjs'], { cwd: dir, env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` } });
  run(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: dir });
  return { dist: path.join(dir, 'dist'), dir, commit };
}

/**
 * The gateway's settings for the bench: production mode, logs at info to a file,
 * no rate limit (one credential sends far more than a minute's budget), no
 * migrations or demo at start. The delivery worker runs, as in production, but
 * looks for work only when this process queued some (a long idle poll): with
 * the floor's worker beside it on the same database, each server then delivers
 * exactly the messages it accepted, inside its own measurement windows.
 */
export function gatewayEnv(databaseUrl: string, port: number, options: { worker: boolean; poolSize: number; whatsapp?: WhatsAppSettings | undefined }): Record<string, string> {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    MIGRATE_ON_START: '0',
    SEED_DEMO: '0',
    RATE_LIMIT_PER_MINUTE: '0',
    DB_POOL_SIZE: String(options.poolSize),
    DELIVERY_WORKER: options.worker ? '1' : '0',
    DELIVERY_POLL_MS: '3600000',
    ...whatsappEnv(options.whatsapp),
  };
}

/** The key stored credentials are sealed with, and the local stand-in for the WhatsApp Cloud API. */
export interface WhatsAppSettings {
  secretsKey: string;
  apiUrl: string;
}

const whatsappEnv = (settings: WhatsAppSettings | undefined): Record<string, string> =>
  settings ? { SECRETS_KEY: settings.secretsKey, WHATSAPP_API_URL: settings.apiUrl } : {};

/**
 * A minimal environment, so that nothing of the caller's own (DATABASE_URL, REDIS_URL, DEBUG…) leaks
 * in; with the Docker image's MALLOC_ARENA_MAX, so that both servers run as a deployment does.
 */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = { MALLOC_ARENA_MAX: '2' };
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[name]) env[name] = process.env[name]!;
  return env;
}

async function waitReady(base: string, child: ChildProcess, exited: Promise<number | null>, what: string, logFile: string): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (gone) throw new Error(`${what} exited during start-up; its output is in ${logFile}:\n${tail(logFile)}`);
    try {
      const response = await fetch(`${base}/readyz`);
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${what} did not answer /readyz within 60 s; its output is in ${logFile}`);
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}

function startProcess(
  name: ServerProcess['name'],
  args: string[],
  env: Record<string, string>,
  port: number,
  logFile: string,
): Promise<ServerProcess> {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...baseEnv(), ...env }, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  const server: ServerProcess = {
    name,
    pid: child.pid!,
    base,
    logFile,
    child,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  return waitReady(base, child, exited, name, logFile).then(
    () => server,
    async (error) => {
      await server.stop();
      throw error;
    },
  );
}

/** `node dist/main.js` with the bench settings. */
export async function startGateway(
  databaseUrl: string,
  logDir: string,
  options: {
    worker: boolean;
    poolSize: number;
    profile?: boolean;
    dist?: string | undefined;
    whatsapp?: WhatsAppSettings | undefined;
    log?: string;
    traceGc?: boolean;
    /** Collects its garbage fully when sent SIGUSR2 (bench/collect-on-signal.cjs): see `collectGarbage`. */
    collectOnSignal?: boolean;
    /** Settings beside the bench's own (gatewayEnv). */
    env?: Record<string, string>;
  },
): Promise<ServerProcess> {
  const port = await freePort();
  // The profile is written when the process exits, into the log directory.
  const profile = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${logDir}`] : [];
  // A line in the log after each full collection (none after the frequent scavenges): the live heap, for the leak check.
  if (options.traceGc) profile.push('--trace-gc', '--trace-gc-ignore-scavenger');
  if (options.collectOnSignal) profile.push('--expose-gc', '--require', path.join(ROOT, 'bench/collect-on-signal.cjs'));
  const main = path.join(options.dist ?? path.join(ROOT, 'dist'), 'main.js');
  // The young generation the image and `npm run start:prod` give it (docs/deployment.md#memory).
  return startProcess('gateway', ['--max-semi-space-size=8', ...profile, main], { ...gatewayEnv(databaseUrl, port, options), ...options.env }, port, path.join(logDir, options.log ?? 'gateway.log'));
}

/** The floor (bench/floor/server.ts), with the same pool size as the gateway. */
export async function startFloor(
  databaseUrl: string,
  logDir: string,
  options: { worker: boolean; poolSize: number; dist?: string | undefined; whatsapp?: WhatsAppSettings | undefined; prepared?: boolean },
): Promise<ServerProcess> {
  const port = await freePort();
  const env = {
    FLOOR_PREPARED: options.prepared ? '1' : '0',
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    DB_POOL_SIZE: String(options.poolSize),
    DELIVERY_WORKER: options.worker ? '1' : '0',
    ...whatsappEnv(options.whatsapp),
  };
  return startProcess('floor', ['--import', 'tsx', path.join(ROOT, 'bench/floor/server.ts')], env, port, path.join(logDir, 'floor.log'));
}

/**
 * The V8 heap after the latest full collection (mark-compact) a `--trace-gc` process logged, in MB,
 * and how many it has logged: what is live, garbage excluded. Null before the first.
 */
export function liveHeapMb(logFile: string): { mb: number; collections: number } | null {
  let text: string;
  try {
    text = fs.readFileSync(logFile, 'utf8');
  } catch {
    return null;
  }
  const found = [...text.matchAll(/Mark-Compact(?: \(reduce\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/g)];
  const last = found[found.length - 1];
  return last ? { mb: Number(last[1]), collections: found.length } : null;
}

/** User plus system CPU time of a process, in milliseconds (Linux /proc). */
export function cpuMs(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** Linux reports CPU time in clock ticks of 1/100 s on every common platform. */
const CLOCK_TICKS = 100;

/** Asks each of `pids` (started with `collectOnSignal`) to collect its garbage fully. */
export function collectGarbage(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGUSR2');
    } catch {
      // Gone: what is read of it next says so.
    }
  }
}

/** Resident set size of a process in MB (VmRSS), or null where /proc is not available. */
export function rssMb(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}
