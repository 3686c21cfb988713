import SchemaBuilder, {
  BasePlugin,
  PothosSchemaError,
  type FieldNullability,
  type InputFieldMap,
  type InputShapeFromFields,
  type PothosOutputFieldConfig,
  type SchemaTypes,
  type TypeParam,
} from '@pothos/core';
import ScopeAuthPlugin, { AuthScopeFailureType, type AuthFailure, type FieldAuthScopes, type ForbiddenResult } from '@pothos/plugin-scope-auth';
import type { GraphQLFieldResolver } from 'graphql';
import { scopeRefusal, SCOPES, type Scope } from '../context/scopes.js';
import type { RequestContext } from '../context/types.js';
import { ForbiddenError } from '../errors/domain.js';
import { StreamEnd } from '../context/services.js';

/*
 * Every root field states the scope it needs where it is declared (docs/browser-apps.md, Scopes), the way
 * every REST route does: `authScopes: { <scope>: true }` — the scope-auth plugin's option
 * (@pothos/plugin-scope-auth), which checks it — is a required option of query, mutation and
 * subscription fields here, so a field without one does not typecheck, and the schema refuses to
 * build without exactly one scope either.
 */

/** One scope, as a root field states it: `{ contacts: true }`. */
export type DeclaredScope = { [S in Scope]: { readonly [K in S]: true } }[Scope];

declare global {
  export namespace PothosSchemaTypes {
    interface Plugins<Types extends SchemaTypes> {
      declaredScopes: DeclaredScopesPlugin<Types>;
    }
    interface QueryFieldOptions<
      Types extends SchemaTypes,
      Type extends TypeParam<Types>,
      Nullable extends FieldNullability<Type>,
      Args extends InputFieldMap,
      ResolveReturnShape,
    > {
      /** What the caller's credential must hold to read this field (docs/browser-apps.md). */
      authScopes: FieldAuthScopes<Types, Types['Root'], InputShapeFromFields<Args>> & DeclaredScope;
    }
    interface MutationFieldOptions<
      Types extends SchemaTypes,
      Type extends TypeParam<Types>,
      Nullable extends FieldNullability<Type>,
      Args extends InputFieldMap,
      ResolveReturnShape,
    > {
      /** What the caller's credential must hold to run this mutation (docs/browser-apps.md). */
      authScopes: FieldAuthScopes<Types, Types['Root'], InputShapeFromFields<Args>> & DeclaredScope;
    }
    interface SubscriptionFieldOptions<
      Types extends SchemaTypes,
      Type extends TypeParam<Types>,
      Nullable extends FieldNullability<Type>,
      Args extends InputFieldMap,
      ResolveShape,
      ResolveReturnShape,
    > {
      /** What the caller's credential must hold to subscribe (docs/browser-apps.md). */
      authScopes: FieldAuthScopes<Types, Types['Root'], InputShapeFromFields<Args>> & DeclaredScope;
    }
  }
}

/** The scope a root field states; null for any other field. Anything but exactly one known scope refuses the schema. */
function declaredScope(fieldConfig: PothosOutputFieldConfig<SchemaTypes>): Scope | null {
  if (fieldConfig.kind !== 'Query' && fieldConfig.kind !== 'Mutation' && fieldConfig.kind !== 'Subscription') return null;
  const stated = (fieldConfig.pothosOptions as { authScopes?: unknown }).authScopes;
  const names = stated && typeof stated === 'object' ? Object.keys(stated) : [];
  const scope = names[0] as Scope | undefined;
  if (names.length !== 1 || !SCOPES.includes(scope!) || (stated as Record<string, unknown>)[scope!] !== true) {
    throw new PothosSchemaError(
      `${fieldConfig.parentType}.${fieldConfig.name} states no scope: every root field declares the one scope it needs (authScopes: { <scope>: true })`,
    );
  }
  return scope!;
}

/** The scope whose absence refused a field, from the scope-auth plugin's account of the failure. */
function refusedScope(failure: AuthFailure): Scope | null {
  if (failure.kind === AuthScopeFailureType.AuthScope) return failure.scope as Scope;
  if (failure.kind === AuthScopeFailureType.AnyAuthScopes || failure.kind === AuthScopeFailureType.AllAuthScopes) {
    for (const inner of failure.failures) {
      const scope = refusedScope(inner);
      if (scope) return scope;
    }
  }
  return null;
}

/**
 * The scope-auth plugin's options: the caller's scopes are its credential's, and a field outside
 * them is refused as a REST route is (FORBIDDEN, saying which scope is missing). Subscriptions are
 * checked when they start, not at each event.
 */
export const scopeAuthOptions = {
  authorizeOnSubscribe: true,
  authScopes: (ctx: RequestContext) => ctx.auth.credential.scopes,
  unauthorizedError: (_parent: unknown, _ctx: unknown, _info: unknown, result: ForbiddenResult): Error => {
    const scope = refusedScope(result.failure);
    return scope ? scopeRefusal(scope) : new ForbiddenError(result.message);
  },
};

/**
 * What our root fields add to the scope-auth plugin's check (which runs first, before any other
 * plugin): every root field states its one scope (above), kept in its GraphQL extensions as
 * `scope`. Outside its scopes a session gets FORBIDDEN for that field, which is null while the
 * operation's other fields are answered (so query and mutation root fields are nullable), and
 * nothing is written. Subscriptions, checked when they start, have their streams held by the
 * credential (src/realtime/subscriptions.ts): once it lapses, the stream's last result is the error.
 */
export class DeclaredScopesPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(fieldConfig: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
    const scope = declaredScope(fieldConfig as PothosOutputFieldConfig<SchemaTypes>);
    if (!scope) return fieldConfig;
    const plugins = (this.builder.options.plugins ?? []) as string[];
    if (!(plugins.indexOf(ScopeAuthPlugin) >= 0 && plugins.indexOf(ScopeAuthPlugin) < plugins.indexOf(DECLARED_SCOPES))) {
      throw new PothosSchemaError(`${fieldConfig.parentType}.${fieldConfig.name}: declared scopes are checked by the ${ScopeAuthPlugin} plugin, listed before ${DECLARED_SCOPES}`);
    }
    return {
      ...fieldConfig,
      type: fieldConfig.kind === 'Subscription' ? fieldConfig.type : { ...fieldConfig.type, nullable: true },
      extensions: { ...fieldConfig.extensions, scope },
    } as PothosOutputFieldConfig<Types>;
  }

  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    if (fieldConfig.kind !== 'Subscription') return resolver;
    // Scope and credential were checked when the stream started; the stream's end is an error of this field.
    return (parent, args, context, info) => {
      if (parent instanceof StreamEnd) throw parent.error;
      return resolver(parent, args, context, info);
    };
  }

  override wrapSubscribe(
    subscribe: GraphQLFieldResolver<unknown, Types['Context'], object> | undefined,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> | undefined {
    if (fieldConfig.kind !== 'Subscription' || !subscribe) return subscribe;
    return (parent, args, context, info) => {
      const ctx = context as RequestContext;
      if (!ctx.holdStream) throw new Error('a subscription needs the stream hold of its app');
      return ctx.holdStream(ctx, () => subscribe(parent, args, context, info) as AsyncIterable<unknown> | Promise<AsyncIterable<unknown>>);
    };
  }
}

SchemaBuilder.registerPlugin('declaredScopes', DeclaredScopesPlugin);

/** The plugin's name, for the builder's `plugins`, after the scope-auth plugin's. */
export const DECLARED_SCOPES = 'declaredScopes' as const;

/** The scope-auth plugin's name, first of the builder's `plugins`. */
export { ScopeAuthPlugin as SCOPE_AUTH };
