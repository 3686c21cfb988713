-- A channel's provider is named, not enumerated: each provider is a folder of the code whose
-- descriptor gives its name (docs/providers.md), so adding one needs no migration. The inbound
-- address is unique among active channels whatever their provider: only a provider with an
-- inbound address setting (email) has one.
DROP INDEX "channels_inbound_address_active_key";
ALTER TABLE "channels" ALTER COLUMN "provider" DROP DEFAULT;
ALTER TABLE "channels" ALTER COLUMN "provider" TYPE TEXT USING "provider"::text;
ALTER TABLE "channels" ALTER COLUMN "provider" SET DEFAULT 'webhook';
ALTER TABLE "inbound_events" ALTER COLUMN "provider" TYPE TEXT USING "provider"::text;
DROP TYPE "channel_provider";
CREATE UNIQUE INDEX "channels_inbound_address_active_key" ON "channels"("inbound_address") WHERE status = 'active';
