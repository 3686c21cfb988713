import SchemaBuilder from '@pothos/core';
import { isObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../../src/schema.js';
import { DECLARED_SCOPES } from '../../../src/graphql/scopes.js';
import { DOCUMENTED_ROUTES } from '../../../src/app.js';
import { route } from '../../../src/rest/route.js';
import { document } from '../../helpers/openapi.js';

/*
 * docs/browser-apps.md, Scopes: every REST route and every GraphQL root field states the scope it needs
 * where it is declared, so an operation without one cannot be forgotten.
 */

const SCOPES = ['read', 'send', 'contacts', 'conversations', 'credentials', 'broadcasts'];

describe('declared scopes', () => {
  it('every GraphQL root field carries a scope; queries and subscriptions need read, and no root field is left out', () => {
    const fields: Record<string, unknown> = {};
    for (const type of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
      expect(type && isObjectType(type)).toBe(true);
      for (const field of Object.values(type!.getFields())) fields[`${type!.name}.${field.name}`] = field.extensions?.scope;
    }
    for (const [name, scope] of Object.entries(fields)) expect(SCOPES, name).toContain(scope);
    for (const [name, scope] of Object.entries(fields)) if (!name.startsWith('Mutation.')) expect(scope, name).toBe('read');
    expect(fields).toMatchObject({
      'Mutation.sendMessage': 'send',
      'Mutation.createContact': 'contacts',
      'Mutation.updateContact': 'contacts',
      'Mutation.closeConversation': 'conversations',
      'Mutation.reopenConversation': 'conversations',
      'Mutation.createSession': 'credentials',
      'Mutation.createBroadcast': 'broadcasts',
      'Mutation.cancelBroadcast': 'broadcasts',
    });
  });

  it('a root field without a scope does not typecheck, and a schema holding one does not build', () => {
    // The Prisma plugin's options are required of every builder by its global types; this one has no Prisma.
    const builder = new SchemaBuilder<{ Context: never }>({ plugins: [DECLARED_SCOPES] } as never);
    builder.queryType({});
    // @ts-expect-error `scope` is a required option of every root field
    builder.queryField('unscoped', (t) => t.string({ resolve: () => 'x' }));
    expect(() => builder.toSchema()).toThrow(/Query\.unscoped states no scope/);
  });

  it('every REST route carries a scope, shown in the OpenAPI document; a route without one does not typecheck', () => {
    for (const declared of DOCUMENTED_ROUTES.rest) {
      expect(SCOPES, `${declared.method} ${declared.path}`).toContain(declared.scope);
      const template = `/api/connect${declared.path.replace(/:(\w+)/g, '{$1}')}`;
      expect((document.paths[template]![declared.method.toLowerCase()] as unknown as Record<string, unknown>)['x-scope']).toBe(declared.scope);
      if (declared.method === 'GET' && !declared.path.startsWith('/sessions')) expect(declared.scope).toBe('read');
      if (declared.path.startsWith('/sessions')) expect(declared.scope).toBe('credentials');
    }
    // @ts-expect-error `scope` is a required part of a route declaration
    const unscoped = route({ method: 'GET', path: '/x', operationId: 'x', summary: 'x', tag: 'x', responses: {}, handler: async () => new Response() });
    expect(unscoped.scope).toBeUndefined();
  });
});
