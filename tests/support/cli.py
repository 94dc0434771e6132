"""`lore ARGS` through the command line's own `main(argv)`, in the test's process: the same parser,
dispatch, output and exit codes as the `lore` program, without starting an interpreter per call.

The call sees `env` as its whole environment, `cwd` as its working directory and `stdin` as its
input, and its stdout and stderr are collected, as a child process's would be; all of it is put
back afterwards. Tests of the program itself (its start-up cost, its imports, signals, another
uid, a crash) keep running the real `lore` binary."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

from lore.cli.main import main


@contextmanager
def _as_a_process(env: Mapping[str, str], cwd: Path | str | None) -> Iterator[None]:
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    try:
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


class _ToStream(logging.Handler):
    """What a child's logging would print with no handler configured (Python's last resort: the
    message, WARNING and above, on stderr), while pytest's own handlers sit on the root logger."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(record.getMessage() + "\n")


def run(
    *args: str, env: Mapping[str, str], cwd: Path | str | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    out, err = io.StringIO(), io.StringIO()
    saved_stdin = sys.stdin
    handler = _ToStream()
    root = logging.getLogger()
    sys.stdin = io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8")  # a pipe, not a tty
    root.addHandler(handler)
    try:
        with _as_a_process(env, cwd), redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse's usage errors, --help
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        root.removeHandler(handler)
        sys.stdin = saved_stdin
    return subprocess.CompletedProcess(["lore", *args], code, out.getvalue(), err.getvalue())
