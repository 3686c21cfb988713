-- Browser sessions (CONTRACT §7): tokens minted by a backend credential for one workspace user,
-- with scopes, channels and origins; revoked and expired with the credential that minted them.
ALTER TABLE "access_tokens"
    ADD COLUMN "user_id" UUID,
    ADD COLUMN "minted_by_id" UUID,
    ADD COLUMN "scopes" TEXT[] DEFAULT ARRAY[]::TEXT[],
    ADD COLUMN "channel_ids" UUID[] DEFAULT ARRAY[]::UUID[],
    ADD COLUMN "origins" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- A session names its user and its minting credential, and no channel or connection of its own.
ALTER TABLE "access_tokens" DROP CONSTRAINT "access_tokens_owner_check";
ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_owner_check" CHECK (
    ("kind" = 'channel_key' AND "channel_id" IS NOT NULL AND "connection_id" IS NULL AND "user_id" IS NULL AND "minted_by_id" IS NULL) OR
    ("kind" = 'connection' AND "connection_id" IS NOT NULL AND "channel_id" IS NULL AND "user_id" IS NULL AND "minted_by_id" IS NULL) OR
    ("kind" = 'session' AND "user_id" IS NOT NULL AND "minted_by_id" IS NOT NULL AND "channel_id" IS NULL AND "connection_id" IS NULL AND "expires_at" IS NOT NULL)
);

CREATE INDEX "access_tokens_minted_by_id_idx" ON "access_tokens"("minted_by_id");
CREATE INDEX "access_tokens_user_id_idx" ON "access_tokens"("user_id");
CREATE INDEX "access_tokens_sessions_page_idx" ON "access_tokens"("workspace_id", "created_at" DESC, "id" DESC) WHERE user_id IS NOT NULL;

ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_minted_by_id_fkey" FOREIGN KEY ("minted_by_id") REFERENCES "access_tokens"("id") ON DELETE CASCADE ON UPDATE CASCADE;
