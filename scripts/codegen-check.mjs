// Fails when the committed generated GraphQL client code differs from what
// `npm run codegen` produces from schema.graphql and the documents of each target
// (the test suite's and the examples').
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const targets = ['test/gql', 'examples/graphql-client/gql', 'examples/browser-session/src/gql', 'examples/web-inbox/src/gql'];

const out = fs.mkdtempSync(path.join(os.tmpdir(), 'codegen-'));
try {
  execFileSync(process.execPath, ['node_modules/@graphql-codegen/cli/cjs/bin.js', '--config', 'codegen.ts', '--silent'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, CODEGEN_OUT: out },
  });
  const stale = [];
  for (const target of targets) {
    const generated = path.join(out, target);
    const names = (dir) => (fs.existsSync(dir) ? fs.readdirSync(dir) : []);
    for (const name of names(generated)) {
      const committed = path.join(target, name);
      if (!fs.existsSync(committed) || fs.readFileSync(committed, 'utf8') !== fs.readFileSync(path.join(generated, name), 'utf8')) stale.push(committed);
    }
    for (const name of names(target)) if (!fs.existsSync(path.join(generated, name))) stale.push(path.join(target, name));
    if (!fs.existsSync(generated)) stale.push(target);
  }
  if (stale.length) {
    process.stderr.write(`Generated GraphQL code is stale (${stale.join(', ')}): run \`npm run codegen\` and commit the result.\n`);
    process.exit(1);
  }
} finally {
  fs.rmSync(out, { recursive: true, force: true });
}
