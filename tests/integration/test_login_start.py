"""`lore service install|uninstall|status`: the embedded database started at each login. The unit
is checked by `systemd-analyze verify` (systemd's own parser), the launchd agent by plistlib (the
format `plutil -lint` checks); `lore doctor` says whether it is installed."""

from __future__ import annotations

import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import cli

from lore.installers import login

LORE = str(Path(sys.executable).parent / "lore")


def test_install_writes_a_unit_systemd_accepts_and_doctor_sees_it(
    lore_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**lore_env, "LORE_DATA_DIR": str(tmp_path / "my data %h")}  # a space and a specifier
    Path(env["LORE_CONFIG"]).write_text('default_space = "personal"\n[[space]]\nid = "personal"\n')
    done = subprocess.run(
        [LORE, "service", "install", "--no-enable"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    unit = Path(env["HOME"]) / ".config" / "systemd" / "user" / login.UNIT
    assert f"wrote {unit}" in done.stdout and "systemctl --user enable --now lore-db.service" in done.stdout
    text = unit.read_text()
    assert f"ExecStart={LORE} db start" in text and "%%h" in text
    if shutil.which("systemd-analyze"):
        verified = subprocess.run(
            ["systemd-analyze", "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60
        )
        assert verified.returncode == 0 and not verified.stderr.strip(), verified.stderr
    assert 'Environment="LORE_DATA_DIR=' in text
    status = subprocess.run([LORE, "service", "status"], env=env, capture_output=True, text=True, timeout=60)
    assert status.stdout.startswith("installed:")
    doctor = cli.run("doctor", env=env)
    assert any(x.startswith("OK") and "login start installed" in x for x in doctor.stdout.splitlines()), (
        doctor.stdout
    )

    removed = subprocess.run(
        [LORE, "service", "uninstall", "--no-enable"], env=env, capture_output=True, text=True, timeout=60
    )
    assert removed.returncode == 0 and not unit.exists(), removed
    doctor = cli.run("doctor", env=env)
    assert "login start not installed" in doctor.stdout and "lore service install" in doctor.stdout


def test_a_unit_with_a_bad_line_is_what_systemd_analyze_catches() -> None:
    """The check above can fail: systemd-analyze rejects a unit whose ExecStart is not absolute."""
    if not shutil.which("systemd-analyze"):
        pytest.skip("no systemd-analyze here")
    bad = Path(__import__("tempfile").mkdtemp()) / login.UNIT
    bad.write_text(login.systemd_unit("lore", {}))
    verified = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert verified.returncode != 0 or verified.stderr.strip()
    shutil.rmtree(bad.parent)


def test_the_launchd_agent_is_a_plist_that_runs_lore_db_start(tmp_path: Path) -> None:
    start = login.for_platform("/opt/lore/bin/lore", {"HOME": str(tmp_path), "LORE_DATA_DIR": "/d"}, "darwin")
    assert start.path == tmp_path / "Library" / "LaunchAgents" / "dev.lore.db.plist"
    plist = plistlib.loads(start.text.encode())
    assert plist["Label"] == "dev.lore.db" and plist["RunAtLoad"] is True
    assert plist["ProgramArguments"] == ["/opt/lore/bin/lore", "db", "start"]
    assert plist["EnvironmentVariables"] == {"LORE_DATA_DIR": "/d"}
    assert start.enable == ("launchctl", "load", "-w", str(start.path))
    assert plist["StandardErrorPath"] == "/d/login-start.log"


def test_the_launchd_agent_never_logs_to_a_fixed_name_in_the_shared_tmp(tmp_path: Path) -> None:
    """Trust round 4, item 7: without LORE_DATA_DIR the agent logged to /tmp/login-start.log, a name
    any local user could plant first (a link launchd writes through, or a file they read)."""
    start = login.for_platform("/opt/lore/bin/lore", {"HOME": str(tmp_path)}, "darwin")
    log = plistlib.loads(start.text.encode())["StandardErrorPath"]
    assert log == str(tmp_path / "Library" / "Logs" / "lore-login-start.log")


def test_install_without_no_enable_says_what_to_run_when_systemctl_cannot(lore_env: dict[str, str]) -> None:
    env = {**lore_env, "PATH": "/nonexistent"}
    done = subprocess.run([LORE, "service", "install"], env=env, capture_output=True, text=True, timeout=60)
    assert (
        done.returncode == 1 and "systemctl is not on PATH" in done.stdout and "Traceback" not in done.stderr
    )
