"""`lore init`, `lore which`, `lore doctor` as a person runs them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support import cli


def lore(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return cli.run(*args, env=env, cwd=cwd)  # the CLI's main in this process (support/cli.py)


def test_init_writes_a_starter_once(lore_env: dict[str, str]) -> None:
    first = lore(lore_env, "init")
    assert first.returncode == 0 and "Wrote" in first.stdout
    text = Path(lore_env["LORE_CONFIG"]).read_text()
    assert 'default_space = "personal"' in text
    Path(lore_env["LORE_CONFIG"]).write_text(text + "\n# mine\n")
    second = lore(lore_env, "init")
    assert second.returncode == 0 and "already exists" in second.stdout
    assert Path(lore_env["LORE_CONFIG"]).read_text().endswith("# mine\n")


def test_which_explains_the_rule(tmp_path: Path, lore_env: dict[str, str]) -> None:
    project = tmp_path / "codes" / "acme-api"
    (project / "src").mkdir(parents=True)
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'default_space = "personal"\n[[space]]\nid = "personal"\n\n'
        f'[[space]]\nid = "work"\npaths = ["{tmp_path}/codes/acme-*"]\nreads_from = ["personal"]\n'
    )
    out = lore(lore_env, "which", str(project / "src"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "work"
    assert "acme-*" in out.stdout and "also reads: personal" in out.stdout
    default = lore(lore_env, "which", str(tmp_path))
    assert default.stdout.splitlines()[0] == "personal" and "default" in default.stdout


def test_which_reports_missing_config_with_the_fix(lore_env: dict[str, str]) -> None:
    out = lore(lore_env, "which", "/")
    assert out.returncode == 1
    assert "lore init" in out.stderr and "Traceback" not in out.stderr


def test_doctor_names_a_configured_path_that_does_not_exist(tmp_path: Path, lore_env: dict[str, str]) -> None:
    gone = tmp_path / "renamed-away"
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'default_space = "personal"\n[[space]]\nid = "personal"\n\n'
        f'[[space]]\nid = "old"\npaths = ["{gone}"]\n'
    )
    out = lore(lore_env, "doctor")
    assert str(gone) in out.stdout
    line = next(x for x in out.stdout.splitlines() if str(gone) in x)
    assert line.startswith("WARN") and "does not exist" in line and "→" in line
    assert "OK   database reachable" in out.stdout
    assert "OK   schema current" in out.stdout
    assert "pgvector" in out.stdout


def test_doctor_fails_on_two_spaces_claiming_one_path_from_the_config_alone(
    tmp_path: Path, lore_env: dict[str, str]
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'default_space = "personal"\n[[space]]\nid = "personal"\n\n'
        f'[[space]]\nid = "a"\npaths = ["{shared}"]\n\n[[space]]\nid = "b"\npaths = ["{shared}/"]\n'
    )
    out = lore(lore_env, "doctor")  # no session has landed there: the config alone says so
    assert out.returncode == 1
    line = next(x for x in out.stdout.splitlines() if "both claim" in x)
    assert line.startswith("FAIL") and "spaces a and b" in line and "→" in line


def test_doctor_finds_where_a_moved_folder_went_and_prints_the_line_to_paste(
    tmp_path: Path, lore_env: dict[str, str]
) -> None:
    home = Path(lore_env["HOME"])
    moved = home / "code" / "clients" / "acme-api"
    (moved / ".git").mkdir(parents=True)
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'default_space = "personal"\n[[space]]\nid = "personal"\n\n'
        f'[[space]]\nid = "acme"\npaths = ["{tmp_path}/old-place/acme-api"]\n'
    )
    out = lore(lore_env, "doctor")
    line = next(x for x in out.stdout.splitlines() if "old-place" in x)
    assert line.startswith("WARN") and f"may have moved to {moved}" in line
    assert f'set paths = ["{moved}"]' in line


def test_doctor_finds_a_moved_and_renamed_checkout_by_its_remote(
    tmp_path: Path, lore_env: dict[str, str]
) -> None:
    home = Path(lore_env["HOME"])
    renamed = home / "src" / "api-v2"
    (renamed / ".git").mkdir(parents=True)
    (renamed / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:acme/api.git\n')
    (home / "src" / "other" / ".git").mkdir(parents=True)
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'default_space = "personal"\n[[space]]\nid = "personal"\n\n'
        f'[[space]]\nid = "acme"\npaths = ["{tmp_path}/gone/api"]\nremotes = ["github.com/acme/*"]\n'
    )
    out = lore(lore_env, "doctor")
    line = next(x for x in out.stdout.splitlines() if "/gone/api" in x)
    assert f"may have moved to {renamed}" in line and "other" not in line


def test_doctor_shows_each_hooks_last_result_not_old_fixed_failures(lore_env: dict[str, str]) -> None:
    from lore.core import hooklog

    Path(lore_env["LORE_CONFIG"]).write_text('default_space = "personal"\n[[space]]\nid = "personal"\n')
    hooklog.append("gemini", "session-start", False, "DatabaseError: connection refused", lore_env)
    failing = lore(lore_env, "doctor")
    assert any(x.startswith("FAIL") and "hook gemini" in x for x in failing.stdout.splitlines()), (
        failing.stdout
    )
    hooklog.append("gemini", "session-start", True, "space personal (default): 2 facts shown", lore_env)
    fixed = lore(lore_env, "doctor")
    # "hook gemini:" is the session-start line; another test of this worker may have left a gemini
    # session-end line ("hook gemini session-end:") in the same hook log.
    mine = [x for x in fixed.stdout.splitlines() if "hook gemini:" in x]
    assert len(mine) == 1 and mine[0].startswith("OK") and "succeeded" in mine[0], fixed.stdout
    assert "connection refused" not in fixed.stdout


def test_doctor_fails_on_bad_toml_naming_the_line(lore_env: dict[str, str]) -> None:
    Path(lore_env["LORE_CONFIG"]).write_text('default_space = "personal"\n[[space]\nid = "x"\n')
    out = lore(lore_env, "doctor")
    assert out.returncode == 1
    fail = next(x for x in out.stdout.splitlines() if x.startswith("FAIL"))
    assert lore_env["LORE_CONFIG"] in fail and "2" in fail


def test_doctor_says_to_start_a_session_when_the_hook_is_installed_but_never_ran(
    tmp_path: Path, lore_env: dict[str, str], db_url: str
) -> None:
    """Its own data dir, so the hook log is empty (the test worker's is shared with other tests)."""
    env = {**lore_env, "LORE_DATA_DIR": str(tmp_path / "data"), "LORE_DATABASE_URL": db_url}
    Path(env["LORE_CONFIG"]).write_text('default_space = "personal"\n[[space]]\nid = "personal"\n')

    def never_ran() -> str:
        out = lore(env, "doctor", cwd=Path(env["HOME"]))
        return next(x for x in out.stdout.splitlines() if "hook has never run" in x)

    assert "→ install it: `lore install claude-code`" in never_ran()  # nothing installed: install
    assert lore(env, "install", "gemini", cwd=Path(env["HOME"])).returncode == 0
    line = never_ran()  # installed, no session started yet: start one (installing again fixes nothing)
    assert line.startswith("WARN") and "install it" not in line
    assert "→ start a session in an agent lore is installed into" in line


def test_token_commands_on_a_server_host_need_no_config_file_and_say_nothing_of_it(
    lore_env: dict[str, str], db_url: str
) -> None:
    """A server host has a database URL and no lore config file: `lore token` used to warn that the
    config was not usable on every call."""
    env = {**lore_env, "LORE_DATABASE_URL": db_url}
    assert not Path(env["LORE_CONFIG"]).exists()
    made = lore(env, "token", "create", "alice")
    assert made.returncode == 0, made.stderr
    assert made.stderr.splitlines() == [made.stderr.splitlines()[0]] and "shown once" in made.stderr
    listed = lore(env, "token", "list")
    assert listed.returncode == 0 and "alice" in listed.stdout and listed.stderr == ""
