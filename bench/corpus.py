"""Synthetic but realistic engineering notes (decisions, patterns, dev setup) for load benchmarks.

Deterministic for a seed. A note's length is drawn log-uniformly between 100 and 2,000 characters
(median ~450: most notes are a few sentences, some are long write-ups), filled with sentences drawn
from a vocabulary of services, tools, people, actions, tickets, files and figures, so that keyword
and vector search both have real work.
"""

from __future__ import annotations

import math
import random

VERSION = 2  # bump when the generated text changes (bench caches of embeddings are keyed by it)
MIN_CHARS, MAX_CHARS = 100, 2000

Note = tuple[str, str, str, list[str]]  # (kind, title, body, tags)

SERVICES = [
    "billing-api",
    "auth-service",
    "search-indexer",
    "web-frontend",
    "mobile-gateway",
    "data-pipeline",
    "notification-worker",
    "report-builder",
    "payments-core",
    "inventory-sync",
    "admin-console",
    "feature-flags",
    "image-resizer",
    "audit-log",
    "email-relay",
    "ledger",
    "scheduler",
    "geo-lookup",
]
TOOLS = [
    "PostgreSQL",
    "Redis",
    "Kafka",
    "Terraform",
    "Kubernetes",
    "GitHub Actions",
    "Sentry",
    "Grafana",
    "Prometheus",
    "nginx",
    "Celery",
    "pytest",
    "Playwright",
    "Docker Compose",
    "S3",
    "CloudFront",
    "OpenTelemetry",
    "pgbouncer",
    "Vault",
    "Argo CD",
    "webpack",
    "Vite",
    "ruff",
    "mypy",
]
PEOPLE = ["Priya", "Marco", "Lena", "Tomasz", "Aiko", "Sam", "Fatima", "Jonas", "Chen", "Olga"]
ACTIONS = [
    "migrated",
    "rolled back",
    "benchmarked",
    "pinned",
    "deprecated",
    "split",
    "cached",
    "sharded",
    "retried",
    "rate-limited",
    "instrumented",
    "refactored",
    "replaced",
    "documented",
    "load-tested",
]
THINGS = [
    "the connection pool",
    "the retry policy",
    "the nightly backup",
    "the schema migration",
    "the deploy pipeline",
    "the feature flag rollout",
    "the cache invalidation",
    "the webhook handler",
    "the login flow",
    "the CSV export",
    "the search ranking",
    "the queue consumer",
    "the TLS certificates",
    "the staging environment",
    "the error budget",
    "the API pagination",
    "the session timeout",
    "the image upload",
    "the invoice generator",
    "the on-call runbook",
    "the test fixtures",
]
REASONS = [
    "because p95 latency doubled under load",
    "after the outage on the last release",
    "so that retries stay idempotent",
    "to keep the bill under budget",
    "since the vendor dropped support",
    "because tests were flaky on CI",
    "to unblock the mobile release",
    "after a security review",
    "so new hires can set up in one command",
    "because the old approach leaked memory",
]
FOLLOW = [
    "Next step: {person} writes the runbook.",
    "Watch the {tool} dashboard for a week.",
    "Do not revert without asking {person}.",
    "The ticket is linked in the {service} repo.",
    "{person} owns the follow-up.",
    "Revisit this when {tool} ships its next major version.",
    "We measured it twice with {tool}.",
    "The old behaviour stays behind a flag for a month.",
]
FILES = [
    "settings.py",
    "deploy.yaml",
    "Makefile",
    "schema.sql",
    "retry.go",
    "pool.ts",
    "ci.yml",
    "values.yaml",
    "handler.py",
    "README.md",
    "docker-compose.yml",
    "nginx.conf",
]
UNITS = ["ms", "s", "MB", "%", "req/s", "connections", "workers", "retries"]
KINDS = ["decision", "pattern", "tech", "devenv", "progress", "note", "plan", "brief"]


def _sentence(rng: random.Random) -> str:
    shape = rng.randrange(7)
    s, t, p = rng.choice(SERVICES), rng.choice(TOOLS), rng.choice(PEOPLE)
    if shape == 4:
        return f"See ticket {s.upper().split('-')[0]}-{rng.randint(100, 9999)} and {s}/{rng.choice(FILES)}."
    if shape == 5:
        a, b, version = rng.randint(2, 900), rng.randint(2, 900), f"{rng.randint(5, 8)}.{rng.randint(0, 20)}"
        return (
            f"{rng.choice(THINGS).capitalize()} went from {a} to {b} {rng.choice(UNITS)} after {t} {version}."
        )
    if shape == 6:
        return f"{p} and {rng.choice(PEOPLE)} reviewed it; {rng.choice(REASONS)}."
    if shape == 0:
        return f"{p} {rng.choice(ACTIONS)} {rng.choice(THINGS)} in {s} {rng.choice(REASONS)}."
    if shape == 1:
        return f"{s} now uses {t} for {rng.choice(THINGS)[4:]}; {rng.choice(REASONS)}."
    if shape == 2:
        return f"We {rng.choice(ACTIONS)} {rng.choice(THINGS)} of {s} with {t} {rng.choice(REASONS)}."
    return rng.choice(FOLLOW).format(person=p, tool=t, service=s)


def note(rng: random.Random) -> Note:
    """(kind, title, body, tags)."""
    target = int(math.exp(rng.uniform(math.log(MIN_CHARS), math.log(MAX_CHARS))))
    body = _sentence(rng)
    while len(body) < target:
        body += " " + _sentence(rng)
    if len(body) > MAX_CHARS:
        body = body[: body.rfind(" ", 0, MAX_CHARS - 1)].rstrip(",;") + "."
    service, tool = rng.choice(SERVICES), rng.choice(TOOLS)
    title = f"{service}: {rng.choice(THINGS)[4:]}"
    return rng.choice(KINDS), title, body, [service, tool.lower().replace(" ", "-")]


def query(rng: random.Random) -> str:
    shapes = [
        "why did we change {thing} in {service}",
        "how does {service} use {tool}",
        "who owns {thing}",
        "{tool} {thing} latency",
        "what did {person} decide about {thing}",
        "{service} {action} {thing}",
    ]
    return rng.choice(shapes).format(
        thing=rng.choice(THINGS)[4:],
        service=rng.choice(SERVICES),
        tool=rng.choice(TOOLS),
        person=rng.choice(PEOPLE),
        action=rng.choice(ACTIONS),
    )
