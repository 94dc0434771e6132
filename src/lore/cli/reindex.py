"""`lore reindex [--all]`: give the notes written in a session their context (`--all`: again), then
embed, in bulk, every current note without a vector of the configured model (after changing
`[embedder]`, or when no server was running to embed in the background), and of the second model
when one is installed. Progress goes to stderr; the summary to stdout."""

from __future__ import annotations

import os
import sys
import time

from lore import embeddings
from lore.cli.context import runtime
from lore.core.config import load_config
from lore.core.errors import LoreError
from lore.core.render import counted
from lore.embeddings.runner import Runner
from lore.service import search


def bar(done: int, total: int, started: float, width: int = 30) -> str:
    share = done / total if total else 1.0
    filled = int(width * share)
    rate = done / max(time.monotonic() - started, 1e-6)
    left = (total - done) / rate if rate > 0 else 0.0
    shown = f"[{'#' * filled}{'.' * (width - filled)}]"
    return f"{shown} {done:,}/{total:,} notes  {rate:,.0f}/s  ~{left:,.0f} s left"


def run(*, everything: bool = False) -> int:
    from lore.cli.data import ON_THE_SERVER
    from lore.cli.gateway import local_only

    local_only("reindex", ON_THE_SERVER)
    try:
        config = load_config()
        settings = config.embedder
    except LoreError:  # no config: embed with the defaults into the default database
        from lore.core.config import EmbedderSettings

        settings = EmbedderSettings()
    runner = Runner(os.environ, settings)
    if runner.model is None:
        with runtime(config_optional=True) as rt:  # the notes' contexts still count for keywords
            search.reindex(rt, runner, everything=everything)
        print("The embedder is `none`: search is keyword only; nothing to embed.")
        return 0
    second = Runner(os.environ, settings, choose=embeddings.second)
    started = time.monotonic()
    live = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        line = bar(done, total, started)
        if live:
            print(f"\r{line}", end="", file=sys.stderr, flush=True)
        elif done == total or done % 1024 < 64:
            print(line, file=sys.stderr, flush=True)

    try:
        with runtime(config_optional=True) as rt:
            count = search.reindex(rt, runner, everything=everything, progress=progress)
            others = search.reindex_second(rt, second, everything=everything)
    finally:
        runner.close()
        second.close()
    if live:
        print(file=sys.stderr)
    took = time.monotonic() - started
    also = f" (and {counted(others, 'note')} with {second.model})" if others else ""
    print(f"Embedded {counted(count, 'note')} with {runner.model}{also} in {took:.1f} s.")
    return 0
