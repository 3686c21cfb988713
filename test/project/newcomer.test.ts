import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands.js';
import { messageViewSchema } from '../../src/modules/messages/messages.schemas.js';

// What a newcomer finds in the repository: the licence package.json names, npm's install-script
// policy covering every dependency that has one, and a README that points at every document.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as { license: string; allowScripts?: Record<string, boolean> };

describe('the repository', () => {
  it('carries the MIT licence package.json names', () => {
    expect(pkg.license).toBe('MIT');
    const licence = read('LICENSE');
    expect(licence).toMatch(/^MIT License\n/);
    expect(licence).toMatch(/Copyright \(c\) \d{4} Connect gateway contributors/);
  });

  it('decides for every locked dependency with an install script whether npm may run it', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([where, entry]) => where && entry.hasInstallScript)
      .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts.length).toBeGreaterThan(0);
    expect(withScripts.filter((name) => typeof pkg.allowScripts?.[name] !== 'boolean')).toEqual([]);
    // Each decision is explained in the README.
    for (const name of Object.keys(pkg.allowScripts ?? {})) expect(read('README.md')).toContain(`\`${name}\``);
  });

  it('lists every document of docs/ in the README’s documentation table', () => {
    const readme = read('README.md');
    const table = readme.slice(readme.indexOf('\n## Documentation\n'), readme.indexOf('\n## ', readme.indexOf('\n## Documentation\n') + 1));
    const missing = readdirSync(path.join(root, 'docs'))
      .filter((file) => file.endsWith('.md'))
      .filter((file) => !table.includes(`](docs/${file})`));
    expect(missing).toEqual([]);
  });
});

describe('the README and docs match the server', () => {
  const readme = read('README.md');

  it('describes the seeded demo: its contacts, and that its channel delivers locally', () => {
    const seed = read('src/modules/demo/demo.seed.ts');
    const names = [...seed.matchAll(/\{ name: '([^']+)', phone: '(\+\d+)'/g)].map((m) => [m[1]!, m[2]!]);
    expect(names.length).toBeGreaterThan(0);
    for (const [name, phone] of names) expect(readme.replace(/\s+/g, ' ')).toContain(`${name} (${phone})`);
    expect(readme).toContain('provider: "local"');
    expect(read('docs/delivery.md')).toContain('provider: "local"');
  });

  it('shows every field of a message in each message example', () => {
    // Every field an unencrypted message has (`placeholder` is only on encrypted ones).
    const keys = Object.keys(messageViewSchema.shape).filter((key) => key !== 'placeholder');
    const examples = readme.split('```').filter((block) => block.includes('"direction":'));
    expect(examples.length).toBeGreaterThan(1);
    for (const example of examples) for (const key of keys) expect(example, key).toContain(`"${key}":`);
  });

  it('mints the example session with the scopes the inbox operations need', () => {
    expect(readme).toMatch(/"scopes":\["read","send","conversations"\]/);
  });

  it('lists every admin command in a table of docs/operations.md', () => {
    const operations = read('docs/operations.md');
    const missing = Object.keys(commands).filter((name) => !operations.includes(`| \`${name}\` |`));
    expect(missing).toEqual([]);
  });

  it('says nothing of GraphiQL opening a query from its address', () => {
    expect(read('docs/graphql.md')).not.toMatch(/\?query=/);
  });

  it('names in the PostgreSQL section the settings it needs beyond the URL', () => {
    const section = readme.slice(readme.indexOf('\n## On PostgreSQL and Redis\n'), readme.indexOf('\n## Health and metrics\n'));
    for (const name of ['SECRETS_KEY', 'PUBLIC_URL', 'REDIS_PREFIX']) expect(section).toContain(`\`${name}\``);
  });

  it('documents the settings the web inbox’s own server reads', () => {
    const server = read('examples/web-inbox/server.ts');
    const doc = read('examples/web-inbox/README.md');
    for (const [, name] of server.matchAll(/process\.env\.([A-Z_]+)/g)) expect(doc).toContain(name);
    expect(doc).toMatch(/server listens on `PORT`/);
  });
});
