"""What docs/deploy.md tells an operator to paste is checked by the programs that read it: the
systemd unit of a replica by `systemd-analyze verify`, the HAProxy configuration by `haproxy -c`."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.infra import HAPROXY, require

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "deploy.md").read_text()
LORE = str(Path(sys.executable).parent / "lore")


def test_the_replica_unit_is_one_systemd_accepts(tmp_path: Path) -> None:
    if not shutil.which("systemd-analyze"):
        pytest.skip("no systemd-analyze here")
    found = re.search(r"```ini\n(# /etc/systemd/system/lore\.service\n.*?)```", DOC, re.S)
    assert found, "docs/deploy.md lost its systemd unit"
    unit = tmp_path / "lore.service"
    unit.write_text(found.group(1).replace("/opt/lore/bin/lore", LORE))  # a lore that exists here
    verified = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60
    )
    assert verified.returncode == 0 and not verified.stderr.strip(), verified.stderr
    assert "--sign-in --stateless" in found.group(1) and "--log-format json" in found.group(1)


def test_the_haproxy_configuration_is_one_haproxy_accepts(tmp_path: Path) -> None:
    require(HAPROXY)
    found = re.search(r"```\n(defaults\n.*?)```", DOC, re.S)
    assert found, "docs/deploy.md lost its HAProxy configuration"
    text = found.group(1)
    assert "balance roundrobin" in text and "GET /readyz" in text and "timeout server  90s" in text
    config = tmp_path / "haproxy.cfg"
    config.write_text(
        text.replace("bind :443 ssl crt /etc/haproxy/lore.pem", "bind 127.0.0.1:8443")
    )  # no cert here
    checked = subprocess.run([HAPROXY, "-c", "-f", str(config)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
