// The deploy step of the client: registers its documents with the gateway, so that the ids it
// sends name them. Run it whenever `npm run codegen` changed gql/persisted-documents.json, before
// the new client goes live:
//   CONNECT_URL=http://localhost:4000 CONNECT_API_KEY=cak_… npx tsx examples/graphql-client/register.ts
import { readFileSync } from 'node:fs';
import { registerDocuments } from './client.js';

const apiKey = process.env.CONNECT_API_KEY;
if (!apiKey) {
  process.stderr.write('Set CONNECT_API_KEY to a backend credential of the workspace (a channel API key or a connection token).\n');
  process.exit(1);
}
const manifest = JSON.parse(readFileSync(new URL('./gql/persisted-documents.json', import.meta.url), 'utf8')) as Record<string, string>;
const stored = await registerDocuments({ baseUrl: process.env.CONNECT_URL ?? 'http://localhost:4000', apiKey }, manifest);
console.log(`Registered ${Object.keys(manifest).length} documents, ${stored} of them new.`);
