-- The space each MCP session of a stateless `lore serve` was last given (`--stateless`, behind a
-- load balancer without affinity: any replica may answer any request of a session). A replica that
-- finds a session's space changed since its last call says so in the tool result, whichever replica
-- served that last call. `key` is `<user>|<session id>` (the id lore.core.session_ids hands out).
-- Rows unseen for 30 days are deleted as new sessions come (lore.store.mcp_sessions.expire).
CREATE TABLE mcp_sessions (
    key      text        PRIMARY KEY CHECK (length(key) <= 1200),
    space    text        NOT NULL CHECK (length(space) <= 200),
    previous text,                  -- the space before the last change of `space` (the swap's answer)
    seen_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_sessions_seen_at ON mcp_sessions (seen_at);
