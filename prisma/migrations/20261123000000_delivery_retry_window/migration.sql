-- A delivery is retried for about half a day before it fails for good: 24
-- attempts, the delay doubling from DELIVERY_BACKOFF_MS up to
-- DELIVERY_MAX_BACKOFF_MS. Rows already queued keep the limit they were given.
ALTER TABLE "deliveries" ALTER COLUMN "max_attempts" SET DEFAULT 24;
