import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { onPostgres } from '../helpers/app.js';
import { freePort } from '../helpers/server-process.js';

// The build and the deployment files are the same on both databases: checked once.

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A minimal environment, so that nothing of the test run's own (DATABASE_URL, REDIS_URL…) leaks in. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', LOG_LEVEL: 'info', ...extra };
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

describe.skipIf(onPostgres)('production build', () => {
  // Inside the repository, one level down like dist/, so that the compiled code finds
  // node_modules and ../../prisma/migrations exactly as dist/ does; dist/ itself is left alone.
  let outDir: string;
  let build: ReturnType<typeof spawnSync>;

  beforeAll(() => {
    outDir = fs.mkdtempSync(path.join(root, '.build-'));
    build = spawnSync('npm', ['run', 'build', '--silent', '--', '--outDir', outDir], {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
    });
  }, 150_000);

  afterAll(() => {
    if (outDir) fs.rmSync(outDir, { recursive: true, force: true });
  });

  it('`npm run build` compiles the server, both CLIs and the generated Prisma client', () => {
    expect(build.error, String(build.error)).toBeUndefined();
    expect(build.status, `${build.stdout}${build.stderr}`).toBe(0);
    // It says what it is doing before the compiler's silent seconds.
    expect(String(build.stdout)).toContain('build: compiling src/ into dist/ with tsc');
    for (const file of ['main.js', 'app.js', 'cli/admin.js', 'cli/migrate.js', 'db/migrate.js', 'generated/prisma/client.js']) {
      expect(fs.existsSync(path.join(outDir, file)), file).toBe(true);
    }
    // No TypeScript is left for a runtime without a loader to trip on.
    const sources = fs.readdirSync(outDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(sources).toEqual([]);
  });

  it('`node <out>/main.js` serves, answers /readyz and refuses a keyless request, and stops on SIGTERM with exit 0', async () => {
    expect(build.status).toBe(0);
    const port = await freePort();
    const child = spawn(process.execPath, [path.join(outDir, 'main.js')], {
      cwd: root,
      env: childEnv({ PORT: String(port), HOST: '127.0.0.1', PGLITE_DIR: 'memory://', SEED_DEMO: '0', DELIVERY_WORKER: '0' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitUntil('/readyz', async () => (await fetch(`${base}/readyz`)).status === 200, 30_000);
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ok' });

      const channels = await fetch(`${base}/api/connect/channels`, { headers: { host: 'localhost' } });
      expect(channels.status).toBe(401);
      expect(await channels.json()).toEqual({ status: 'error', message: 'Unauthenticated.' });

      // The reference page finds swagger-ui-dist from the compiled code too, in production.
      const docs = await fetch(`${base}/docs`);
      expect(docs.status).toBe(200);
      const bundle = /<script src="(\/docs\/swagger-ui-bundle\.js\?v=\w+)">/.exec(await docs.text())?.[1];
      expect(bundle).toBeDefined();
      const script = await fetch(`${base}${bundle}`);
      expect(script.status).toBe(200);
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(100_000);

      child.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 15_000))]);
      expect(code, output).toBe(0);
      // Production logs are JSON lines: the migrations were found and applied from the compiled code.
      const lines = output.trim().split('\n').map((line) => JSON.parse(line) as { msg: string });
      expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining([expect.stringMatching(/^migration 1 of \d+ applied: \d+_init$/), 'stopped']));
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);

  it('the compiled migrate runner and admin CLI work on their own', () => {
    expect(build.status).toBe(0);
    const dataDir = fs.mkdtempSync(path.join(root, '.build-data-'));
    try {
      const env = childEnv({ PGLITE_DIR: path.join(dataDir, 'pglite') });
      const migrate = spawnSync(process.execPath, [path.join(outDir, 'cli/migrate.js')], { cwd: root, env, encoding: 'utf8', timeout: 30_000 });
      expect(migrate.status, migrate.stderr).toBe(0);
      const applied = fs.readdirSync(path.join(root, 'prisma/migrations'), { withFileTypes: true }).filter((e) => e.isDirectory());
      expect(migrate.stdout).toContain(`${applied.length} migration(s) applied`);

      const admin = spawnSync(
        process.execPath,
        [path.join(outDir, 'cli/admin.js'), 'workspace:create', '--hostname', 'api.build.test', '--name', 'Build'],
        { cwd: root, env, encoding: 'utf8', timeout: 30_000 },
      );
      expect(admin.status, admin.stderr).toBe(0);
      expect(JSON.parse(admin.stdout)).toMatchObject({ hostname: 'api.build.test', name: 'Build' });
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe.skipIf(onPostgres)('Dockerfile', () => {
  // Continuation lines joined, one instruction per line.
  const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const ignored = fs
    .readFileSync(path.join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((pattern) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`));

  it('copies only files that exist in the build context and are not excluded from it', () => {
    const sources = dockerfile
      .split('\n')
      .filter((line) => /^COPY\s/.test(line) && !line.includes('--from='))
      .flatMap((line) => line.trim().split(/\s+/).slice(1, -1));
    expect(sources).toEqual(expect.arrayContaining(['package-lock.json', 'prisma', 'src', 'tsconfig.build.json']));
    for (const source of sources) {
      expect(fs.existsSync(path.join(root, source)), source).toBe(true);
      const prefixes = source.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
      expect(prefixes.filter((prefix) => ignored.some((pattern) => pattern.test(prefix))), source).toEqual([]);
    }
  });

  it('runs the compiled server as a non-root user, with what it reads at run time', () => {
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^CMD \["node", "--max-semi-space-size=8", "dist\/main\.js"\]$/m);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/HOST=0\.0\.0\.0/);
    // glibc's per-thread malloc arenas otherwise hold tens of MB V8's helper threads freed (docs/deployment.md).
    expect(runtime).toMatch(/MALLOC_ARENA_MAX=2/);
    expect(runtime).toMatch(/^VOLUME \["\/app\/\.data"\]$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\/readyz/m);
    // package.json carries "type": "module" for dist/*.js; the migrations are read from ../../prisma/migrations.
    for (const copied of ['/app/package.json', '/app/node_modules', '/app/dist', '/app/prisma/migrations']) {
      expect(runtime).toMatch(new RegExp(`^COPY --from=build ${copied} `, 'm'));
    }
  });
});

type Service = {
  build?: unknown;
  image?: string;
  deploy?: { replicas?: number };
  environment?: Record<string, string | number> | string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test?: unknown };
  volumes?: unknown[];
  ports?: unknown[];
};

function environment(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) return Object.fromEntries(env.map((entry) => [entry.split('=')[0], entry.slice(entry.indexOf('=') + 1)]));
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
}

/** What the checks give a variable the compose file requires. */
const REQUIRED_VALUE = 'given-by-the-operator';

/** `docker compose config` (or `docker-compose config`) when either is installed: it validates and normalises the file. */
function composeConfig(file: string): { tool: string; text: string } {
  for (const [command, args] of [
    ['docker', ['compose']],
    ['docker-compose', []],
  ] as const) {
    const version = spawnSync(command, [...args, 'version'], { encoding: 'utf8', timeout: 20_000 });
    if (version.status !== 0) continue;
    // Without the caller's variables, so that the file's own defaults are what is checked; a
    // required one (`${VAR:?message}`) is given, as an operator's .env would.
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, SECRETS_KEY: REQUIRED_VALUE };
    const config = spawnSync(command, [...args, '-f', file, 'config'], { cwd: root, env, encoding: 'utf8', timeout: 30_000 });
    if (config.status !== 0) throw new Error(`${command} ${args.join(' ')} config failed: ${config.stderr}`);
    return { tool: `${command} ${args.join(' ')}`.trim(), text: config.stdout };
  }
  // Compose's interpolation, for the forms the file uses: `${VAR:-default}`, `${VAR-default}` and `${VAR:?message}`.
  const text = fs
    .readFileSync(file, 'utf8')
    .replace(/\$\{\w+:?-([^}]*)\}/g, (_, fallback: string) => fallback)
    .replace(/\$\{\w+:\?[^}]*\}/g, REQUIRED_VALUE);
  return { tool: 'yaml', text };
}

describe.skipIf(onPostgres)('docker-compose.yml', () => {
  let services: Record<string, Service>;
  let nginx: string;

  beforeAll(() => {
    const { text } = composeConfig(path.join(root, 'docker-compose.yml'));
    services = (parseYaml(text) as { services: Record<string, Service> }).services;
    nginx = fs.readFileSync(path.join(root, 'deploy/nginx.conf'), 'utf8');
  }, 60_000);

  it('runs PostgreSQL, Redis, two gateway replicas built from the Dockerfile, and a proxy', () => {
    expect(Object.keys(services).sort()).toEqual(['gateway', 'postgres', 'proxy', 'redis']);
    expect(services.gateway!.build).toBeDefined();
    expect(services.gateway!.deploy?.replicas).toBe(2);
    expect(services.proxy!.image).toMatch(/^nginx:/);
    expect(JSON.stringify(services.proxy!.volumes)).toContain('deploy/nginx.conf');
    expect(services.proxy!.ports).toHaveLength(1);
    // Only the proxy is reachable from outside: the replicas trust its forwarded headers.
    expect(services.gateway!.ports).toBeUndefined();
  });

  it('gives the replicas the shared database and Redis, behind a trusted proxy, listening on every interface', () => {
    const env = environment(services.gateway!);
    expect(env.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
    expect(env.REDIS_URL).toBe('redis://redis:6379');
    expect(env.TRUST_PROXY).toBe('1');
    expect(env.HOST).toBe('0.0.0.0');
    expect(env.NODE_ENV).toBe('production');
    expect(env.SEED_DEMO).toBe('0');
  });

  it('requires the operator’s SECRETS_KEY (no default) and passes PUBLIC_URL on', () => {
    const raw = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    expect(raw).toMatch(/^\s*SECRETS_KEY: \$\{SECRETS_KEY:\?[^}]+\}$/m);
    const env = environment(services.gateway!);
    expect(env.SECRETS_KEY).toBe(REQUIRED_VALUE);
    expect(env.PUBLIC_URL).toMatch(/^https?:\/\//);
  });

  it('starts each service once what it needs is healthy', () => {
    expect(services.postgres!.healthcheck?.test).toBeDefined();
    expect(services.redis!.healthcheck?.test).toBeDefined();
    expect(services.gateway!.depends_on).toMatchObject({
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    });
    expect(services.proxy!.depends_on).toMatchObject({ gateway: { condition: 'service_healthy' } });
  });

  it('proxies to the gateway service, passes the host on and streams /graphql unbuffered', () => {
    const port = environment(services.gateway!).PORT;
    expect(nginx).toMatch(new RegExp(`^\\s*server gateway:${port}\\b`, 'm'));
    expect(nginx).toMatch(/^\s*proxy_set_header X-Forwarded-Host \$host;/m);
    expect(nginx).toMatch(/^\s*proxy_set_header Host \$http_host;/m);
    const graphql = /location \/graphql \{([^}]*)\}/.exec(nginx)?.[1] ?? '';
    expect(graphql).toMatch(/proxy_buffering off;/);
    expect(graphql).toMatch(/proxy_pass http:\/\/connect_gateway;/);
    // /metrics is for the internal network only.
    const metrics = /location = \/metrics \{([^}]*)\}/.exec(nginx)?.[1] ?? '';
    expect(metrics).toMatch(/return 404;/);
  });
});
