// Fails when the committed generated GraphQL client code differs from what
// `npm run codegen` produces from schema.graphql and the test documents.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const out = fs.mkdtempSync(path.join(os.tmpdir(), 'codegen-'));
try {
  execFileSync(process.execPath, ['node_modules/@graphql-codegen/cli/cjs/bin.js', '--config', 'codegen.ts', '--silent'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, CODEGEN_OUT: out },
  });
  const stale = [];
  for (const name of fs.readdirSync(out)) {
    const committed = path.join('test/gql', name);
    if (!fs.existsSync(committed) || fs.readFileSync(committed, 'utf8') !== fs.readFileSync(path.join(out, name), 'utf8')) stale.push(committed);
  }
  for (const name of fs.readdirSync('test/gql')) if (!fs.existsSync(path.join(out, name))) stale.push(path.join('test/gql', name));
  if (stale.length) {
    process.stderr.write(`Generated GraphQL code is stale (${stale.join(', ')}): run \`npm run codegen\` and commit the result.\n`);
    process.exit(1);
  }
} finally {
  fs.rmSync(out, { recursive: true, force: true });
}
