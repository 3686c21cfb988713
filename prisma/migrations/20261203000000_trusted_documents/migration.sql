-- Trusted documents (CONTRACT §8): the GraphQL documents a workspace registered, named by the
-- SHA-256 of their text, and whether its session tokens may run only those.

ALTER TABLE "workspaces" ADD COLUMN "trusted_documents_only" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "graphql_documents" (
    "workspace_id" UUID NOT NULL,
    "hash" CHAR(64) NOT NULL,
    "body" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "graphql_documents_pkey" PRIMARY KEY ("workspace_id", "hash")
);
ALTER TABLE "graphql_documents" ADD CONSTRAINT "graphql_documents_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
