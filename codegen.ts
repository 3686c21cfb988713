import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed documents for GraphQL clients; the test suite is the first client.
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['test/**/*.ts', '!test/gql/**'],
  emitLegacyCommonJSImports: false,
  ignoreNoDocuments: false,
  generates: {
    [process.env.CODEGEN_OUT ? `${process.env.CODEGEN_OUT}/` : 'test/gql/']: {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: { useTypeImports: true, enumsAsTypes: true, scalars: { DateTime: 'string' } },
    },
  },
};

export default config;
