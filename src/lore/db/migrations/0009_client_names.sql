-- Every client name an agent gave in MCP's `initialize` (clientInfo.name), and the lore client id
-- stored for it as `source` (lore.clients.canonical): the audit of what `source` was made from.
-- One row per distinct name, not per write: rows carry the canonical id only.
CREATE TABLE client_names (
    name        text        PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 200),
    client      text        NOT NULL,
    version     text,
    first_seen  timestamptz NOT NULL DEFAULT now(),
    last_seen   timestamptz NOT NULL DEFAULT now()
);
