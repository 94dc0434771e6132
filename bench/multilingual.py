"""A non-English check of the second model (multilingual-e5-small, the extra `shared-lore[e5]`).

Twenty notes of a coding memory written in Spanish, German, French, Portuguese and Italian (written
for this check, four per language), each asked for twice through `search_notes` in a real MCP client
session: once in English (a developer searching in another language than the note's) and once in the
note's own language, with different words than the note. lore with its default model alone
(all-MiniLM-L6-v2, trained on English) against lore with e5 as the second model, on the same notes.

Rerun: .venv/bin/python bench/multilingual.py [--write]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from report import commit, machine, replace_section
from scratch import root_base

from lore.db import embedded

REPO = Path(__file__).resolve().parent.parent
SECTION = "## A non-English check (the second model)"

# (language, note, question in English, question in the note's language)
CASES = [
    (
        "es",
        "Los despliegues a producción se hacen los martes después de que pasen las pruebas de integración.",
        "which day do we ship to production?",
        "¿qué día se publica en producción?",
    ),
    (
        "es",
        "La caché de sesiones vive en Redis y caduca a los quince minutos.",
        "where are login sessions stored and when do they expire?",
        "¿dónde guardamos las sesiones de usuario?",
    ),
    (
        "es",
        "El servicio de facturación falla si la moneda del cliente no está configurada.",
        "why does billing crash for some customers?",
        "¿por qué se cae el cobro a algunos clientes?",
    ),
    (
        "es",
        "Para compilar el cliente móvil hace falta la versión 17 del JDK.",
        "what Java version does the phone app build need?",
        "¿qué JDK pide la aplicación del teléfono?",
    ),
    (
        "de",
        "Die Datenbankmigrationen laufen beim Start des Servers automatisch.",
        "when are schema changes applied?",
        "wann werden Schemaänderungen eingespielt?",
    ),
    (
        "de",
        "Geheimnisse liegen im Tresor von HashiCorp, niemals in der Umgebungsdatei.",
        "where do we keep passwords and API keys?",
        "wo bewahren wir Passwörter auf?",
    ),
    (
        "de",
        "Der Suchindex wird jede Nacht um zwei Uhr neu aufgebaut.",
        "how often is the search index rebuilt?",
        "wie oft wird der Index erneuert?",
    ),
    (
        "de",
        "Bei Speicherlecks im Worker hilft ein Neustart nach tausend Aufträgen.",
        "what do we do about the worker's memory leak?",
        "was tun gegen den wachsenden Speicher des Arbeiters?",
    ),
    (
        "fr",
        "Les journaux des conteneurs sont conservés sept jours puis supprimés.",
        "how long do we keep container logs?",
        "combien de temps gardons-nous les logs ?",
    ),
    (
        "fr",
        "La revue de code exige deux approbations pour la branche principale.",
        "how many reviewers must approve a merge to main?",
        "combien d'avis faut-il pour fusionner ?",
    ),
    (
        "fr",
        "Le tableau de bord affiche une erreur quand le fuseau horaire manque.",
        "why is the dashboard broken for some users?",
        "pourquoi l'écran de suivi plante-t-il ?",
    ),
    (
        "fr",
        "Nous avons choisi PostgreSQL plutôt que MongoDB pour les transactions.",
        "which database did we pick and why?",
        "quelle base de données avons-nous retenue ?",
    ),
    (
        "pt",
        "O limite de requisições da API pública é de cem por minuto por chave.",
        "what is the rate limit of the public API?",
        "quantas chamadas por minuto a API aceita?",
    ),
    (
        "pt",
        "As imagens enviadas pelos usuários são redimensionadas num processo em segundo plano.",
        "where are uploaded pictures resized?",
        "onde as fotos dos usuários mudam de tamanho?",
    ),
    (
        "pt",
        "O teste de carga mostrou que o gargalo é a serialização JSON.",
        "what did the load test find as the bottleneck?",
        "qual foi o ponto lento no teste de desempenho?",
    ),
    (
        "pt",
        "Os e-mails de boas-vindas saem por uma fila e tentam de novo três vezes.",
        "how are welcome emails sent and retried?",
        "como funciona o envio das mensagens de boas-vindas?",
    ),
    (
        "it",
        "Il certificato TLS si rinnova da solo trenta giorni prima della scadenza.",
        "when does the TLS certificate renew?",
        "quando viene rinnovato il certificato?",
    ),
    (
        "it",
        "I test end-to-end usano un browser senza interfaccia su Chromium.",
        "what browser do the end-to-end tests drive?",
        "con quale browser girano i test completi?",
    ),
    (
        "it",
        "Il backup del database viene copiato ogni notte su un secondo disco.",
        "where do database backups go?",
        "dove finiscono le copie di sicurezza?",
    ),
    (
        "it",
        "La funzione di esportazione in CSV ignora le colonne nascoste.",
        "does the CSV export include hidden columns?",
        "l'esportazione tabellare include i campi nascosti?",
    ),
]


async def run(env: dict[str, str], workspace: Path) -> dict[str, list[int]]:
    """Per question set ("English", "own language"): the rank of each case's note (0: not in the top 5)."""
    from support.mcpclient import lore_session, ok

    ids: list[str] = []
    async with lore_session(env, cwd=workspace, client="bench") as s:
        for _, note, _, _ in CASES:
            ids.append((await ok(s, "remember_note", body=note)).structured_content["id"])
        await ok(s, "search_notes", query="warm up")
        deadline = time.monotonic() + 600  # the worker embeds the notes (both models) meanwhile
        while time.monotonic() < deadline and not await _embedded(env):
            await asyncio.sleep(0.5)
        out: dict[str, list[int]] = {"English": [], "own language": []}
        for i, (_, _, english, own) in enumerate(CASES):
            for name, question in (("English", english), ("own language", own)):
                hits = (await ok(s, "search_notes", query=question, limit=5)).structured_content["results"]
                ranked = [h["id"] for h in hits]
                out[name].append(ranked.index(ids[i]) + 1 if ids[i] in ranked else 0)
    return out


async def _embedded(env: dict[str, str]) -> bool:
    import psycopg

    url = embedded.running_url(env)
    assert url is not None
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE embedding IS NULL OR (%s AND embedding2 IS NULL)) FROM notes",
            (env.get("LORE_SECOND_EMBEDDER") == "e5",),
        ).fetchone()
    return row is not None and row[0] == 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--write", action="store_true", help=f"replace '{SECTION}' in docs/benchmarks.md")
    args = p.parse_args()
    results: dict[str, dict[str, list[int]]] = {}
    for label, second in (("lore, default model only", "none"), ("lore with e5 as the second model", "e5")):
        root = Path(tempfile.mkdtemp(prefix="lore-bench-multi-", dir="/tmp"))
        work = root / "w"
        work.mkdir()
        (root / "config.toml").write_text(f'[[space]]\nid = "multi"\npaths = ["{work}"]\n')
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root),
            "LORE_DATA_DIR": str(root / "data"),
            "LORE_CONFIG": str(root / "config.toml"),
            "LORE_ROOT_BASE": root_base(),
            "LORE_EMBEDDER": "local",
            "LORE_SECOND_EMBEDDER": second,
            "LORE_EMBED_POLL": "0.2",
        }
        embedded.start(env)
        try:
            results[label] = asyncio.run(run(env, work))
        finally:
            embedded.stop(env)
            shutil.rmtree(root, ignore_errors=True)
    lines = [
        SECTION,
        "",
        __doc__.split("\n\n")[1].replace("\n", " "),
        "",
        f"- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {machine()}",
        f"- lore commit: {commit()}",
        "- Command: `.venv/bin/python bench/multilingual.py --write`",
        "",
        "| system | questions | found first (English) | in the top 5 (English) | found first (own language) "
        "| in the top 5 (own language) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, per in results.items():
        eng, own = per["English"], per["own language"]
        lines.append(
            f"| {label} | {len(eng)} + {len(own)} | {sum(r == 1 for r in eng)} | {sum(r > 0 for r in eng)} "
            f"| {sum(r == 1 for r in own)} | {sum(r > 0 for r in own)} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        replace_section(REPO / "docs" / "benchmarks.md", SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
