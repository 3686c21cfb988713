import { z } from 'zod';

/** A document's id: the lowercase hex SHA-256 of its text. */
export const DOCUMENT_HASH = /^[0-9a-f]{64}$/;

/**
 * graphql-codegen client preset's `persisted-documents.json`: each document's text under its id,
 * `sha256:<hex SHA-256 of the text>`. Whether each key is its text's hash and each text a valid document is
 * checked by the service, which knows the schema.
 */
export const manifestSchema = z
  .record(z.string(), z.string({ error: 'The document must be the text of a GraphQL document.' }))
  .meta({
    id: 'PersistedDocuments',
    description:
      "graphql-codegen client preset's `persisted-documents.json` (`persistedDocuments: { hashAlgorithm: 'sha256' }`): each GraphQL document's text under its id, `sha256:` and the hex SHA-256 of the text (the bare hex is taken too).",
    example: { 'sha256:1dc20b906fcd8582c69f8e949587e177016f1ee173ce21c6d4e4f0ebbc87fcf4': 'query Viewer { viewer { workspace { id name } } }' },
  });

export const storedEnvelopeSchema = z.object({
  data: z.object({
    stored: z.int().meta({ description: 'How many of the documents were new to the workspace; registering a manifest again stores none.' }),
  }),
});
