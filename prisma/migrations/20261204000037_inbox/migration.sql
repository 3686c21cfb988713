-- The inbox (CONTRACT §9): who a conversation is assigned to, its labels, how far the team has
-- read it, and what keeps a page of the inbox cheap: the number of unread inbound messages and
-- the newest message, both kept by the statements that store messages and mark them read.

ALTER TYPE "conversation_state_change_type" ADD VALUE 'assigned';
ALTER TYPE "conversation_state_change_type" ADD VALUE 'unassigned';

ALTER TABLE "conversations"
    ADD COLUMN "assignee_id" UUID,
    ADD COLUMN "labels" TEXT[] DEFAULT ARRAY[]::TEXT[],
    ADD COLUMN "last_read_at" TIMESTAMPTZ(3),
    ADD COLUMN "unread_count" INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN "last_message_id" UUID;

ALTER TABLE "conversations" ADD CONSTRAINT "conversations_assignee_id_fkey" FOREIGN KEY ("assignee_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_last_message_id_fkey" FOREIGN KEY ("last_message_id") REFERENCES "messages"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Existing conversations: their newest message, and every inbound message unread.
UPDATE "conversations" AS c
   SET "last_message_id" = (SELECT m.id FROM "messages" AS m WHERE m.conversation_id = c.id ORDER BY m.created_at DESC, m.id DESC LIMIT 1),
       "unread_count" = (SELECT count(*) FROM "messages" AS m WHERE m.conversation_id = c.id AND m.direction = 'inbound');
UPDATE "conversations" SET "last_message_at" = "created_at" WHERE "last_message_at" IS NULL;

CREATE INDEX "conversations_channel_id_last_message_at_id_idx" ON "conversations"("channel_id", "last_message_at" DESC, "id" DESC);
CREATE INDEX "conversations_assignee_id_created_at_id_idx" ON "conversations"("assignee_id", "created_at" DESC, "id" DESC);
CREATE INDEX "conversations_labels_idx" ON "conversations" USING GIN ("labels");
CREATE INDEX "conversations_unread_idx" ON "conversations"("channel_id", "created_at" DESC, "id" DESC) WHERE unread_count > 0;
CREATE INDEX "conversations_last_message_id_idx" ON "conversations"("last_message_id");
