"""The agent events, one use case each (docs/design.md, Agent events): a session starts
(`session_start`), a prompt is about to be sent (`prompt`: the inbox since the last one), a session
ends (`session_end`: the handoff), and the record of every outcome (`records`).

Every caller reaches them the same way: the local hooks through psql (lore.db.psql.PsqlPort, no
driver), `/api`, the CLI and a spool replayed through psycopg (lore.store.port.ConnPort). The use
cases talk to the database only through `Port.call` of the SQL functions named in `port`, so both
kinds of connection run the same statements. Driver-free: the hooks import this package (the import
contract `events-are-driver-free` says so).
"""
