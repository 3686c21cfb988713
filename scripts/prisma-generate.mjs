// Generates the Prisma client and the Pothos types from prisma/schema.prisma.
// Generation runs in WebAssembly; the CLI only insists that a schema engine path
// exists, so point it at this file when no engine is configured: generation never
// executes it.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const cli = require.resolve('prisma/build/index.js');
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1' };
// Generators are looked up on PATH, as npm scripts would see them.
env.PATH = [path.resolve('node_modules/.bin'), env.PATH].filter(Boolean).join(path.delimiter);
env.PRISMA_SCHEMA_ENGINE_BINARY ??= fileURLToPath(import.meta.url);
const result = spawnSync(process.execPath, [cli, 'generate'], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
