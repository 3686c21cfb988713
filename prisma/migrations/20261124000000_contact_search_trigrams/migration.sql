-- Contact search matches any part of a name, an email or a phone number
-- (ILIKE '%term%'). Trigram indexes find those rows without reading every contact
-- of the workspace. pg_trgm ships with PostgreSQL (contrib) and is a trusted
-- extension: the database owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- IF NOT EXISTS: on a large database an operator may build these beforehand with
-- CREATE INDEX CONCURRENTLY under the same names, so that writes are not held up.
CREATE INDEX IF NOT EXISTS "contacts_name_trgm_idx" ON "contacts" USING GIN ("name" gin_trgm_ops);
CREATE INDEX IF NOT EXISTS "contacts_email_trgm_idx" ON "contacts" USING GIN ("email" gin_trgm_ops);
CREATE INDEX IF NOT EXISTS "contact_phones_number_trgm_idx" ON "contact_phones" USING GIN ("number" gin_trgm_ops);
