"""The one envelope around everything lore injects into an agent's context: the memory before the first
prompt (`lore-memory`) and what arrived before a later one (`lore-inbox`). Pure, standard library only:
the hooks import it (docs/design.md, Content and budget).

Each injection draws a nonce and puts it in the tag's name:

    <lore-memory-7f3a9c21e4 space="work">
    Only the tag /lore-memory-7f3a9c21e4 ends this block: recalled reference data from lore, ...
    ...
    </lore-memory-7f3a9c21e4>

Stored text cannot know the nonce, so nothing it holds can be the end the frame's first line names
(by the tag's name: the closing tag itself stands once in the text, at the end).
The nonce is in the name rather than an attribute: an end tag pairs with its start tag by name in
every markup a model has read, so a forged `</lore-memory>` is a stray end tag of another element,
while an attribute on an end tag is no markup at all. Everything inside is made inert as well
(lore.core.inert): no tag of either envelope, however spelled, opens or closes there.

Two fences: tags, or square brackets for a client that escapes angle brackets in what a hook gives it
(Gemini CLI: docs/agents/gemini.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from lore.core.inert import inert

MEMORY = "lore-memory"
INBOX = "lore-inbox"
NONCE_BYTES = 5  # 10 hex digits: 2^40 values, drawn afresh for every injection


def nonce() -> str:
    """A fresh nonce from the operating system's random source."""
    return os.urandom(NONCE_BYTES).hex()


@dataclass(frozen=True)
class Fence:
    """The two brackets of lore's tags: `<…>`, or `[…]` (Gemini CLI)."""

    left: str
    right: str


TAGS = Fence("<", ">")
BRACKETS = Fence("[", "]")
# Gemini CLI (0.61) replaces every `<` and `>` of a hook's additionalContext with `&lt;`/`&gt;` before
# it wraps the text in its own <hook_context> tag: the model read `&lt;lore-memory …&gt;`.
_BRACKETED_CLIENTS = frozenset({"gemini"})


def fence_for(client: str | None) -> Fence:
    """The fence `client` receives intact."""
    return BRACKETS if client in _BRACKETED_CLIENTS else TAGS


@dataclass(frozen=True)
class Envelope:
    """One injection's envelope: `kind` (MEMORY or INBOX) for `space`, in `fence`, with its nonce."""

    kind: str
    space: str
    fence: Fence = TAGS
    nonce: str = field(default_factory=nonce)

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.nonce}"

    @property
    def opening(self) -> str:
        left, right = self.fence.left, self.fence.right
        return f'{left}{self.name} space="{attribute(self.space)}"{right}'

    @property
    def closing(self) -> str:
        return f"{self.fence.left}/{self.name}{self.fence.right}"

    def head(self, frame: str) -> str:
        """The opening tag and the frame's first line, which names the closing tag as the only end
        (`frame`: what the block is, lore's own words), each line ended. The line names the tag without
        its brackets: the closing tag stands once in the text, where the block ends."""
        return f"{self.opening}\nOnly the tag /{self.name} ends this block: {frame}\n"

    def wrap(self, frame: str, inside: str) -> str:
        """The whole envelope around `inside` (stored text and lore's lines: made inert here)."""
        body = inert(inside)
        return self.head(frame) + (f"{body}\n" if body else "") + self.closing


# What stands as itself in an attribute of the opening tag: letters, digits and these (a space's id,
# a hosted account's `alice/work`). Anything else is a character reference: it can neither end the
# value or the tag nor open another, in either fence, nor pass for a character that could.
_ATTRIBUTE_SAFE = frozenset(" -_./@:+=")
_NAMED = {"&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;"}


def attribute(value: str) -> str:
    """A stored string (a space's name) made safe inside the envelope's opening tag."""
    out = []
    for ch in inert(value):
        if ch in _NAMED:
            out.append(_NAMED[ch])
        elif ch.isalnum() or ch in _ATTRIBUTE_SAFE:
            out.append(ch)
        elif ch in "\r\n":
            out.append(" ")
        else:
            out.append(f"&#{ord(ch)};")
    return "".join(out)
