import SchemaBuilder, { BasePlugin, type FieldNullability, type InputFieldMap, type PothosOutputFieldConfig, type SchemaTypes, type TypeParam } from '@pothos/core';
import {
  getNamedType,
  getOperationAST,
  isAbstractType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * What a field's value may depend on of the caller, besides its arguments and the object it is
 * resolved on (docs/graphql.md, "What a field reads of the caller"): the workspace, the set of
 * channels the credential can act as, or the credential's user. Declared where the field is
 * defined (`reads`), so that whatever shares one result between callers — the subscription
 * cohorts (src/realtime/cohorts.ts) — keys on it: a field that reads the user cannot be added
 * without subscribers of different users being told apart.
 */
export type CallerRead = 'workspace' | 'channels' | 'user';

declare global {
  export namespace PothosSchemaTypes {
    interface Plugins<Types extends SchemaTypes> {
      callerReads: CallerReadsPlugin<Types>;
    }
    interface FieldOptions<
      Types extends SchemaTypes = SchemaTypes,
      ParentShape = unknown,
      Type extends TypeParam<Types> = TypeParam<Types>,
      Nullable extends FieldNullability<Type> = FieldNullability<Type>,
      Args extends InputFieldMap = InputFieldMap,
      ResolveShape = unknown,
      ResolveReturnShape = unknown,
    > {
      /** What the field's value depends on of the caller (src/graphql/caller-reads.ts); nothing when absent. */
      reads?: readonly CallerRead[];
    }
  }
}

/** Puts each field's declared `reads` in its GraphQL extensions, where execution finds it. */
export class CallerReadsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(fieldConfig: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
    const reads = (fieldConfig.pothosOptions as { reads?: readonly CallerRead[] }).reads;
    if (!reads?.length) return fieldConfig;
    return { ...fieldConfig, extensions: { ...fieldConfig.extensions, reads: [...reads] } } as PothosOutputFieldConfig<Types>;
  }
}

SchemaBuilder.registerPlugin('callerReads', CallerReadsPlugin);

/** The plugin's name, for the builder's `plugins`. */
export const CALLER_READS = 'callerReads' as const;

/** What `field` declares it reads of the caller. */
export const fieldReads = (field: GraphQLField<unknown, unknown>): readonly CallerRead[] => (field.extensions as { reads?: readonly CallerRead[] }).reads ?? [];

/**
 * Everything an operation's selection reads of the caller: the union of the declarations of every
 * field it may select, through fragments, and on every type an abstract position may resolve to
 * (whatever its directives, which are not evaluated: a field that might be selected counts).
 */
export function operationReads(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): Set<CallerRead> {
  const reads = new Set<CallerRead>();
  const operation = getOperationAST(document, operationName) as OperationDefinitionNode | null;
  if (!operation) return reads;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const roots = { subscription: schema.getSubscriptionType(), mutation: schema.getMutationType(), query: schema.getQueryType() };
  const root = roots[operation.operation];
  if (!root) return reads;
  const seen = new Set<string>();
  const walk = (types: readonly GraphQLNamedType[], selectionSet: SelectionSetNode) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const children: GraphQLNamedType[] = [];
        for (const type of types) {
          if (!isObjectType(type) && !('getFields' in type)) continue;
          const field = (type as { getFields(): Record<string, GraphQLField<unknown, unknown>> }).getFields()[name];
          if (!field) continue;
          for (const read of fieldReads(field)) reads.add(read);
          children.push(getNamedType(field.type));
        }
        if (selection.selectionSet) walk(expand(schema, children), selection.selectionSet);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : undefined;
        walk(condition ? expand(schema, [condition]) : types, selection.selectionSet);
      } else {
        const fragment = fragments.get(selection.name.value);
        if (!fragment || seen.has(fragment.name.value)) continue;
        seen.add(fragment.name.value);
        const condition = schema.getType(fragment.typeCondition.name.value);
        walk(condition ? expand(schema, [condition]) : types, fragment.selectionSet);
        seen.delete(fragment.name.value);
      }
    }
  };
  walk([root], operation.selectionSet);
  return reads;
}

/** The types a position may resolve to: an abstract type with each of its object types. */
function expand(schema: GraphQLSchema, types: readonly GraphQLNamedType[]): GraphQLNamedType[] {
  const out = new Set<GraphQLNamedType>();
  for (const type of types) {
    out.add(type);
    if (isAbstractType(type)) for (const possible of schema.getPossibleTypes(type)) out.add(possible);
  }
  return [...out];
}
