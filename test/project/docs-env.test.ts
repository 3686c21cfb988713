import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadEnv } from '../../src/env.js';

// The environment table of docs/operations.md must list every variable the server reads:
// every key of src/env.ts's schema and every `process.env.X` read elsewhere in src/.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/**
 * Whether `loadEnv` knows `name`: the schema either keeps the key in its result or reports it
 * as invalid. Unknown keys are dropped silently (zod strips them).
 */
function isSchemaKey(name: string): boolean {
  try {
    return name in loadEnv({ [name]: 'x' });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.some((problem) => problem.startsWith(`${name}:`));
    throw error;
  }
}

/** Keys of `const envSchema = z.object({ … })` as written in src/env.ts, one per line at the first level. */
function declaredKeys(source: string): string[] {
  const start = source.indexOf('const envSchema = z.object({');
  const end = source.indexOf('\n});', start);
  if (start < 0 || end < 0) throw new Error('src/env.ts: `const envSchema = z.object({ … });` not found; update test/project/docs-env.test.ts');
  return [...source.slice(start, end).matchAll(/^ {2}([A-Za-z_][A-Za-z0-9_]*)\s*:/gm)].map((m) => m[1]!);
}

/** The settings the server reads: src/env.ts's schema, plus any `process.env` read in src/ outside it. */
function settingsRead(): string[] {
  const envSource = read('src/env.ts');
  const declared = declaredKeys(envSource);
  // Every upper-case word of env.ts the schema accepts, in case a key is written in another style.
  const words = new Set(envSource.match(/\b[A-Z][A-Z0-9_]+\b/g) ?? []);
  const probed = [...words].filter(isSchemaKey);
  const direct: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (file !== path.join('src', 'generated')) walk(file);
      } else if (/\.[cm]?ts$/.test(entry.name) && file !== path.join('src', 'env.ts')) {
        for (const m of read(file).matchAll(/process\.env(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*['"`]([^'"`]+)['"`]\s*\])/g)) direct.push((m[1] ?? m[2])!);
      }
    }
  };
  walk('src');
  return [...new Set([...declared, ...probed, ...direct])].sort();
}

/** Variable names in the first column of the table under `## Environment variables`. */
function documentedVariables(): Map<string, string> {
  const doc = read('docs/operations.md');
  const start = doc.indexOf('\n## Environment variables\n');
  if (start < 0) throw new Error('docs/operations.md has no "## Environment variables" section');
  const next = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, next < 0 ? undefined : next);
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    if (!line.startsWith('|') || /^\|[\s|:-]+\|$/.test(line)) continue;
    const cells = line.split('|').slice(1, -1);
    for (const m of (cells[0] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)) rows.set(m[1]!, cells[1] ?? '');
  }
  return rows;
}

describe('docs/operations.md environment table', () => {
  it('finds the schema keys in src/env.ts', () => {
    // Guards the helpers themselves: an unknown name is not a key, and the parse agrees with loadEnv.
    expect(isSchemaKey('NOT_A_SETTING_OF_THIS_SERVER')).toBe(false);
    const declared = declaredKeys(read('src/env.ts'));
    expect(declared.length).toBeGreaterThan(10);
    expect(declared.filter((key) => !isSchemaKey(key))).toEqual([]);
    expect(Object.keys(loadEnv({})).filter((key) => !declared.includes(key))).toEqual([]);
  });

  it('lists every variable the server reads', () => {
    const documented = documentedVariables();
    const missing = settingsRead().filter((name) => !documented.has(name));
    expect(missing, `add a row for each to "## Environment variables" in docs/operations.md`).toEqual([]);
  });

  it('lists no variable the server does not read', () => {
    const known = new Set(settingsRead());
    expect([...documentedVariables().keys()].filter((name) => !known.has(name))).toEqual([]);
  });

  it('states each default the schema applies', () => {
    const defaults = loadEnv({}) as Record<string, unknown>;
    const wrong: string[] = [];
    for (const [name, cell] of documentedVariables()) {
      const value = defaults[name];
      if (value === undefined || Array.isArray(value)) continue;
      const shown = typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
      if (!cell.includes(`\`${shown}\``)) wrong.push(`${name}: the default is ${shown}, the table says ${cell.trim()}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('.env.example', () => {
  /** `# NAME=value` lines: every setting, commented out, with the value it would set. */
  const example = () => new Map([...read('.env.example').matchAll(/^# ([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));

  it('names every setting the server reads, and nothing else', () => {
    expect([...example().keys()].sort()).toEqual(settingsRead());
  });

  it('changes nothing as it stands, and each value it shows is the default', () => {
    const text = read('.env.example');
    expect(text.split('\n').filter((line) => line.trim() && !line.startsWith('#'))).toEqual([]);
    const defaults = loadEnv({}) as Record<string, unknown>;
    for (const [name, value] of example()) {
      if (value === '') continue;
      const expected = defaults[name];
      const shown = typeof expected === 'boolean' ? (expected ? '1' : '0') : String(expected);
      expect(value, name).toBe(shown);
      // Uncommented, the value loads as the same setting.
      expect(loadEnv({ [name]: value })[name as keyof ReturnType<typeof loadEnv>], name).toEqual(expected);
    }
  });
});

describe('a setting renamed', () => {
  it('reads STREAM_MAX_BUFFERED_BYTES under its earlier name, WS_MAX_BUFFERED_BYTES, when unset; the new name wins', () => {
    expect(loadEnv({ WS_MAX_BUFFERED_BYTES: '65536' }).STREAM_MAX_BUFFERED_BYTES).toBe(65536);
    expect(loadEnv({ WS_MAX_BUFFERED_BYTES: '65536', STREAM_MAX_BUFFERED_BYTES: '131072' }).STREAM_MAX_BUFFERED_BYTES).toBe(131072);
    expect(() => loadEnv({ WS_MAX_BUFFERED_BYTES: '12' })).toThrow(/STREAM_MAX_BUFFERED_BYTES/);
  });
});
