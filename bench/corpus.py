"""Synthetic but realistic engineering notes (decisions, patterns, dev setup) for load benchmarks.

Deterministic for a seed. Each note is 2-6 sentences (about 40-110 words) drawn from a vocabulary
of services, tools, people and actions, so that keyword and vector search both have real work.
"""

from __future__ import annotations

import random

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
KINDS = ["decision", "pattern", "tech", "devenv", "progress", "note", "plan", "brief"]


def _sentence(rng: random.Random) -> str:
    shape = rng.randrange(4)
    s, t, p = rng.choice(SERVICES), rng.choice(TOOLS), rng.choice(PEOPLE)
    if shape == 0:
        return f"{p} {rng.choice(ACTIONS)} {rng.choice(THINGS)} in {s} {rng.choice(REASONS)}."
    if shape == 1:
        return f"{s} now uses {t} for {rng.choice(THINGS)[4:]}; {rng.choice(REASONS)}."
    if shape == 2:
        return f"We {rng.choice(ACTIONS)} {rng.choice(THINGS)} of {s} with {t} {rng.choice(REASONS)}."
    return rng.choice(FOLLOW).format(person=p, tool=t, service=s)


def note(rng: random.Random) -> tuple[str, str, str, list[str]]:
    """(kind, title, body, tags)."""
    body = " ".join(_sentence(rng) for _ in range(rng.randint(2, 6)))
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
