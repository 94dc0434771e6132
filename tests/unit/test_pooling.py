"""Which URL goes through a transaction pooler, and where LISTEN goes (lore.core.pooling)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lore.core.config import load_config
from lore.core.errors import ConfigError
from lore.core.pooling import choose, pooler_of

DIRECT = "postgresql://lore:pw@db.internal:5432/lore"


@pytest.mark.parametrize(
    ("url", "seen"),
    [
        ("postgresql://u:p@db.internal:6432/lore", "port is 6432"),
        ("postgresql://u:p@aws-0-eu.pooler.supabase.com:5432/postgres", "names a pooler (pooler)"),
        ("postgresql://u:p@ep-cool-1234-pooler.eu-central-1.aws.neon.tech/db", "names a pooler (pooler)"),
        ("postgresql://u:p@lore.proxy-abc.eu-west-1.rds.amazonaws.com/lore", "names a pooler (proxy)"),
        ("postgresql://u@/lore?host=/run/pgbouncer&port=6432", "port is 6432"),
        (DIRECT, None),
        ("postgresql://postgres@/lore?host=/tmp/lore/run", None),
        ("not a url at all", None),
    ],
)
def test_a_pooled_url_is_recognised_by_its_shape(url: str, seen: str | None) -> None:
    found = pooler_of(url)
    assert (found is None) == (seen is None), found
    if seen is not None:
        assert found is not None and seen in found


def test_a_direct_url_listens_where_it_connects() -> None:
    plan = choose(DIRECT, {})
    assert not plan.pooled and plan.listen_url == DIRECT and plan.warning is None


def test_a_pooled_url_without_a_listen_url_polls_and_says_what_to_set() -> None:
    plan = choose("postgresql://u:p@db:6432/lore", {})
    assert plan.pooled and plan.listen_url is None
    assert plan.warning is not None and "LORE_LISTEN_URL" in plan.warning


def test_the_listen_url_beside_a_pooler_is_used_and_the_environment_wins() -> None:
    plan = choose("postgresql://u:p@db:6432/lore", {"LORE_LISTEN_URL": DIRECT}, listen_url="postgresql://x/y")
    assert plan.pooled and plan.listen_url == DIRECT and plan.warning is None
    assert choose(DIRECT, {}, listen_url="postgresql://x/y").listen_url == "postgresql://x/y"


def test_a_listen_url_that_looks_pooled_too_is_warned_about() -> None:
    plan = choose("postgresql://u:p@db:6432/lore", {"LORE_LISTEN_URL": "postgresql://u:p@db:6432/lore"})
    assert plan.listen_url is not None and plan.warning is not None and "pooler's too" in plan.warning


def test_the_setting_overrides_detection_both_ways() -> None:
    assert choose(DIRECT, {"LORE_DATABASE_POOLER": "transaction"}).pooled
    assert not choose("postgresql://u:p@db:6432/lore", {"LORE_DATABASE_POOLER": "session"}).pooled
    assert not choose("postgresql://u:p@db:6432/lore", {}, pooler="none").pooled
    assert choose(DIRECT, {}, pooler="transaction").pooled


def test_listen_off_turns_listen_off_without_a_warning() -> None:
    plan = choose(DIRECT, {"LORE_LISTEN_URL": "off"})
    assert plan.listen_url is None and plan.warning is None and "off" in plan.listen_why


def test_the_config_file_takes_listen_url_and_pooler_and_refuses_a_bad_one(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        'default_space = "p"\n[[space]]\nid = "p"\n'
        f'[database]\nurl = "{DIRECT}"\nlisten_url = "{DIRECT}"\npooler = "transaction"\n'
    )
    config = load_config({"LORE_CONFIG": str(path)})
    assert config.database_listen_url == DIRECT and config.database_pooler == "transaction"
    path.write_text('default_space = "p"\n[[space]]\nid = "p"\n[database]\npooler = "sometimes"\n')
    with pytest.raises(ConfigError) as refused:
        load_config({"LORE_CONFIG": str(path)})
    assert ":5: database.pooler must be one of" in refused.value.message
