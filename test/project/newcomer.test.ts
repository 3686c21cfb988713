import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

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
