-- A third kind of credential: browser sessions (CONTRACT §7). On its own, because a new enum
-- value cannot be used in the transaction that adds it.
ALTER TYPE "access_token_kind" ADD VALUE 'session';
