-- The outbox's fourth kind of work: a read receipt, reporting to the channel's provider the
-- latest inbound message the team read in a conversation (CONTRACT §9). A conversation has at
-- most one pending receipt: a newer read updates it instead of queueing another.
ALTER TABLE "deliveries" ADD COLUMN "conversation_id" UUID;
CREATE UNIQUE INDEX "deliveries_receipt_pending_key" ON "deliveries"("conversation_id") WHERE status = 'pending';
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "deliveries" DROP CONSTRAINT "deliveries_target_check";
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_target_check" CHECK (
    ("message_id" IS NOT NULL AND "endpoint_id" IS NULL AND "event_type" IS NULL AND "payload" IS NULL AND "inbound_event_id" IS NULL AND "conversation_id" IS NULL)
 OR ("message_id" IS NULL AND "endpoint_id" IS NOT NULL AND "event_type" IS NOT NULL AND "payload" IS NOT NULL AND "inbound_event_id" IS NULL AND "conversation_id" IS NULL)
 OR ("message_id" IS NULL AND "endpoint_id" IS NULL AND "event_type" IS NULL AND "payload" IS NULL AND "inbound_event_id" IS NOT NULL AND "conversation_id" IS NULL)
 OR ("message_id" IS NULL AND "endpoint_id" IS NULL AND "event_type" IS NULL AND "payload" IS NOT NULL AND "inbound_event_id" IS NULL AND "conversation_id" IS NOT NULL)
);
