-- Broadcasts (docs/broadcasts.md): one message to many contacts of a channel, made recipient by
-- recipient at the channel's pace, which every process shares through channel_pacing.
CREATE TYPE "broadcast_status" AS ENUM ('scheduled', 'running', 'paused', 'finished', 'canceled');
CREATE TYPE "broadcast_recipient_state" AS ENUM ('pending', 'made', 'skipped', 'failed');

ALTER TABLE "channels" ADD COLUMN "max_rate_per_second" INTEGER;
ALTER TABLE "messages" ADD COLUMN "broadcast_id" UUID;

CREATE TABLE "broadcasts" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "status" "broadcast_status" NOT NULL DEFAULT 'scheduled',
    "rate_per_second" INTEGER NOT NULL,
    "message" JSONB NOT NULL,
    "sender_user_id" UUID,
    "sender_name" VARCHAR(255),
    "total" INTEGER NOT NULL,
    "next_at" TIMESTAMPTZ(3),
    "start_at" TIMESTAMPTZ(3) NOT NULL,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "broadcasts_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "broadcasts_workspace_id_created_at_id_idx" ON "broadcasts"("workspace_id", "created_at" DESC, "id" DESC);
CREATE INDEX "broadcasts_active_idx" ON "broadcasts"("status") WHERE finished_at IS NULL;
ALTER TABLE "broadcasts" ADD CONSTRAINT "broadcasts_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "broadcasts" ADD CONSTRAINT "broadcasts_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "broadcast_recipients" (
    "broadcast_id" UUID NOT NULL,
    "contact_id" UUID NOT NULL,
    "state" "broadcast_recipient_state" NOT NULL DEFAULT 'pending',
    "message_id" UUID,
    "failure_reason" VARCHAR(1024),
    CONSTRAINT "broadcast_recipients_pkey" PRIMARY KEY ("broadcast_id", "contact_id")
);
CREATE INDEX "broadcast_recipients_pending_idx" ON "broadcast_recipients"("broadcast_id", "contact_id") WHERE state = 'pending';
ALTER TABLE "broadcast_recipients" ADD CONSTRAINT "broadcast_recipients_broadcast_id_fkey" FOREIGN KEY ("broadcast_id") REFERENCES "broadcasts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "channel_pacing" (
    "channel_id" UUID NOT NULL,
    "next_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "limited_rate" DOUBLE PRECISION,
    "limited_at" TIMESTAMPTZ(3),
    "blocked_until" TIMESTAMPTZ(3),
    CONSTRAINT "channel_pacing_pkey" PRIMARY KEY ("channel_id")
);
ALTER TABLE "channel_pacing" ADD CONSTRAINT "channel_pacing_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
