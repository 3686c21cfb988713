-- The deliveries outbox also carries workspace events to webhook endpoints: a row
-- delivers either a message to its channel (message_id) or one event to one
-- endpoint (endpoint_id, event_type and the signed body in payload).
ALTER TABLE "deliveries" ALTER COLUMN "message_id" DROP NOT NULL;
ALTER TABLE "deliveries" ADD COLUMN "endpoint_id" UUID;
ALTER TABLE "deliveries" ADD COLUMN "event_type" VARCHAR(64);
ALTER TABLE "deliveries" ADD COLUMN "payload" JSON;
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_target_check" CHECK (
    ("message_id" IS NOT NULL AND "endpoint_id" IS NULL AND "event_type" IS NULL AND "payload" IS NULL)
 OR ("message_id" IS NULL AND "endpoint_id" IS NOT NULL AND "event_type" IS NOT NULL AND "payload" IS NOT NULL)
);

CREATE INDEX "deliveries_endpoint_id_idx" ON "deliveries"("endpoint_id");

-- Deleting an endpoint drops the events still queued for it.
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;
