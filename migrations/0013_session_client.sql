-- The Account page's "active sessions": which browser and address each session (a
-- refresh-token family) signed in from. Recorded on the family's first token at
-- sign-in and copied to every token a refresh rotates in, so the newest token of a
-- family describes it. Older rows keep nulls: the session is listed without them.
ALTER TABLE refresh_tokens ADD COLUMN user_agent text;
ALTER TABLE refresh_tokens ADD COLUMN address text;
-- A user's sessions are listed and ended by user: refresh_tokens_user_idx (0001) serves both.
