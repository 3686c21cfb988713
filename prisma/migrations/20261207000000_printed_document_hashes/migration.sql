-- Registered GraphQL documents are also found by the SHA-256 of their text as graphql-js print()
-- prints it (the hash Apollo Client's persisted-query link sends). Documents stored before this
-- column existed get it the first time a lookup in their workspace misses (docs/graphql.md).

ALTER TABLE "graphql_documents" ADD COLUMN "printed_hash" CHAR(64);

CREATE INDEX "graphql_documents_workspace_id_printed_hash_idx" ON "graphql_documents"("workspace_id", "printed_hash");
