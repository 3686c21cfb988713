-- The W3C traceparent of the request that queued a delivery, when tracing was on
-- (docs/operations.md#tracing): the delivery's attempts join that request's trace.
ALTER TABLE "deliveries" ADD COLUMN "trace_parent" VARCHAR(55);
