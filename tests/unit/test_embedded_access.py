"""The pure parts of the embedded server's lock-down: its access rules and the doctor's audit."""

from __future__ import annotations

from pathlib import Path

from lore.db import embedded

SAFE = {"listen_addresses": "", "unix_socket_permissions": "0700"}


def test_a_private_server_has_nothing_to_report() -> None:
    assert embedded.audit(SAFE, [("local", "peer")], 0o700) == []


def test_each_way_in_is_reported_with_the_fix() -> None:
    problems = embedded.audit(
        {"listen_addresses": "localhost", "unix_socket_permissions": "0777"},
        [("local", "trust"), ("host", "trust"), ("hostssl", "scram-sha-256")],
        0o755,
    )
    assert [p for p, _ in problems] == [
        "the embedded PostgreSQL listens on TCP (localhost)",
        "pg_hba has a `trust` line (local)",
        "pg_hba has a `trust` line (host)",
        "pg_hba lets hostssl connections in (scram-sha-256)",
        "its socket is mode 0777 (others can connect)",
        "its socket directory is mode 0755 (not private)",
    ]
    assert all("`lore db stop` then `lore db start`" in fix for _, fix in problems)


def test_the_access_rules_have_no_trust_and_no_host_line() -> None:
    rules = [line.split() for line in embedded.HBA.splitlines() if line and not line.startswith("#")]
    assert rules == [["local", "all", "all", "peer", "map=lore"]]


def test_the_ident_map_quotes_odd_user_names() -> None:
    assert embedded.ident_map(["alice", "root", 'we"ird name']).splitlines()[1:] == [
        "lore alice postgres",
        "lore root postgres",
        'lore "we""ird name" postgres',
    ]


def test_every_start_passes_no_tcp_and_a_private_socket() -> None:
    assert embedded.server_options(Path("/run/x")) == [
        "-k",
        "/run/x",
        "-h",
        "",
        "-c",
        "unix_socket_permissions=0700",
    ]
