import type { CodegenConfig } from '@graphql-codegen/cli';
import { addTypenameSelectionDocumentTransform } from '@graphql-codegen/client-preset';
import type { Types } from '@graphql-codegen/plugin-helpers';
import { sortExecutableDocument } from '@graphql-tools/documents';

// Typed documents for GraphQL clients: the test suite, the example client in
// examples/graphql-client and the browser pages in examples/browser-session and examples/web-inbox. Each target reads
// only its own documents, so an operation in one never changes another's generated code. The
// examples ship persisted documents: ids only (SHA-256 of each text), the texts in
// gql/persisted-documents.json for the deploy step that registers them with the gateway.
// CODEGEN_OUT moves every target under another root (the staleness check compares there).
const root = process.env.CODEGEN_OUT ? `${process.env.CODEGEN_OUT}/` : '';
const output = {
  preset: 'client',
  presetConfig: { fragmentMasking: false },
  config: { useTypeImports: true, enumsAsTypes: true, scalars: { DateTime: 'string' } },
} as const;

/**
 * Orders each document as the persisted-documents manifest prints it (selections, arguments,
 * variables and definitions sorted), so that graphql-js print() of the typed document a client
 * holds is print() of the registered text: the hash Apollo Client's PersistedQueryLink sends.
 */
const sortedDocumentTransform: Types.DocumentTransformObject = {
  transform: ({ documents }) => documents.map((file) => ({ ...file, document: file.document && sortExecutableDocument(file.document) })),
};

const config: CodegenConfig = {
  schema: 'schema.graphql',
  emitLegacyCommonJSImports: false,
  ignoreNoDocuments: false,
  generates: {
    [`${root}test/gql/`]: { ...output, documents: ['test/**/*.ts', '!test/gql/**'] },
    [`${root}examples/graphql-client/gql/`]: {
      ...output,
      presetConfig: { ...output.presetConfig, persistedDocuments: { mode: 'replaceDocumentWithHash', hashAlgorithm: 'sha256' } },
      documents: ['examples/graphql-client/**/*.ts', '!examples/graphql-client/gql/**'],
    },
    [`${root}examples/browser-session/src/gql/`]: {
      ...output,
      presetConfig: { ...output.presetConfig, persistedDocuments: { mode: 'replaceDocumentWithHash', hashAlgorithm: 'sha256' } },
      documents: ['examples/browser-session/src/**/*.ts', '!examples/browser-session/src/gql/**'],
    },
    // Apollo Client: the documents keep their text, with `__typename` where Apollo's cache adds it,
    // in the manifest's order: PersistedQueryLink's hash of a document (print() of it) then names
    // its registered text (docs/browser-apps.md#apollo-client).
    [`${root}examples/apollo-client/gql/`]: {
      ...output,
      presetConfig: { ...output.presetConfig, persistedDocuments: { mode: 'embedHashInDocument', hashAlgorithm: 'sha256' } },
      documentTransforms: [addTypenameSelectionDocumentTransform, sortedDocumentTransform],
      documents: ['examples/apollo-client/**/*.ts', '!examples/apollo-client/gql/**'],
    },
    // urql: the documents keep their text (urql keys its cache by it) with the id beside it
    // (`__meta__.hash`), and `__typename` where urql adds it, so the registered text is the one urql
    // formats and its document cache sees the types.
    [`${root}examples/web-inbox/src/gql/`]: {
      ...output,
      presetConfig: { ...output.presetConfig, persistedDocuments: { mode: 'embedHashInDocument', hashAlgorithm: 'sha256' } },
      documentTransforms: [addTypenameSelectionDocumentTransform],
      documents: ['examples/web-inbox/src/**/*.{ts,tsx}', '!examples/web-inbox/src/gql/**'],
    },
  },
};

export default config;
