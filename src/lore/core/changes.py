"""What a change statement says went away (`Tests now need xvfb instead of PostgreSQL`, `CI moved
from Buildkite to CircleCI`, `now X (was Y)`, `no longer Y`, `Redis was dropped`): the words of the
value that went away, and what it says is true now, for lore.core.similarity.Text (docs/design.md,
Duplicates and conflicts). Pure: regular expressions over the text and its words' positions.
"""

from __future__ import annotations

import re

# Where a change statement names the value that went away: `from X to`, `instead of X`, `, not X`,
# `; X was dropped` (the span of X). Read only in a text with a change word (CUES).
_V = r"(?:[^.;,]|\.(?=[\w/]))"  # a value's characters: a dot only inside one (`fly.io`, `./x.sh`)
_GONE = re.compile(
    rf"\bfrom\s+(?P<a>{_V}+?)\s+to\b"
    rf"|\binstead\s+of\s+(?P<b>{_V}+)"
    rf"|,\s*not\s+(?P<c>{_V}+)"
    rf"|(?:^|[;.]\s+|;)(?P<d>{_V}+?)\s+(?:was|were|is|are|has\s+been|have\s+been)\s+"
    r"(?:dropped|replaced|deprecated|removed)\b"
    r"|\(\s*(?:was|were|previously|formerly|before|not)\s*:?\s+(?P<e>[^()]+?)\s*\)"
    r"|\bno\s+longer\s+(?:(?:uses?|using|runs?\s+on|runs?\s+with|supports?|needs?|requires?|depends\s+on"
    r"|deploys?\s+to|goes\s+to|has|is|are|with|on|in)\s+)?"
    rf"(?P<f>{_V}+)",
    re.IGNORECASE,
)
# A change that names only where it went (`The dev server moved to port 3000`): every word is new.
_ARRIVED = re.compile(r"\b(?:moved|switched|migrated|changed)\s+to\b", re.IGNORECASE)


def read(text: str, placed: list[tuple[str, int]]) -> tuple[frozenset[str] | None, frozenset[str]]:
    """What a change statement says is true now (its words less those of the value it says went
    away; all of them when it names only where something went; None: lore cannot read it), and the
    words of the value that went away. `(was Y)` and `no longer Y` name what went away without
    saying what replaced it well enough to compare: they give only the second."""
    found = [(name, m.span(name)) for m in _GONE.finditer(text) for name in "abcdef" if m.group(name)]
    spans = [span for _, span in found]
    gone = {w for w, at in placed if any(start <= at < end for start, end in spans)}
    kept = {w for w, at in placed if not any(start <= at < end for start, end in spans)}
    went = frozenset(gone - kept)
    if any(name in "abcd" for name, _ in found):
        return (frozenset(kept) if kept and went else None), went
    if _ARRIVED.search(text):
        return frozenset(w for w, _ in placed), went
    return None, went
