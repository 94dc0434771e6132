"""Every SQL statement in lore's source is checked against the migrated schema: each string that
starts a query (SELECT, INSERT, UPDATE, DELETE, WITH), f-strings built from module constants
(`f"SELECT {_COLUMNS} FROM facts ..."`) included, is planned by PostgreSQL with `EXPLAIN (GENERIC_PLAN)`
(parameters as $n, nothing executed). A renamed column, a dropped table or a typo in a query that
no other test reaches fails here, by file and line.

Statements built at run time from a table name (psycopg `sql` templates, `{table}` interpolation)
cannot be planned from the source; they are listed in DYNAMIC with where they are tested instead,
and a new one fails until it is listed (or made static).
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import psycopg
import pytest

import lore

STATEMENT = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\s")
ROOT = Path(lore.__path__[0])
# (module, start of the statement): statements completed at run time (a table name, a vector's
# dimension: psycopg `sql` templates with `{}`, or f-strings of local values), and what runs them.
DYNAMIC = {
    ("lore.store.purge", "SELECT 1 FROM {table}"): "one per table erased: tests/reliability/test_purge.py",
    ("lore.store.tasks", "SELECT count(*) FROM ({_SELECT}{where})"): "filters vary: tests/work/test_tasks.py",
    ("lore.store.vectors", "UPDATE notes SET embedding"): "per model: tests/retrieval/test_search_db.py",
    ("lore.store.second_vectors", "UPDATE notes SET embedding2"): "tests/retrieval/test_second_model.py",
    (
        "lore.store.vectors",
        "UPDATE facts SET embedding",
    ): "per model: tests/integration/test_named_changes.py",
    (
        "lore.store.facts",
        "SELECT {columns}, 1 - (f.embedding::vector({dim})",
    ): "per dimension: tests/integration/test_named_changes.py",
    ("lore.store.facts", "SELECT a.lineage, n.lineage, n.cosine"): "per dimension: test_named_changes.py",
    (
        "lore.store.search",
        "SELECT set_config('hnsw.ef_search'",
    ): "a literal '{0,8}': tests/retrieval/test_search_db.py",
    ("lore.store.keywords", "WITH pool AS"): "filters vary: tests/retrieval/test_search_db.py",
    (
        "lore.store.search",
        "SELECT n.lineage, 1 - (n.{column}::vector({dim})",
    ): "per dimension and model: test_search_db.py, test_second_model.py",
    ("lore.store.transfer.export", "SELECT"): "one per table: tests/reliability/test_transfer.py",
    ("lore.store.transfer.importer", "SELECT"): "one per table: tests/reliability/test_transfer.py",
    ("lore.store.transfer.importer", "INSERT INTO {t}"): "one per table: tests/reliability/test_transfer.py",
    ("lore.store.versions", "UPDATE {}"): "facts and notes: tests/integration/test_forget_rows.py",
    ("lore.store.versions", "INSERT INTO {}"): "facts and notes: tests/integration/test_facts_sql.py",
    ("lore.store.versions", "SELECT bool_or"): "facts and notes: tests/integration/test_facts_sql.py",
    (
        "lore.store.port",
        "SELECT to_json({function.name}({placeholders}))",
    ): "one per SQL function of lore.db.calls: tests/integration/test_event_ports.py",
    (
        "lore.db.literals",
        "SELECT to_json({name}({values}));",
    ): "the psql side of the same calls: tests/integration/test_event_ports.py, test_hook_fast.py",
}


@dataclass(frozen=True)
class Statement:
    module: str
    line: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.module}:{self.line}"


def _module_name(path: Path) -> str:
    return ("lore." + ".".join(path.relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__")


def _text(node: ast.AST, module: ModuleType) -> str | None:
    """The string a node builds, with module-level string constants filled in; None if it needs
    anything else (a local variable, a call)."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                out.append(part.value)
            elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name):
                value = getattr(module, part.value.id, None)
                if not isinstance(value, (str, int)) or isinstance(value, bool):
                    return None
                out.append(str(value))
            else:
                return None
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left, module), _text(node.right, module)
        return None if left is None or right is None else left + right
    return None


def statements() -> tuple[list[Statement], list[tuple[str, str]]]:
    """(every statement whose text is known, (module, source) of those built at run time)."""
    found: list[Statement] = []
    dynamic: list[tuple[str, str]] = []
    for path in sorted(ROOT.rglob("*.py")):
        name = _module_name(path)
        module = importlib.import_module(name)
        tree = ast.parse(path.read_text())
        inner = {
            id(child)
            for node in ast.walk(tree)
            if isinstance(node, (ast.JoinedStr, ast.BinOp))
            for child in ast.iter_child_nodes(node)
        }
        for node in ast.walk(tree):
            if id(node) in inner or not isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp)):
                continue
            text = _text(node, module)
            if text is not None:
                if STATEMENT.match(text) and "{" in text:  # a template, completed at run time
                    dynamic.append((name, text.strip()))
                elif STATEMENT.match(text):
                    found.append(Statement(name, getattr(node, "lineno", 0), text))
            elif isinstance(node, ast.JoinedStr):
                source = "".join(
                    str(p.value) if isinstance(p, ast.Constant) else "{" + ast.unparse(p.value) + "}"
                    for p in node.values
                    if isinstance(p, (ast.Constant, ast.FormattedValue))
                )
                if STATEMENT.match(source):
                    dynamic.append((name, source.strip()))
    return found, dynamic


def generic(text: str) -> str:
    """psycopg's placeholders as PostgreSQL's: `%s` and `%(name)s` become $n (one number per name),
    `%%` becomes `%`."""
    names: dict[str, int] = {}
    count = 0

    def number(match: re.Match[str]) -> str:
        nonlocal count
        if match.group(0) == "%%":
            return "%"
        name = match.group(1)
        if name is None:
            count += 1
            return f"${count}"
        if name not in names:
            count += 1
            names[name] = count
        return f"${names[name]}"

    return re.sub(r"%%|%\((\w+)\)s|%s", number, text)


FOUND, BUILT = statements()


def test_the_source_holds_the_statements_we_expect_to_check() -> None:
    assert len(FOUND) > 100, "the scan found too few statements: it is broken"
    modules = {s.module for s in FOUND}
    for expected in (
        "lore.store.facts",
        "lore.store.notes",
        "lore.store.tasks",
        "lore.store.messages",
        "lore.store.search",
        "lore.store.auth",
    ):
        assert expected in modules


def test_every_statement_built_at_run_time_is_known() -> None:
    unknown = [
        (module, source)
        for module, source in BUILT
        if not any(module == m and source.startswith(start) for m, start in DYNAMIC)
    ]
    assert unknown == [], "a statement built at run time: make it static, or list it in DYNAMIC"


@pytest.mark.parametrize("statement", FOUND, ids=lambda s: s.where)
def test_every_statement_plans_against_the_migrated_schema(
    conn: psycopg.Connection, statement: Statement
) -> None:
    try:
        conn.execute(f"EXPLAIN (GENERIC_PLAN) {generic(statement.text)}")
    except psycopg.Error as exc:
        pytest.fail(f"{statement.where}: {exc.diag.message_primary or exc}\n{statement.text}")
    finally:
        conn.rollback()


def test_the_hooks_hold_no_sql() -> None:
    """Every hook event is a use case of lore.service.events: the hooks only adapt (issue "One lore
    wherever the database is"). Before, the session-start, prompt and session-end hooks each held
    their psql script."""
    found, dynamic = statements()
    in_hooks = [s.where for s in found if s.module.startswith("lore.hooks")]
    in_hooks += [f"{module}: {text[:40]}" for module, text in dynamic if module.startswith("lore.hooks")]
    assert in_hooks == []
