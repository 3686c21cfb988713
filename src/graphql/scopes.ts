import SchemaBuilder, {
  BasePlugin,
  PothosSchemaError,
  type FieldNullability,
  type InputFieldMap,
  type PothosOutputFieldConfig,
  type SchemaTypes,
  type TypeParam,
} from '@pothos/core';
import type { GraphQLFieldResolver } from 'graphql';
import { requireScope, SCOPES, type Scope } from '../context/scopes.js';
import type { RequestContext } from '../context/types.js';
import { StreamEnd } from '../context/services.js';

/*
 * Every root field states the scope it needs where it is declared (docs/browser-apps.md, Scopes), the way
 * every REST route does: `scope` is a required option of query, mutation and subscription fields,
 * so a field without one does not typecheck, and the schema refuses to build without one either.
 */
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
      scope: Scope;
    }
    interface MutationFieldOptions<
      Types extends SchemaTypes,
      Type extends TypeParam<Types>,
      Nullable extends FieldNullability<Type>,
      Args extends InputFieldMap,
      ResolveReturnShape,
    > {
      /** What the caller's credential must hold to run this mutation (docs/browser-apps.md). */
      scope: Scope;
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
      scope: Scope;
    }
  }
}

function declaredScope(fieldConfig: PothosOutputFieldConfig<SchemaTypes>): Scope | null {
  if (fieldConfig.kind !== 'Query' && fieldConfig.kind !== 'Mutation' && fieldConfig.kind !== 'Subscription') return null;
  const scope = (fieldConfig.pothosOptions as { scope?: unknown }).scope;
  if (typeof scope !== 'string' || !SCOPES.includes(scope as Scope)) {
    throw new PothosSchemaError(`${fieldConfig.parentType}.${fieldConfig.name} states no scope: every root field declares the scope it needs`);
  }
  return scope as Scope;
}

/**
 * Checks each root field's declared scope against the caller's credential before it runs: outside
 * its scopes a session gets FORBIDDEN for that field, which is null while the operation's other
 * fields are answered (so query and mutation root fields are nullable), and nothing is written.
 * Subscriptions are checked when they start, and their streams are held by the credential
 * (src/realtime/subscriptions.ts): once it lapses, the stream's last result is the error.
 */
export class DeclaredScopesPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(fieldConfig: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
    const scope = declaredScope(fieldConfig as PothosOutputFieldConfig<SchemaTypes>);
    if (!scope) return fieldConfig;
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
    const scope = declaredScope(fieldConfig as PothosOutputFieldConfig<SchemaTypes>);
    if (!scope) return resolver;
    if (fieldConfig.kind === 'Subscription') {
      // Scope and credential were checked when the stream started; the stream's end is an error of this field.
      return (parent, args, context, info) => {
        if (parent instanceof StreamEnd) throw parent.error;
        return resolver(parent, args, context, info);
      };
    }
    return (parent, args, context, info) => {
      requireScope((context as RequestContext).auth.credential, scope);
      return resolver(parent, args, context, info);
    };
  }

  override wrapSubscribe(
    subscribe: GraphQLFieldResolver<unknown, Types['Context'], object> | undefined,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> | undefined {
    const scope = declaredScope(fieldConfig as PothosOutputFieldConfig<SchemaTypes>);
    if (!scope || !subscribe) return subscribe;
    return (parent, args, context, info) => {
      const ctx = context as RequestContext;
      requireScope(ctx.auth.credential, scope);
      if (!ctx.holdStream) throw new Error('a subscription needs the stream hold of its app');
      return ctx.holdStream(ctx, () => subscribe(parent, args, context, info) as AsyncIterable<unknown> | Promise<AsyncIterable<unknown>>);
    };
  }
}

SchemaBuilder.registerPlugin('declaredScopes', DeclaredScopesPlugin);

/** The plugin's name, for the builder's `plugins`. */
export const DECLARED_SCOPES = 'declaredScopes' as const;
