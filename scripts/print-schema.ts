// Writes schema.graphql, the printed GraphQL schema clients and codegen read.
// `--check` fails instead when the file is stale.
import fs from 'node:fs';
import { printSchema } from 'graphql';
import { schema } from '../src/schema.js';

const file = new URL('../schema.graphql', import.meta.url);
const printed = `${printSchema(schema)}\n`;
if (process.argv.includes('--check')) {
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  if (current !== printed) {
    process.stderr.write('schema.graphql is stale: run `npm run schema:print` and commit the result.\n');
    process.exit(1);
  }
} else {
  fs.writeFileSync(file, printed);
}
