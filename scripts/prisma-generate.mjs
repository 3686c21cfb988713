// Generates the Prisma client and the Pothos types from prisma/schema.prisma.
// Generation runs in WebAssembly; the CLI only insists that a schema engine path
// exists, so point it at this file when no engine is configured: generation never
// executes it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
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
if (result.status !== 0) process.exit(result.status ?? 1);

// The client loads its query compiler by importing a module whose one export is the compiler's
// WebAssembly as a 4.5 MB base64 string: a module is never unloaded, so its source and that string
// stayed in the heap for the life of the process (9 MB of a 55 MB live heap). The client reads
// the same file as text instead, and both strings go once the module is compiled.
const CLIENT_CLASS = 'src/generated/prisma/internal/class.ts';
const IMPORTED = /const \{ wasm \} = await import\(("@prisma\/client\/runtime\/[^"]+\.wasm-base64\.mjs")\)\n(\s*)return await decodeBase64AsWasm\(wasm\)/;
const source = fs.readFileSync(CLIENT_CLASS, 'utf8');
const found = IMPORTED.exec(source);
if (!found) {
  console.error(`${CLIENT_CLASS}: the query compiler's loader is not the one scripts/prisma-generate.mjs knows; update its rewrite for this Prisma version`);
  process.exit(1);
}
const [, specifier, indent] = found;
const read = [
  `// Read as text rather than imported: an imported module would keep its 4.5 MB text for good.`,
  `const { readFile } = await import('node:fs/promises')`,
  `const { fileURLToPath } = await import('node:url')`,
  `const text = await readFile(fileURLToPath(import.meta.resolve(${specifier})), 'utf8')`,
  `const wasm = /const wasm = "([^"]+)"/.exec(text)?.[1]`,
  `if (!wasm) throw new Error('the query compiler module holds no wasm')`,
  `return await decodeBase64AsWasm(wasm)`,
].join(`\n${indent}`);
fs.writeFileSync(CLIENT_CLASS, source.replace(IMPORTED, read));
