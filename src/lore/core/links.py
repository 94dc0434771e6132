"""Teammates' spaces (docs/design.md, Teammates): on a server with sign-in, `reads_from` and
`accepts_from` may name another user's space (`bob/work`). Such an entry takes effect only while that
user's config names this space back under the same key, so both consent:

- alice's `work` accepts_from `bob/work` and bob's `work` accepts_from `alice/work`: each may file
  tasks and send messages into the other's inbox (they arrive "from alice/work");
- alice's `work` reads_from `bob/work` and bob's `work` reads_from `alice/work`: each reads the other's.

Anything else of either user stays invisible: an entry one side alone wrote is dropped (a send to that
space then meets the same "no space" as a space that does not exist), reading is not transitive, and
the other user's spaces are never resolved to, listed or exported. Revoking is pushing a config
without the entry: the link is gone on the next request (lore.store.accounts checks both configs'
versions). Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from lore.core.config import Config, SpaceConfig, foreign

KEYS = ("reads_from", "accepts_from")


def owner(ref: str) -> str:
    return ref.split("/", 1)[0]


def named_users(config: Config, user: str) -> tuple[str, ...]:
    """The other users whose spaces `user`'s (scoped) config names, sorted."""
    found = {
        owner(ref)
        for space in config.spaces
        for key in KEYS
        for ref in getattr(space, key)
        if foreign(ref) and owner(ref) != user
    }
    return tuple(sorted(found))


def consented(
    config: Config, user: str, space: SpaceConfig, key: str, ref: str, others: Mapping[str, Config]
) -> bool:
    """Whether `space` of `user` naming `ref` under `key` is named back by the other side."""
    if owner(ref) == user:
        return config.space(ref) is not None
    theirs = others.get(owner(ref))
    other = theirs.space(ref) if theirs is not None else None
    return other is not None and space.id in getattr(other, key)


def effective(config: Config, user: str, others: Mapping[str, Config]) -> Config:
    """`user`'s scoped config as it acts: each entry naming another user's space kept only when that
    user's config (in `others`, scoped) names it back; the linked spaces as `peers`, each accepting
    from the spaces of `user` it is linked to under `accepts_from`."""
    spaces = []
    accepts: dict[str, list[str]] = {}
    for space in config.spaces:
        kept = {}
        for key in KEYS:
            values = tuple(
                ref
                for ref in getattr(space, key)
                if not foreign(ref) or consented(config, user, space, key, ref, others)
            )
            kept[key] = values
            for ref in values:
                if foreign(ref) and owner(ref) != user:
                    accepts.setdefault(ref, [])
                    if key == "accepts_from":
                        accepts[ref].append(space.id)
        spaces.append(replace(space, reads_from=kept["reads_from"], accepts_from=kept["accepts_from"]))
    peers = tuple(SpaceConfig(ref, accepts_from=tuple(accepts[ref])) for ref in sorted(accepts))
    return replace(config, spaces=tuple(spaces), peers=peers)


def report(config: Config, user: str, others: Mapping[str, Config]) -> list[dict[str, object]]:
    """Each entry of `user`'s config naming another user's space, and whether it is linked now (what
    `lore config push` tells the user: nothing about the other user beyond whether they named it)."""
    out: list[dict[str, object]] = []
    for space in config.spaces:
        for key in KEYS:
            for ref in getattr(space, key):
                if foreign(ref) and owner(ref) != user:
                    linked = consented(config, user, space, key, ref, others)
                    out.append({"space": space.id, "key": key, "names": ref, "linked": linked})
    return out
