-- CreateEnum
CREATE TYPE "channel_type" AS ENUM ('whatsapp', 'sms', 'email', 'webchat');
CREATE TYPE "channel_status" AS ENUM ('active', 'inactive');
CREATE TYPE "access_token_kind" AS ENUM ('channel_key', 'connection');
CREATE TYPE "template_status" AS ENUM ('approved', 'pending', 'rejected');
CREATE TYPE "conversation_status" AS ENUM ('open', 'closed');
CREATE TYPE "conversation_state_change_type" AS ENUM ('opened', 'closed', 'reopened');
CREATE TYPE "actor_type" AS ENUM ('channel', 'user', 'external');
CREATE TYPE "message_direction" AS ENUM ('outbound', 'inbound');
CREATE TYPE "message_type" AS ENUM ('text', 'template');
CREATE TYPE "message_status" AS ENUM ('queued', 'sent', 'delivered', 'failed');
CREATE TYPE "delivery_status" AS ENUM ('pending', 'succeeded', 'failed');

-- CreateTable
CREATE TABLE "workspaces" (
    "id" UUID NOT NULL,
    "hostname" VARCHAR(253) NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "workspaces_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "users" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "email" VARCHAR(255) NOT NULL,
    "email_normalized" VARCHAR(255) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "channels" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "type" "channel_type" NOT NULL DEFAULT 'whatsapp',
    "status" "channel_status" NOT NULL DEFAULT 'active',
    "webhook_url" VARCHAR(2048),
    "webhook_secret" VARCHAR(255),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "channels_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "connections" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "connections_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "connection_channels" (
    "connection_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "connection_channels_pkey" PRIMARY KEY ("connection_id", "channel_id")
);

CREATE TABLE "access_tokens" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "kind" "access_token_kind" NOT NULL,
    "channel_id" UUID,
    "connection_id" UUID,
    "token_hash" CHAR(64) NOT NULL,
    "prefix" VARCHAR(16) NOT NULL,
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "last_used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "access_tokens_pkey" PRIMARY KEY ("id"),
    -- A channel key names exactly its channel; a connection token exactly its connection.
    CONSTRAINT "access_tokens_owner_check" CHECK (
        ("kind" = 'channel_key' AND "channel_id" IS NOT NULL AND "connection_id" IS NULL) OR
        ("kind" = 'connection' AND "connection_id" IS NOT NULL AND "channel_id" IS NULL)
    )
);

CREATE TABLE "contacts" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "email" VARCHAR(255),
    "email_normalized" VARCHAR(255),
    "phone" VARCHAR(64),
    "is_group" BOOLEAN NOT NULL DEFAULT false,
    "status" VARCHAR(32) NOT NULL DEFAULT 'active',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "contacts_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "contact_phones" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "contact_id" UUID NOT NULL,
    "number" VARCHAR(64) NOT NULL,
    "raw" VARCHAR(64),
    "contact_deleted" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "contact_phones_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "contact_channels" (
    "contact_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "contact_channels_pkey" PRIMARY KEY ("contact_id", "channel_id")
);

CREATE TABLE "contact_assignments" (
    "contact_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "contact_assignments_pkey" PRIMARY KEY ("contact_id", "user_id")
);

CREATE TABLE "channel_templates" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "language" VARCHAR(16) NOT NULL,
    "category" VARCHAR(32) NOT NULL DEFAULT 'utility',
    "status" "template_status" NOT NULL DEFAULT 'approved',
    "body" TEXT NOT NULL,
    "parameter_count" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "channel_templates_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "conversations" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "contact_id" UUID NOT NULL,
    "status" "conversation_status" NOT NULL DEFAULT 'open',
    "last_message_at" TIMESTAMPTZ(3),
    "closed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "conversations_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "conversation_state_changes" (
    "id" UUID NOT NULL,
    "conversation_id" UUID NOT NULL,
    "type" "conversation_state_change_type" NOT NULL,
    "actor_type" "actor_type" NOT NULL,
    "actor_channel_id" UUID,
    "actor_user_id" UUID,
    "actor_name" VARCHAR(255),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "conversation_state_changes_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "messages" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "conversation_id" UUID NOT NULL,
    "contact_id" UUID NOT NULL,
    "direction" "message_direction" NOT NULL DEFAULT 'outbound',
    "type" "message_type" NOT NULL DEFAULT 'text',
    "body" TEXT NOT NULL,
    "is_encrypted" BOOLEAN NOT NULL DEFAULT false,
    "silent" BOOLEAN NOT NULL DEFAULT false,
    "template_id" UUID,
    "template_parameters" JSONB,
    "media_urls" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "sender_type" "actor_type" NOT NULL,
    "sender_channel_id" UUID,
    "sender_user_id" UUID,
    "sender_name" VARCHAR(255),
    "status" "message_status" NOT NULL DEFAULT 'queued',
    "delivery_attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" VARCHAR(1024),
    "sent_at" TIMESTAMPTZ(3),
    "failed_at" TIMESTAMPTZ(3),
    -- Encrypted bodies are ciphertext: they get no document, so search cannot match them.
    "search_vector" tsvector GENERATED ALWAYS AS (
        CASE WHEN "is_encrypted" THEN NULL ELSE to_tsvector('simple'::regconfig, "body") END
    ) STORED,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "messages_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "deliveries" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "message_id" UUID NOT NULL,
    "status" "delivery_status" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER NOT NULL DEFAULT 5,
    "run_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "locked_by" VARCHAR(128),
    "locked_until" TIMESTAMPTZ(3),
    "last_error" VARCHAR(1024),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "deliveries_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "webhook_endpoints" (
    "id" UUID NOT NULL,
    "workspace_id" UUID NOT NULL,
    "url" VARCHAR(2048) NOT NULL,
    "events" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "secret" VARCHAR(255) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "workspaces_hostname_key" ON "workspaces"("hostname");
CREATE UNIQUE INDEX "users_workspace_id_email_normalized_key" ON "users"("workspace_id", "email_normalized");
CREATE INDEX "channels_workspace_id_created_at_id_idx" ON "channels"("workspace_id", "created_at" DESC, "id" DESC);
CREATE INDEX "connection_channels_channel_id_idx" ON "connection_channels"("channel_id");
CREATE UNIQUE INDEX "access_tokens_token_hash_key" ON "access_tokens"("token_hash");
CREATE INDEX "access_tokens_channel_id_idx" ON "access_tokens"("channel_id");
CREATE INDEX "access_tokens_connection_id_idx" ON "access_tokens"("connection_id");
CREATE UNIQUE INDEX "contacts_workspace_email_live_key" ON "contacts"("workspace_id", "email_normalized") WHERE deleted_at IS NULL;
CREATE INDEX "contacts_workspace_page_idx" ON "contacts"("workspace_id", "created_at" DESC, "id" DESC) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX "contact_phones_workspace_number_live_key" ON "contact_phones"("workspace_id", "number") WHERE NOT contact_deleted;
CREATE INDEX "contact_phones_contact_id_idx" ON "contact_phones"("contact_id");
CREATE INDEX "contact_channels_channel_id_idx" ON "contact_channels"("channel_id");
CREATE INDEX "contact_assignments_user_id_idx" ON "contact_assignments"("user_id");
CREATE UNIQUE INDEX "channel_templates_channel_id_name_language_key" ON "channel_templates"("channel_id", "name", "language");
CREATE INDEX "channel_templates_channel_id_created_at_id_idx" ON "channel_templates"("channel_id", "created_at" DESC, "id" DESC);
CREATE UNIQUE INDEX "conversations_one_open_key" ON "conversations"("channel_id", "contact_id") WHERE status = 'open';
CREATE INDEX "conversations_channel_id_created_at_id_idx" ON "conversations"("channel_id", "created_at" DESC, "id" DESC);
CREATE INDEX "conversations_contact_id_channel_id_created_at_idx" ON "conversations"("contact_id", "channel_id", "created_at" DESC);
CREATE INDEX "conversation_state_changes_conversation_id_created_at_idx" ON "conversation_state_changes"("conversation_id", "created_at");
CREATE INDEX "messages_channel_id_created_at_id_idx" ON "messages"("channel_id", "created_at" DESC, "id" DESC);
CREATE INDEX "messages_conversation_id_created_at_id_idx" ON "messages"("conversation_id", "created_at" DESC, "id" DESC);
CREATE INDEX "messages_contact_id_created_at_id_idx" ON "messages"("contact_id", "created_at" DESC, "id" DESC);
CREATE INDEX "messages_search_vector_idx" ON "messages" USING GIN ("search_vector");
CREATE INDEX "deliveries_due_idx" ON "deliveries"("run_at") WHERE status = 'pending';
CREATE INDEX "deliveries_message_id_idx" ON "deliveries"("message_id");
CREATE INDEX "webhook_endpoints_workspace_id_idx" ON "webhook_endpoints"("workspace_id");

-- AddForeignKey
ALTER TABLE "users" ADD CONSTRAINT "users_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "channels" ADD CONSTRAINT "channels_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "connections" ADD CONSTRAINT "connections_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "connection_channels" ADD CONSTRAINT "connection_channels_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connections"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "connection_channels" ADD CONSTRAINT "connection_channels_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "access_tokens" ADD CONSTRAINT "access_tokens_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connections"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "contact_phones" ADD CONSTRAINT "contact_phones_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "contact_phones" ADD CONSTRAINT "contact_phones_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "contact_channels" ADD CONSTRAINT "contact_channels_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "contact_channels" ADD CONSTRAINT "contact_channels_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "contact_assignments" ADD CONSTRAINT "contact_assignments_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "contact_assignments" ADD CONSTRAINT "contact_assignments_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "channel_templates" ADD CONSTRAINT "channel_templates_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "channel_templates" ADD CONSTRAINT "channel_templates_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "conversation_state_changes" ADD CONSTRAINT "conversation_state_changes_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "conversation_state_changes" ADD CONSTRAINT "conversation_state_changes_actor_user_id_fkey" FOREIGN KEY ("actor_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "messages" ADD CONSTRAINT "messages_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "messages" ADD CONSTRAINT "messages_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "messages" ADD CONSTRAINT "messages_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "messages" ADD CONSTRAINT "messages_contact_id_fkey" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "messages" ADD CONSTRAINT "messages_template_id_fkey" FOREIGN KEY ("template_id") REFERENCES "channel_templates"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "messages" ADD CONSTRAINT "messages_sender_user_id_fkey" FOREIGN KEY ("sender_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "messages"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;
