import SchemaBuilder from '@pothos/core';
import { afterAll, describe, expect, it, vi } from 'vitest';

// The field below goes on a schema builder of this file's own: the modules are loaded afresh for it
// (their plugins registered again), and dropped after it, so no other file sees it.
vi.resetModules();
SchemaBuilder.allowPluginReRegistration = true;
afterAll(() => {
  vi.resetModules();
});
const { builder } = await import('../../src/graphql/builder.js');

// A value computed from the row by a resolver alone: nothing says which columns it needs.
builder.prismaObjectField('Contact', 'initials', (t) => t.string({ resolve: (contact) => contact.name.slice(0, 2) }));

describe('a field computed from the row', () => {
  it('that says nothing of what it reads stops the schema from building, naming the field and the ways to say it', async () => {
    await expect(import('../../src/schema.js')).rejects.toThrow(
      'Contact.initials is computed from the row without saying what it reads: expose a column (t.expose…), resolve a view field (viewField in src/graphql/rows.ts), or select what it reads (select).',
    );
  });
});
