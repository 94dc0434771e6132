"""Client machines for the tests of one server and many machines: each machine has its own HOME (where
`lore login` keeps its login), its own data dir (where its embedded database would be: it must stay
empty) and its own config file, and runs `lore` in the test's process (support.cli) or as a program."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from support import cli

LORE = str(Path(sys.executable).parent / "lore")


@dataclass(frozen=True)
class Machine:
    name: str
    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "LORE_DATA_DIR": str(self.data),
            "LORE_CONFIG": str(self.home / ".config" / "lore" / "config.toml"),
            "LORE_HOOK_DEADLINE": "3",
            **({"LORE_ROOT_BASE": os.environ["LORE_ROOT_BASE"]} if os.environ.get("LORE_ROOT_BASE") else {}),
        }

    @property
    def login_file(self) -> Path:
        return self.home / ".config" / "lore" / "login.json"

    def lore(
        self, *args: str, cwd: Path | None = None, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`lore ARGS` in the test's process, as this machine."""
        return cli.run(*args, env=self.env, cwd=cwd or self.home, stdin=stdin)

    def ok(self, *args: str, cwd: Path | None = None, stdin: str | None = None) -> str:
        done = self.lore(*args, cwd=cwd, stdin=stdin)
        assert done.returncode == 0, f"lore {' '.join(args)}: {done.stdout}\n{done.stderr}"
        return done.stdout

    def program(
        self, *args: str, stdin: str = "", env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """The real `lore` program, as this machine."""
        return subprocess.run(
            [LORE, *args],
            env={**self.env, **(env or {})},
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def hook(self, event: str, payload: dict[str, object], client: str = "claude-code") -> str:
        done = self.program("hook", event, "--client", client, stdin=json.dumps(payload))
        assert done.returncode == 0, done.stderr
        return done.stdout

    def login(self, url: str, token: str) -> None:
        self.ok("login", url, "--with-token", stdin=token + "\n")

    def untouched(self) -> bool:
        """No local database was made here: nothing under the data dir but what hooks keep."""
        from lore.db import embedded

        cluster = embedded.pgdata_dir(self.env)  # as root it may live under LORE_ROOT_BASE
        return not cluster.exists() and not (self.data / "pg").exists()


def machine(base: Path, name: str) -> Machine:
    found = Machine(name, base / name)
    found.home.mkdir(parents=True)
    return found
