"""Every tool, one module per family, listed here in the order tools/list shows them: the six core
tools first (their names are fixed), then the rest. A new tool goes into its family's module (or a
new one) and into TOOLS."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lore.mcp.tools import memory, search, work

TOOLS: tuple[Callable[..., Any], ...] = (
    memory.remember_fact,
    memory.remember_note,
    memory.recall_facts,
    search.search_notes,
    memory.revise_fact,
    memory.forget,
    search.link_notes,
    search.mark_irrelevant,
    work.file_task,
    work.update_task,
    work.send_message,
    work.read_messages,
)
