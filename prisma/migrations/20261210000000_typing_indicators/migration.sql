-- When the conversation's provider was last asked to show its contact a typing indicator
-- (docs/inbox.md, "Typing on WhatsApp"): one request per conversation in any 20 seconds, across
-- processes.
ALTER TABLE "conversations" ADD COLUMN "typing_indicated_at" TIMESTAMPTZ(3);
