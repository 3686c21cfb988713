-- Channel providers (CONTRACT §6): a channel's messages go out through its provider, and the
-- provider's webhooks bring replies and delivery statuses back.

CREATE TYPE "channel_provider" AS ENUM ('webhook', 'whatsapp_cloud', 'twilio', 'smtp');

-- Settings that may be shown (phone number id, account SID, addresses) and, sealed with
-- SECRETS_KEY, the credentials that may not. Signing secrets are sealed too, so they need the room.
ALTER TABLE "channels" ADD COLUMN "provider" "channel_provider" NOT NULL DEFAULT 'webhook';
ALTER TABLE "channels" ADD COLUMN "provider_settings" JSONB NOT NULL DEFAULT '{}';
ALTER TABLE "channels" ADD COLUMN "provider_secrets" TEXT;
ALTER TABLE "channels" ALTER COLUMN "webhook_secret" TYPE TEXT;
ALTER TABLE "webhook_endpoints" ALTER COLUMN "secret" TYPE TEXT;

-- Replies and statuses: a message received from a contact, and how far an outbound one got.
-- (New enum values cannot be used in the transaction that adds them; nothing here does.)
ALTER TYPE "message_status" ADD VALUE 'read' AFTER 'delivered';
ALTER TYPE "message_status" ADD VALUE 'received';
ALTER TYPE "actor_type" ADD VALUE 'contact';

ALTER TABLE "messages" ADD COLUMN "sender_contact_id" UUID;
ALTER TABLE "messages" ADD COLUMN "failure_reason" VARCHAR(1024);
ALTER TABLE "messages" ADD COLUMN "media" JSONB NOT NULL DEFAULT '[]';
ALTER TABLE "messages" ADD CONSTRAINT "messages_sender_contact_id_fkey" FOREIGN KEY ("sender_contact_id") REFERENCES "contacts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

ALTER TABLE "conversation_state_changes" ADD COLUMN "actor_contact_id" UUID;
ALTER TABLE "conversation_state_changes" ADD CONSTRAINT "conversation_state_changes_actor_contact_id_fkey" FOREIGN KEY ("actor_contact_id") REFERENCES "contacts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- The provider's ids of a message: each part an outbound message was sent as (a WhatsApp text and
-- its media are separate messages there), and the id an inbound message arrived with. The key
-- makes an inbound message idempotent on (channel, provider id) however many copies arrive at once.
CREATE TABLE "provider_message_ids" (
    "channel_id" UUID NOT NULL,
    "provider_id" VARCHAR(255) NOT NULL,
    "message_id" UUID NOT NULL,
    "part" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "provider_message_ids_pkey" PRIMARY KEY ("channel_id", "provider_id")
);
CREATE INDEX "provider_message_ids_message_id_idx" ON "provider_message_ids"("message_id");
-- A status names a provider id only: whether it belongs to another channel is found through this.
CREATE INDEX "provider_message_ids_provider_id_idx" ON "provider_message_ids"("provider_id");
ALTER TABLE "provider_message_ids" ADD CONSTRAINT "provider_message_ids_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "provider_message_ids" ADD CONSTRAINT "provider_message_ids_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE DEFERRABLE INITIALLY DEFERRED;

-- A provider's webhook as it arrived, stored before it is answered and processed by the delivery
-- worker from the same outbox: nothing verified is lost to a crash, and it can be processed again.
CREATE TABLE "inbound_events" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "provider" "channel_provider" NOT NULL,
    "headers" JSONB NOT NULL DEFAULT '{}',
    "body" BYTEA NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "inbound_events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "inbound_events_channel_id_received_at_idx" ON "inbound_events"("channel_id", "received_at");
CREATE INDEX "inbound_events_received_at_idx" ON "inbound_events"("received_at");
ALTER TABLE "inbound_events" ADD CONSTRAINT "inbound_events_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "inbound_events" ADD CONSTRAINT "inbound_events_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The outbox's third kind of work: processing one inbound event.
ALTER TABLE "deliveries" ADD COLUMN "inbound_event_id" UUID;
CREATE INDEX "deliveries_inbound_event_id_idx" ON "deliveries"("inbound_event_id");
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_inbound_event_id_fkey" FOREIGN KEY ("inbound_event_id") REFERENCES "inbound_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_target_check";
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_target_check" CHECK (
    ("message_id" IS NOT NULL AND "endpoint_id" IS NULL AND "event_type" IS NULL AND "payload" IS NULL AND "inbound_event_id" IS NULL)
 OR ("message_id" IS NULL AND "endpoint_id" IS NOT NULL AND "event_type" IS NOT NULL AND "payload" IS NOT NULL AND "inbound_event_id" IS NULL)
 OR ("message_id" IS NULL AND "endpoint_id" IS NULL AND "event_type" IS NULL AND "payload" IS NULL AND "inbound_event_id" IS NOT NULL)
);
