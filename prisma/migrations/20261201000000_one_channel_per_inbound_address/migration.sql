-- An inbound email address belongs to one active channel, case-insensitively (CONTRACT §10):
-- a mail to an address two workspaces' channels shared was stored in both.
--
-- Addresses already shared keep going to the channel that had them first; each later active
-- channel loses its inbound address (`npm run admin -- channel:configure --channel ID
-- --inbound-address B` gives it another) rather than failing the migration.
WITH ranked AS (
  SELECT id, row_number() OVER (PARTITION BY lower(provider_settings->>'inboundAddress') ORDER BY created_at, id) AS n
    FROM "channels"
   WHERE status = 'active' AND provider = 'smtp' AND provider_settings ? 'inboundAddress')
UPDATE "channels" AS c
   SET provider_settings = c.provider_settings - 'inboundAddress', updated_at = now()
  FROM ranked
 WHERE c.id = ranked.id AND ranked.n > 1;

-- The address as the listener matches it, kept by the database itself from the settings, and
-- unique among active email channels.
ALTER TABLE "channels" ADD COLUMN "inbound_address" TEXT GENERATED ALWAYS AS (lower(provider_settings->>'inboundAddress')) STORED;
CREATE UNIQUE INDEX "channels_inbound_address_active_key" ON "channels"("inbound_address") WHERE status = 'active' AND provider = 'smtp';
