-- The name an agent gave in MCP's `initialize` (clientInfo.name), kept beside `source` (lore's id for
-- that client, lore.clients.canonical) on every row an MCP session writes: the audit of what `source`
-- was made from, per row. NULL: written by the CLI, the web UI, a hook or an earlier version.
ALTER TABLE facts ADD COLUMN client_name text CHECK (length(client_name) <= 200);
ALTER TABLE notes ADD COLUMN client_name text CHECK (length(client_name) <= 200);
ALTER TABLE messages ADD COLUMN client_name text CHECK (length(client_name) <= 200);
ALTER TABLE tasks ADD COLUMN from_client_name text CHECK (length(from_client_name) <= 200);
ALTER TABLE task_events ADD COLUMN client_name text CHECK (length(client_name) <= 200);
ALTER TABLE forget_log ADD COLUMN client_name text CHECK (length(client_name) <= 200);
