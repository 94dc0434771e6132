"""Fuzzed config files: whatever the bytes, loading a config gives a Config or a ConfigError that names
the file (and the line, where the problem is on one), never another exception; the CLI prints the
error and its fix, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support import cli

from lore.core.config import Config, load_config, parse_config
from lore.core.errors import ConfigError

PATH = Path("/home/u/.config/lore/config.toml")
VALID = """default_space = "personal"

[[space]]
id = "personal"
paths = ["~/dotfiles"]

[[space]]
id           = "work"
paths        = ["~/codes/acme-*"]
remotes      = ["github.com/acme/*"]
reads_from   = ["personal"]
accepts_from = ["personal"]

[database]
url = "postgresql://localhost/lore"

[session_start]
max_chars = 8000

[embedder]
name = "local"
min_similarity = 0.3
"""
TOKENS = [
    "[",
    "]",
    "[[",
    "]]",
    "{",
    "}",
    "=",
    '"',
    "'",
    '"""',
    "\n",
    "#",
    ",",
    ".",
    "\\",
    "~",
    "*",
    "0",
    "-1",
    "1e999",
    "true",
    "inf",
    "nan",
    "1979-05-27",
    "space",
    "id",
    "paths",
    "reads_from",
    "default_space",
    "[[space]]",
    "[database]",
    "[embedder]",
    "[session_start]",
    "max_chars",
    "é",
    "\x00",
    "\ufeff",
    "\u2028",
]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """The valid config with a few random edits: deletions, insertions of TOML-ish tokens, swaps."""
    text = VALID
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace", "duplicate"]))
        if action == "insert":
            text = text[:at] + draw(st.sampled_from(TOKENS) | st.text(max_size=5)) + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 20)) :]
        elif action == "replace":
            text = text[:at] + draw(st.sampled_from(TOKENS)) + text[at + 1 :]
        else:
            line = draw(st.sampled_from(text.splitlines() or [""]))
            text = text[:at] + "\n" + line + "\n" + text[at:]
    return text


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def structured(draw: st.DrawFn) -> str:
    """Well-formed TOML with keys that lore knows and values of any type."""
    lines = []
    if draw(st.booleans()):
        lines.append(f"default_space = {_toml(draw(VALUES | st.sampled_from(['personal', 'work'])))}")
    for _ in range(draw(st.integers(0, 3))):
        lines.append("[[space]]")
        keys = ["id", "paths", "remotes", "reads_from", "accepts_from", "x"]
        for key in draw(st.lists(st.sampled_from(keys), unique=True, max_size=4)):
            lines.append(f"{key} = {_toml(draw(VALUES | st.sampled_from(['work', '~/a', '/b', '*'])))}")
    for table, keys in (
        ("database", ["url"]),
        ("session_start", ["max_chars"]),
        ("embedder", ["name", "dimensions"]),
    ):
        if draw(st.booleans()):
            lines.append(f"[{table}]")
            lines.extend(f"{k} = {_toml(draw(VALUES))}" for k in keys if draw(st.booleans()))
    return "\n".join(lines) + "\n"


def _toml(value: object) -> str:
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if value == value and abs(value) != float("inf") else "0"
    if isinstance(value, str):
        return '"' + value.encode("unicode_escape").decode().replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    assert isinstance(value, dict)
    return (
        "{"
        + ", ".join(f'"{k.encode("unicode_escape").decode()}" = {_toml(v)}' for k, v in value.items())
        + "}"
    )


def _check(text: str) -> None:
    try:
        config = parse_config(text, PATH)
    except ConfigError as exc:
        assert exc.message.startswith(str(PATH)), exc.message
        assert exc.hint, exc.message
        if "invalid TOML" in exc.message and "at the end" not in exc.message:
            assert exc.message.startswith(f"{PATH}:"), exc.message  # file:line
    else:
        assert isinstance(config, Config)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mutated())
@example(text=VALID)
@example(text="")
@example(text="[[space]]\n")
@example(text='[[space]]\nid = "a"\n[[space]]\nid = "a"\n')
def test_mutated_configs_give_a_config_or_a_config_error(text: str) -> None:
    _check(text)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=structured())
def test_well_formed_toml_with_any_values_gives_a_config_or_a_config_error(text: str) -> None:
    _check(text)


# A valid config, one key per line: (table, key, value as TOML). Each case below puts a value of a
# wrong type in exactly one of these keys; the config must then be refused, naming that key's line.
BASE = [
    ("", "default_space", '"work"'),
    ("[[space]]", "id", '"work"'),
    ("[[space]]", "paths", '["/code/work"]'),
    ("[[space]]", "remotes", '["github.com/acme/*"]'),
    ("[[space]]", "reads_from", '["home"]'),
    ("[[space]]", "accepts_from", '["home"]'),
    ("[[space]] ", "id", '"home"'),  # a second [[space]] (the trailing blank only keeps it apart here)
    ("[database]", "url", '"postgresql://localhost/lore"'),
    ("[session_start]", "max_chars", "8000"),
    ("[embedder]", "name", '"openai"'),
    ("[embedder]", "model", '"text-embedding-3-small"'),
    ("[embedder]", "base_url", '"http://localhost:11434/v1"'),
    ("[embedder]", "api_key_env", '"OPENAI_API_KEY"'),
    ("[embedder]", "dimensions", "384"),
    ("[embedder]", "min_similarity", "0.3"),
]


def _render(table: str, key: str, value: str) -> tuple[str, int]:
    """BASE with `key` of `table` set to `value`; and the line that key is on."""
    lines: list[str] = []
    current, target = None, 0
    for t, k, v in BASE:
        if t != current:
            if t:
                lines.append(t.strip())
            current = t
        if (t.strip(), k) == (table, key) and not target:
            v, target = value, len(lines) + 1
        lines.append(f"{k} = {v}")
    assert target
    return "\n".join(lines) + "\n", target


_PLAIN = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=8)
_ANY = st.recursive(
    st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _PLAIN,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet="abcxyz", min_size=1, max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _literal(value: object) -> str:
    """A TOML literal of `value` (written here, independent of the code under test)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON's escapes are all valid in a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{k} = {_literal(v)}" for k, v in value.items()) + "}"


def _not_text(v: object) -> bool:
    return not isinstance(v, str) or not v.strip()


def _not_text_list(v: object) -> bool:
    return not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v)


WRONG = {  # (table, key): what makes a value of the wrong type there
    ("", "default_space"): lambda v: not isinstance(v, str),
    ("[[space]]", "id"): lambda v: not isinstance(v, str),
    ("[[space]]", "paths"): _not_text_list,
    ("[[space]]", "remotes"): _not_text_list,
    ("[[space]]", "reads_from"): _not_text_list,
    ("[[space]]", "accepts_from"): _not_text_list,
    ("[database]", "url"): _not_text,
    ("[session_start]", "max_chars"): lambda v: type(v) is not int,
    ("[embedder]", "name"): _not_text,
    ("[embedder]", "model"): _not_text,
    ("[embedder]", "base_url"): _not_text,
    ("[embedder]", "api_key_env"): _not_text,
    ("[embedder]", "dimensions"): lambda v: type(v) is not int,
    ("[embedder]", "min_similarity"): lambda v: type(v) not in (int, float),
}


def test_the_base_config_is_valid() -> None:
    text, _ = _render("", "default_space", '"work"')
    config = parse_config(text, PATH)
    assert config.ids == ("work", "home") and config.embedder.dimensions == 384


@pytest.mark.parametrize(("table", "key"), list(WRONG), ids=[f"{t or 'top'}.{k}" for t, k in WRONG])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_wrong_types_give_a_config_error(table: str, key: str, data: st.DataObject) -> None:
    value = data.draw(_ANY.filter(WRONG[(table, key)]), label="value")
    text, line = _render(table, key, _literal(value))
    with pytest.raises(ConfigError) as err:
        parse_config(text, PATH)
    # the file and the line of the offending key, the key named, and a fix
    assert err.value.message.startswith(f"{PATH}:{line}: "), (err.value.message, text)
    assert key in err.value.message, err.value.message
    assert err.value.hint


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_on_disk(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("cfg") / "config.toml"
    path.write_bytes(data)
    try:
        load_config({}, path)
    except ConfigError as exc:
        assert str(path) in exc.message
        assert exc.hint


@pytest.mark.parametrize(
    "text",
    [
        '[[space]]\nid = "a"\npaths = [1, 2]\n',
        "default_space = \n",
        '[[space]\nid = "x"\n',
        "\x00\x01\x02",
        '[[space]]\nid = "w"\nreads_from = ["nope"]\n',
        "[session_start]\nmax_chars = 1e999\n",
    ],
)
def test_the_cli_prints_the_error_and_the_fix_never_a_traceback(tmp_path: Path, text: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(text)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LORE_CONFIG": str(config),
        "LORE_DATA_DIR": str(tmp_path),
    }
    for args in (["which", str(tmp_path)], ["doctor"]):
        out = cli.run(*args, env=env)  # the CLI's main in this process: an exception would fail here
        shown = out.stdout + out.stderr
        assert "Traceback" not in shown, shown
        assert str(config) in shown, shown
