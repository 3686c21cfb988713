-- Full-text search plans from the estimated share of messages holding the words. With the
-- default statistics PostgreSQL tracks the thousand or so commonest words and guesses every
-- other word at about half the rarest of those: a word in one message of 20 000 is then taken
-- for one in 250, and the planner walks the channel's newest messages looking for it, reading
-- the whole channel (seconds at millions of messages) instead of the few rows the GIN index
-- holds. Ten times the statistics keep ten thousand words and estimates close enough for the
-- index to be chosen; ANALYZE of messages samples ten times as many rows in exchange.
ALTER TABLE "messages" ALTER COLUMN "search_vector" SET STATISTICS 1000;
