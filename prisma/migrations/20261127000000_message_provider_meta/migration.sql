-- What a provider says of a message beyond its text, kept for replies: an inbound email's
-- Message-ID, References and Subject, which the answer threads under (CONTRACT §6). Null for
-- every other message.
ALTER TABLE "messages" ADD COLUMN "provider_meta" JSONB;
