"""Realistic FAKE credentials of every kind lore refuses, made at run time from a seeded generator.

Never written into the repository as literals: a key-shaped string in the tree would be flagged by
secret scanners (and by lore's own scan of its sources, tests/reliability/test_secrets.py).
"""

from __future__ import annotations

import base64
import json
import random
import string

_UPPER_DIGITS = string.ascii_uppercase + string.digits
_ALNUM = string.ascii_letters + string.digits
_B64 = string.ascii_letters + string.digits + "+/"
_URLSAFE = string.ascii_letters + string.digits + "-_"


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _pem(rng: random.Random, label: str, lines: int = 6) -> str:
    body = "\n".join(_r(rng, _B64, 64) for _ in range(lines))
    return f"-----BEGIN {label}-----\n{body}\n{_r(rng, _B64, 20)}==\n-----END {label}-----"


def fake_credentials(seed: int = 7) -> dict[str, str]:
    """kind -> a text that holds one fake credential of that kind, as a person might paste it."""
    rng = random.Random(seed)
    secret40 = _r(rng, _B64, 38) + "a1"
    service_account = {
        "type": "service_account",
        "project_id": "demo-project-123",
        "private_key_id": _r(rng, "0123456789abcdef", 40),
        "private_key": _pem(rng, "PRIVATE KEY").replace("\n", "\\n") + "\\n",
        "client_email": "deployer@demo-project-123.iam.gserviceaccount.com",
        "client_id": _r(rng, string.digits, 21),
    }
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": "1234567890", "name": "Demo", "iat": 1700000000}).encode())
    return {
        "aws access key id": f"deploy uses AKIA{_r(rng, _UPPER_DIGITS, 16)} in us-east-1",
        "aws session key id": f"temporary creds: ASIA{_r(rng, _UPPER_DIGITS, 16)}",
        "aws secret": f"aws_secret_access_key = {secret40}",
        "gcp service account": json.dumps(service_account, indent=2),
        "google api key": f"maps key AIza{_r(rng, _URLSAFE, 35)}",
        "azure storage": (
            "DefaultEndpointsProtocol=https;AccountName=demostore;"
            f"AccountKey={_r(rng, _B64, 86)}==;EndpointSuffix=core.windows.net"
        ),
        "azure service bus": (
            "Endpoint=sb://demo.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
            f"SharedAccessKey={_r(rng, _B64, 43)}="
        ),
        "github classic": f"export GITHUB_TOKEN=ghp_{_r(rng, _ALNUM, 36)}",
        "github oauth": f"gho_{_r(rng, _ALNUM, 36)}",
        "github fine-grained": f"github_pat_{_r(rng, _ALNUM, 22)}_{_r(rng, _ALNUM, 59)}",
        "slack bot": f"SLACK_BOT_TOKEN=xoxb-{_r(rng, string.digits, 12)}-{_r(rng, string.digits, 13)}-"
        f"{_r(rng, _ALNUM, 24)}",
        "slack user": f"xoxp-{_r(rng, string.digits, 12)}-{_r(rng, string.digits, 12)}-"
        f"{_r(rng, string.digits, 13)}-{_r(rng, 'abcdef0123456789', 32)}",
        "openai legacy": f"OPENAI_API_KEY=sk-{_r(rng, _ALNUM, 20)}T3BlbkFJ{_r(rng, _ALNUM, 20)}",
        "openai project": f"sk-proj-{_r(rng, _URLSAFE, 156)}",
        "anthropic": f"ANTHROPIC_API_KEY=sk-ant-api03-{_r(rng, _URLSAFE, 93)}AA",
        "stripe live": f"stripe.api_key = 'sk_live_{_r(rng, _ALNUM, 99)}'",
        "stripe restricted": f"rk_live_{_r(rng, _ALNUM, 24)}",
        "npm token": f"npm_{_r(rng, _ALNUM, 36)}",
        "npmrc auth": f"//npm.example.test/:_authToken={_r(rng, 'abcdef0123456789', 8)}-"
        f"{_r(rng, 'abcdef0123456789', 4)}-{_r(rng, 'abcdef0123456789', 12)}",
        "pypi token": f"password = pypi-AgEIcHlwaS5vcmc{_r(rng, _URLSAFE, 120)}",
        "rsa private key": _pem(rng, "RSA PRIVATE KEY", 10),
        "openssh private key": _pem(rng, "OPENSSH PRIVATE KEY", 7),
        "ec private key": _pem(rng, "EC PRIVATE KEY", 3),
        "postgres url": f"DATABASE_URL=postgres://app:{_r(rng, _ALNUM, 18)}@db.internal:5432/prod",
        "mongodb url": f"mongodb+srv://admin:{_r(rng, _ALNUM, 14)}@cluster0.abcde.mongodb.net/app",
        "redis url": f"redis://default:{_r(rng, _ALNUM, 24)}@cache.internal:6379/0",
        "sql server": (
            "Server=tcp:demo.database.windows.net,1433;Initial Catalog=app;User ID=admin;"
            f"Password={_r(rng, _ALNUM, 16)}!;Encrypt=True;"
        ),
        "libpq": f"host=db.internal port=5432 dbname=app user=app password={_r(rng, _ALNUM, 16)}",
        "jwt": f"Authorization: Bearer {header}.{payload}.{_r(rng, _URLSAFE, 43)}",
        "hugging face": f"hf_{_r(rng, _ALNUM, 34)}",
        "gitlab": f"glpat-{_r(rng, _URLSAFE, 20)}",
        "assigned secret": f'client_secret = "{_r(rng, _ALNUM, 40)}"',
    }


ORDINARY = [
    "acme-api deploys with `make ship`; staging first, then prod after the smoke tests pass.",
    "The session-start hook reads facts through psql; budget 8,000 characters.",
    "Use PostgreSQL 18 with pgvector; the HNSW index is per embedding model.",
    "Commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed the flaky test.",
    "Request id 0b6f2c8e-3d4a-4f5b-9c6d-7e8f9a0b1c2d failed with a 502 from the gateway.",
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "Connect with postgresql://postgres@/lore?host=/tmp/lore-run (unix socket, no password).",
    "The docs example is postgresql://user:password@localhost:5432/app; replace both.",
    "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
    "mysql://root:<password>@127.0.0.1/test",
    "api_key = os.environ['OPENAI_API_KEY']  # never hard-code it",
    'password = "changeme"  # local dev only',
    "token: ${{ secrets.GITHUB_TOKEN }}",
    'headers = {"Authorization": f"Bearer {token}"}',
    "GitHub classic tokens start with ghp_ and fine-grained ones with github_pat_.",
    "AWS access key ids look like AKIA followed by sixteen characters.",
    "Run scikit-learn (sk-learn) and the task-runner-for-batch-jobs-in-production-systems.",
    "Set ANTHROPIC_API_KEY in your shell; lore never reads it.",
    "-----BEGIN PUBLIC KEY----- blocks are fine to share; private ones are not.",
    "The PEM file starts with -----BEGIN RSA PRIVATE KEY----- (do not paste it here).",
    "def rotate(secret_key: str) -> None:\n    self.secret_key = secret_key\n",
    "const token = await getToken({ audience: 'api' });",
    "xoxb tokens are for bots; request the scope chat:write.",
    "eyJ is how base64 of a JSON object starts.",
    "Password=;Server=localhost (empty password, local dev)",
    "Write the key to ~/.aws/credentials with `aws configure`, never into memory.",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "The cache key is user:42:profile and the TTL 3600 s.",
    "https://example.com/path?query=1&sort=desc#section",
    "git@github.com:acme/api.git and https://github.com/acme/api",
    "Build id: 2026-11-03T10:22:31Z-7f3c; artifacts in s3://acme-builds/api/",
    'SECRET_KEY = get_random_secret_key()\nDEBUG = False\nALLOWED_HOSTS = ["api.acme.test"]',
    "The user:pass@host form in URLs is deprecated; use a .pgpass file.",
]
