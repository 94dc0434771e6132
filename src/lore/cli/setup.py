"""`lore init`, `lore which [DIR]`, `lore doctor`: set up, and explain what lore sees."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lore.core.config import (
    STARTER_CONFIG,
    Config,
    claimed_twice,
    config_path,
    load_config,
    stale_paths,
    unreachable_spaces,
)
from lore.core.errors import LoreError
from lore.core.render import counted
from lore.core.workspace import find_moved
from lore.db import locate
from lore.service import doctor as database_doctor


def write_starter(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "x") as handle:  # never overwrite a config someone wrote
        handle.write(STARTER_CONFIG)


def run(command: str, directory: str | None) -> int:
    if command == "init":
        return init()
    if command == "which":
        return which(directory)
    return doctor()


def init() -> int:
    path = config_path(os.environ)
    if path.exists():
        print(f"A config already exists at {path}; leaving it as it is. `lore doctor` checks it.")
        return 0
    write_starter(path)
    print(f"Wrote {path} (default_space = personal). Add [[space]] entries for your projects.")
    return 0


def which(directory: str | None) -> int:
    """The space of a directory and why, and where it lives: this machine's database, or the server
    this machine uses (whose copy of the config decides there)."""
    from lore.cli.context import gateway

    with gateway() as gw:
        found = gw.which(directory or os.getcwd())
        where = gw.where
    print(found["space"])
    print(f"  why: {found['reason']} (rule: {found['rule']})")
    print(f"  workspace name: {found['workspace_name']}")
    others = [s for s in found["readable"] if s != found["space"]]
    if others:
        print(f"  also reads: {', '.join(others)}")
    if where == "this machine":
        print("  lives on: this machine's database")
    else:
        user = f" (user {found['user']})" if found.get("user") else ""
        print(f"  lives on: the server {where}{user}, resolved with the config pushed there")
    return 0


def doctor() -> int:
    """Each line: OK, WARN or FAIL, and for anything not OK, the fix. Exit 1 when anything failed.
    On a machine that uses a server, the server is checked instead of a local database (which is
    then never started nor created: lore.cli.doctor_client)."""
    from lore.cli import doctor_hooks

    lines: list[tuple[str, str]] = []
    server = _server(lines)
    if server is not None:
        _check_client(server, lines)
    else:
        config = _check_config(lines)
        if config is not None:
            _check_paths(config, lines)
            lines.extend(database_doctor.database(config, os.environ))
            if not locate.configured(os.environ, config.database_url):  # the embedded one
                _check_login_start(lines)
        _check_embedder(config, lines)
    _check_signal(lines)
    from lore import installers

    clients = installers.doctor(Path(os.getcwd()))  # every agent lore is installed into, checked
    _check_hook_log(lines, installed=clients != [installers.NOT_INSTALLED])
    doctor_hooks.check(lines)
    lines.extend((check.level, check.text) for check in clients)
    for level, text in lines:
        print(f"{level:<4} {text}")
    return 1 if any(level == "FAIL" for level, _ in lines) else 0


def _server(lines: list[tuple[str, str]]) -> Any:
    """The server this machine uses (lore.hooks.credentials), or None; an unusable login is a FAIL."""
    from lore.hooks import credentials

    try:
        return credentials.server(os.environ, timeout=10.0)
    except LoreError as exc:
        lines.append(("FAIL", f"login: {exc.message} → {exc.hint}"))
        return None


def _check_client(server: Any, lines: list[tuple[str, str]]) -> None:
    from lore.cli import doctor_client

    path = config_path(os.environ)
    config = None
    if path.exists():
        config = _check_config(lines)
    else:
        lines.append(("OK", f"no config file here ({path}): the config pushed to the server decides"))
    doctor_client.check(server, config, lines)
    if config is not None:
        _check_paths(config, lines)


def _check_config(lines: list[tuple[str, str]]) -> Config | None:
    path = config_path(os.environ)
    try:
        config = load_config()
    except LoreError as exc:
        lines.append(("FAIL", f"config {path}: {exc.message} → {exc.hint}"))
        return None
    lines.append(
        (
            "OK",
            f"config {path} ({counted(len(config.spaces), 'space')}, "
            f"default {config.default_space or 'none'})",
        )
    )
    return config


def _check_paths(config: Config, lines: list[tuple[str, str]]) -> None:
    for pattern, first, second in claimed_twice(config):
        lines.append(
            (
                "FAIL",
                f"spaces {first} and {second} both claim {pattern}: a session there is an error "
                f"→ keep it in one of them (or make one path more specific) in {config.path}",
            )
        )
    stale = stale_paths(config)
    home = Path(os.environ.get("HOME") or Path.home())
    for space_id, pattern in stale:
        space = next(s for s in config.spaces if s.id == space_id)
        moved = find_moved(pattern, home, remotes=space.remotes) if not pattern.endswith("*") else []
        where = (
            f' → it may have moved to {moved[0]}: in {config.path}, under [[space]] id = "{space_id}", '
            f'set paths = ["{moved[0]}"]'
            if moved
            else f" → update it in {config.path}, or add a `remotes` pattern that survives moves"
        )
        lines.append(
            ("WARN", f"space {space_id}: path {pattern} does not exist on disk (moved or renamed?){where}")
        )
    for space in config.spaces:
        if space.paths and all((space.id, p) in stale for p in space.paths):
            lines.append(("WARN", f"space {space.id}: every configured path is gone → fix its paths"))
    if not stale:
        lines.append(("OK", "every configured path exists"))
    for space_id in unreachable_spaces(config):
        lines.append(
            (
                "WARN",
                f"space {space_id} is unreachable (no path, remote, default or reads_from leads to it) "
                "→ give it paths or remotes, or remove it",
            )
        )


def _check_login_start(lines: list[tuple[str, str]]) -> None:
    from lore.installers import login

    path = login.installed(os.environ)
    if path is not None:
        lines.append(("OK", f"login start installed: {path} starts the database at each login"))
    else:
        lines.append(
            (
                "OK",
                "login start not installed: the first session after a reboot starts the database "
                "(optional: `lore service install` starts it at login)",
            )
        )


def _check_embedder(config: Config | None, lines: list[tuple[str, str]]) -> None:
    """The configured embedder makes a vector now, or the line says why search is keyword only."""
    import time

    from lore.core.config import EmbedderSettings
    from lore.embeddings import chosen_name, files
    from lore.embeddings.runner import Runner

    settings = config.embedder if config is not None else EmbedderSettings()
    try:
        name = chosen_name(os.environ, settings)
    except LoreError as exc:
        lines.append(("FAIL", f"embedder: {exc.message} → {exc.hint}"))
        return
    runner = Runner(os.environ, settings)
    try:
        if runner.model is None:
            lines.append(
                ("WARN", 'embedder `none`: search_notes is keyword only → [embedder] name = "local"')
            )
            return
        started = time.monotonic()
        vector = runner.batch(["lore doctor checks the embedder"], timeout=60)[0]
        took = (time.monotonic() - started) * 1000
        folder = files.FOLDERS.get(name)
        where = f", files in {files.model_dir(folder, os.environ)}" if folder else ""
        lines.append(
            (
                "OK",
                f"embedder {name}: {runner.model}, {len(vector)} dimensions{where} "
                f"(a vector in {took:,.0f} ms)",
            )
        )
    except LoreError as exc:
        lines.append(
            (
                "FAIL",
                f"embedder {name}: {exc.message} Search is keyword only until this is fixed → {exc.hint}",
            )
        )
    finally:
        runner.close()


def _check_hook_log(lines: list[tuple[str, str]], *, installed: bool) -> None:
    """When the session-start hook last worked, per client, and its latest failures. Installed into
    an agent and never run, it waits for a session to start: that is the next step, not installing."""
    from lore.core import hooklog as log

    entries = log.entries()
    if not entries:
        fix = (
            "start a session in an agent lore is installed into (listed below): its hook runs then"
            if installed
            else "install it: `lore install claude-code` (or see README)"
        )
        lines.append(("WARN", f"the session-start hook has never run ({log.path()}) → {fix}"))
        return
    for client, event in sorted({(e.client, e.event) for e in entries}):
        mine = [e for e in entries if e.client == client and e.event == event]
        name = client if event == "session-start" else f"{client} {event}"
        latest = mine[-1]  # each client's last result: a failure fixed since is history, not a FAIL
        if latest.ok:
            lines.append(("OK", f"hook {name}: last run {latest.at} succeeded ({latest.detail})"))
            continue
        last_ok = next((e for e in reversed(mine) if e.ok), None)
        since = f"; last succeeded {last_ok.at}" if last_ok else "; it has never succeeded"
        lines.append(("FAIL", f"hook {name}: last run {latest.at} failed: {latest.detail}{since}"))


def _check_signal(lines: list[tuple[str, str]]) -> None:
    from lore.core.workspace import is_unhelpful

    cwd = Path(os.getcwd())
    if is_unhelpful(cwd):
        lines.append(
            (
                "WARN",
                f"working directory is {cwd}: a session started here gave lore no project signal "
                "→ pass --workspace to `lore mcp`, or start the agent inside the project",
            )
        )
