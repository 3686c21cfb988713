import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type GraphQLFormattedError } from 'graphql';
import type { TestApp } from './app.js';

export interface OperationResult<TData> {
  status: number;
  data?: TData | null;
  errors?: GraphQLFormattedError[];
}

/** POSTs a GraphQL request body (`query`, `variables`, `operationName`) to the real /graphql endpoint. */
export async function postOperation<TData = any>(
  app: TestApp,
  host: string,
  headers: Record<string, string>,
  body: { query: string; variables?: unknown; operationName?: string | undefined },
): Promise<OperationResult<TData>> {
  const response = await app.fetch(host, '/graphql', {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, ...((await response.json()) as Omit<OperationResult<TData>, 'status'>) };
}

/** Executes a typed GraphQL document through the real /graphql endpoint. */
export function executeOperation<TData, TVariables>(
  app: TestApp,
  host: string,
  headers: Record<string, string>,
  document: TypedDocumentNode<TData, TVariables>,
  variables?: TVariables,
): Promise<OperationResult<TData>> {
  return postOperation<TData>(app, host, headers, { query: print(document), variables });
}
