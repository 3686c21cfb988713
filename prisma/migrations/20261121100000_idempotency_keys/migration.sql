-- Replayable answers to requests sent with an Idempotency-Key (kept 24 hours).
CREATE TABLE "idempotency_keys" (
    "id" UUID NOT NULL,
    "credential_id" UUID NOT NULL,
    "route" VARCHAR(64) NOT NULL,
    "key" VARCHAR(255) NOT NULL,
    "request_hash" CHAR(64) NOT NULL,
    "response_status" INTEGER,
    "response_body" JSON,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "idempotency_keys_credential_id_route_key_key" ON "idempotency_keys"("credential_id", "route", "key");
CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys"("created_at");

ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_credential_id_fkey" FOREIGN KEY ("credential_id") REFERENCES "access_tokens"("id") ON DELETE CASCADE ON UPDATE CASCADE;
