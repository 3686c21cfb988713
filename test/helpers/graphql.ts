import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type GraphQLFormattedError } from 'graphql';
import type { TestApp } from './app.js';

export interface OperationResult<TData> {
  status: number;
  data?: TData | null;
  errors?: GraphQLFormattedError[];
}

/** Executes a typed GraphQL document through the real /graphql endpoint. */
export async function executeOperation<TData, TVariables>(
  app: TestApp,
  host: string,
  headers: Record<string, string>,
  document: TypedDocumentNode<TData, TVariables>,
  variables?: TVariables,
): Promise<OperationResult<TData>> {
  const response = await app.fetch(host, '/graphql', {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query: print(document), variables }),
  });
  return { status: response.status, ...((await response.json()) as Omit<OperationResult<TData>, 'status'>) };
}
