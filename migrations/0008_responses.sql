-- The Responses API on the conversation store (llm/responses): a response is a run
-- (its id `resp_…`), its output the run's assistant item, its input items appended
-- before it. What the existing tables could not hold:
--
-- - conversations of their own for `previous_response_id` chains: surface `response`
--   (conv_… ids never shown; `conversation` names a persisted chat's conv_… id);
-- - items beyond plain text: a `developer` message, a `tool` result (a
--   function_call_output), an assistant turn that called functions, image parts.
--   `payload` holds what text alone cannot: {parts?} (OpenAI chat content parts, the
--   text of which is also in `content`), {tool_calls?} (the calls an assistant item
--   made, OpenAI's chat shape), {tool_call_id?} (a tool item's call).
ALTER TABLE conversations DROP CONSTRAINT conversations_surface_check;
ALTER TABLE conversations ADD CONSTRAINT conversations_surface_check CHECK (surface IN ('chat', 'thread', 'response'));

ALTER TABLE conversation_items DROP CONSTRAINT conversation_items_role_check;
ALTER TABLE conversation_items ADD CONSTRAINT conversation_items_role_check
  CHECK (role IN ('system', 'developer', 'user', 'assistant', 'tool'));
ALTER TABLE conversation_items ADD COLUMN payload jsonb;
