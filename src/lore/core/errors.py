"""Every error a person or a model sees: what happened, and what to do next.

LoreError                 base; `message` + `hint` (the next action)
├── ConfigError           the config file is missing, unreadable or invalid
├── SpaceError            no space could be chosen for a workspace
│   └── AmbiguousSpace    two spaces match a workspace equally well
├── DatabaseError         PostgreSQL cannot be reached or started
│   └── ConnectionLost    a LISTEN connection dropped mid-query (lore.listen reconnects by itself)
├── EmbedderError         the embedder made no vectors (down, misconfigured, timed out); writes never see it
├── HookFailure           a hook could not make its text: logged in the hook log, never shown to the agent
│   ├── StoreError        the hook's one query (psql) failed or did not answer in time
│   ├── RemoteError       the hosted server refused, failed or did not answer
│   └── DeadlinePassed    the hook's soft deadline passed
├── InvalidInput          a tool or command argument is wrong; nothing was written
│   └── TooLarge          a request body over its cap, refused before it was read whole
├── NotFound              an id that this session cannot see (other spaces look the same)
├── Conflict              a concurrent writer changed the row first; retry
└── Refused               the request is understood but not allowed (e.g. a `space` argument)
"""

from __future__ import annotations


class LoreError(Exception):
    """Base error: `message` says what happened, `hint` says what to do next."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n{self.hint}" if self.hint else self.message


class ConfigError(LoreError):
    pass


class SpaceError(LoreError):
    pass


class AmbiguousSpace(SpaceError):
    pass


class DatabaseError(LoreError):
    pass


class InvalidInput(LoreError):
    pass


class TooLarge(InvalidInput):
    pass


class NotFound(LoreError):
    pass


class Conflict(LoreError):
    pass


class Refused(LoreError):
    pass


class ConnectionLost(DatabaseError):
    pass


class EmbedderError(LoreError):
    pass


class HookFailure(LoreError):
    pass


class StoreError(HookFailure):
    pass


class RemoteError(HookFailure):
    pass


class DeadlinePassed(HookFailure):
    pass


# The HTTP status lore's /api answers each error with (lore.http.guard), the first kind that matches;
# the command line on a client reads it back (lore.cli.gateway.remote). Anything else: 400.
HTTP_STATUS: tuple[tuple[type[LoreError], int], ...] = (
    (TooLarge, 413),
    (InvalidInput, 400),
    (NotFound, 404),
    (Refused, 403),
    (Conflict, 409),
    (SpaceError, 422),
    (ConfigError, 422),
    (DatabaseError, 503),
)
