-- Opt-outs: a contact who asked a channel to stop bulk messages (an opt-out keyword, or the
-- provider refusing a send for that reason). Opting back in deletes the row.
CREATE TABLE "contact_opt_outs" (
    "contact_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "source" TEXT NOT NULL,

    CONSTRAINT "contact_opt_outs_pkey" PRIMARY KEY ("contact_id","channel_id"),
    CONSTRAINT "contact_opt_outs_source_check" CHECK ("source" IN ('keyword', 'provider'))
);

CREATE INDEX "contact_opt_outs_channel_id_idx" ON "contact_opt_outs"("channel_id");

ALTER TABLE "contact_opt_outs" ADD CONSTRAINT "contact_opt_outs_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "contact_opt_outs" ADD CONSTRAINT "contact_opt_outs_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
