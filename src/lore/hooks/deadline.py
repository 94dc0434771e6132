"""A hook's soft deadline: how long it may take before it gives up and says so (lore.hooks.guard), the
same for the fast path (lore.hooks.quick). Standard library only."""

from __future__ import annotations

from collections.abc import Mapping

# Claude Code kills a hook at its timeout (5 s in our hooks.json); we give up well before.
DEFAULT_DEADLINE = 0.9
# LORE_HOOK_DEADLINE moves it, within these bounds, for a slow machine or a distant database.
DEADLINE_RANGE = (0.2, 3.0)


def deadline(env: Mapping[str, str]) -> float:
    """The soft deadline in seconds: LORE_HOOK_DEADLINE if it is a number (held inside
    DEADLINE_RANGE), else 0.9. A hook never fails on its own settings: anything else is 0.9."""
    raw = env.get("LORE_HOOK_DEADLINE", "").strip()
    try:
        value = float(raw) if raw else DEFAULT_DEADLINE
    except ValueError:
        return DEFAULT_DEADLINE
    if value != value:  # NaN
        return DEFAULT_DEADLINE
    return min(max(value, DEADLINE_RANGE[0]), DEADLINE_RANGE[1])
