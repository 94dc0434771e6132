"""Data in and out: `lore export`, `lore import`, `lore import-markdown`, `lore import-instructions`,
`lore purge`.

Export and import work on the whole database (or one space with `--space`), not on the current
directory's space: they move memory between databases. `import-markdown` writes into the current
directory's (or `--workspace`'s) space, like every other write. `purge` finds an id in any space.

On a machine that uses a server (lore.cli.gateway), `export` asks the server for the user's own
spaces; the others act on a database itself and say so (an operator runs them where it is).
"""

from __future__ import annotations

import getpass
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from lore.cli.context import gateway, runtime
from lore.cli.gateway import local_only
from lore.core.errors import InvalidInput, Refused
from lore.service import data

ON_THE_SERVER = (
    "Run it on the server's machine, against its database (LORE_DATABASE_URL), as its operator; "
    "`lore logout` (or unset LORE_URL) to use this machine's own database."
)


def export(space: str | None, output: str | None) -> int:
    with gateway() as gw:
        lines = gw.export(space)
        if output in (None, "-"):
            for line in lines:
                sys.stdout.write(line + "\n")
            sys.stdout.flush()
            return 0
        assert output is not None
        target = Path(output)
        count = _write_private(target, lines)
        print(f"Exported {count - 2:,} rows to {target}.", file=sys.stderr)
    return 0


def _write_private(target: Path, lines: Iterable[str]) -> int:
    """Write an export as `target`, readable by its owner only (it holds every space): a temporary
    file made by mkstemp in the same directory (O_CREAT | O_EXCL, mode 0600, a fresh random name, so a
    link planted under any name is never opened), fsynced, then renamed over `target` (a link there
    is replaced, never written through), and the directory fsynced. Never a half-written export
    under the real name. Returns the number of lines."""
    try:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    except OSError as exc:
        raise InvalidInput(
            f"Cannot write {target}: {exc.strerror}.", "Pass a file in a directory you can write."
        ) from None
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for line in lines:
                out.write(line + "\n")
                count += 1
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, target)
    except OSError as exc:  # a full disk, `target` a directory, ...
        Path(temp).unlink(missing_ok=True)
        raise InvalidInput(f"Cannot write {target}: {exc.strerror}.", "Nothing was written there.") from None
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    directory = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return count


def load(file: str) -> int:
    local_only("import", ON_THE_SERVER)
    path = Path(file)
    try:
        handle = sys.stdin if file == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise InvalidInput(
            f"Cannot read {path}: {exc.strerror}.", "Pass the file written by `lore export`."
        ) from None
    try:
        with runtime(config_optional=True) as rt:
            report = data.load(rt, handle)
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text.", "Pass the file written by `lore export`.") from None
    finally:
        if handle is not sys.stdin:
            handle.close()
    print(f"Import done: {report.describe()}.")
    return 0


def import_markdown(target: str, workspace: str | None, allow_secret: bool) -> int:
    local_only("import-markdown", _NOTES)
    path = Path(target).expanduser()
    with runtime() as rt:
        session = rt.command_session(workspace)
        collected, outcome = data.import_markdown(rt, session, path, allow_secret=allow_secret)
    print(f"Imported {len(collected.files)} files into space {session.space}: {outcome.describe()}.")
    _listed(
        outcome.created + outcome.updated, collected.skipped, f" (lore does not follow links out of {path})"
    )
    return 0


_NOTES = "On a server, add notes with `lore notes add --file PATH` (one per file), or ask its operator."


def _listed(written: list[str], skipped: list[tuple[Path, str]], why_skipped: str = "") -> None:
    """The notes an import wrote, and the files it left out with the reason."""
    for note_id in written:
        print(f"  {note_id}")
    if skipped:
        print(f"Skipped {len(skipped)}{why_skipped}:")
        for file, why in skipped:
            print(f"  {file}: {why}")


def import_instructions(target: str | None, workspace: str | None, allow_secret: bool) -> int:
    local_only("import-instructions", _NOTES)
    with runtime() as rt:
        folder = Path(target).expanduser() if target else None
        # The folder's own workspace decides (its repository, its space), not the working directory's:
        # `lore import-instructions ~/other-repo` from inside this repository files nothing here.
        session = rt.command_session(workspace or (str(folder) if folder is not None else None))
        found, done = data.import_instructions(rt, session, folder, allow_secret=allow_secret)
    print(done.describe(session.space))
    if done.removed:
        print(f"Forgotten (their sections are no longer in the files): {', '.join(done.removed)}")
    _listed(done.outcome.created + done.outcome.updated, found.skipped)
    return 0


def erase(item: str, yes: bool, full: bool) -> int:
    local_only("purge", ON_THE_SERVER)
    with runtime(config_optional=True) as rt:
        planned = data.purge_plan(rt, item)
        if not yes:
            if not sys.stdin.isatty():
                raise Refused(
                    f"lore purge erases {planned.describe()}; it cannot be undone.",
                    f"Run `lore purge {planned.item} --yes` to confirm.",
                )
            answer = input(f"Erase {planned.describe()} for good? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("Nothing erased.")
                return 1
        done = data.purge_item(rt, item, getpass.getuser(), full=full)
    print(f"Erased {done.describe()}.")
    return 0
