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
        # lore's own sign-in token (`lore token create`, the local secret file): lore_ + 32 random bytes
        "lore token": f"lore facts add 'CI signs in with lore_{_b64url(rng.randbytes(32))}'",
        "password in an env file (DB_PASS)": f"DB_HOST=db.internal\nDB_PASS={_password(rng)}\n",
        "PGPASSWORD": f"PGPASSWORD={_leet(rng)} psql -h db.internal -U app app",
        "SECRET_KEY in hex": f"SECRET_KEY={_token(rng, 64, '0123456789abcdef')}",
        "JWT signing key, exported": f"export JWT_SIGNING_KEY={_token(rng, 32, _URLSAFE)}",
        "encryption key in YAML": f"app:\n  encryption_key: {_token(rng, 32)}\n",
        "client secret in JSON": f'{{"client_id": "deploy-bot", "client_secret": "{_leet(rng)}"}}',
        "access key in an INI file": f"[storage]\naccess_key = {_token(rng, 32)}\n",
        "private key in hex": f"WALLET_PRIVATE_KEY=0x{_token(rng, 64, '0123456789abcdef')}",
        "password typed in an env file": "MYSQL_PWD=" + _leet(rng),
        "PASSWORD= with few distinct characters": f"export PASSWORD={_leet(rng)}",
        "bearer token header": f"Authorization: Bearer {_token(rng, 40, _URLSAFE)}",
        "bearer token in curl": f"curl -H 'authorization: bearer {_token(rng, 32)}' https://api.example.test/v1",
        "bearer token in JSON": f'{{"headers": {{"Authorization": "Bearer {_token(rng, 48)}"}}}}',
        "basic auth header": f"Authorization: Basic {_b64('deploy:' + _password(rng))}",
        "netrc entry": f"machine api.example.test login alice password {_password(rng)}",
        "netrc entry over lines": f"machine git.example.test\n  login deploy\n  password {_token(rng, 20)}\n",
        "pgpass line": f"db.example.test:5432:app:alice:{_password(rng)}",
        "aws secret key alone": f"the new IAM one: {_token(rng, 40, _B64)} (rotated)",
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
    "export LORE_TOKEN=$(cat ~/.config/lore/token)",
    'curl -H "Authorization: Bearer $LORE_TOKEN" https://lore.example.test/mcp',
    "PASSWORD_MIN_LENGTH=8 and SECRET_KEY= (empty) in .env.example",
    "machine github.com login alice (the token is in the keychain)",
    "localhost:5432:*:postgres:<password>",
    "The token from `lore token create` starts with lore_ and is shown once.",
]


# --- evasions and look-alikes (docs/reliability.md, Secrets) ---------------------------------------

# One item's fields, as the write paths pass them to `secrets.refuse`: (name, text or list of texts).
Fields = tuple[tuple[str, "str | list[str]"], ...]


def _token(rng: random.Random, n: int, alphabet: str = _ALNUM) -> str:
    """A random token body with a letter and a digit (and both cases when the alphabet has them), as
    practically every real one of that length has."""
    while True:
        value = _r(rng, alphabet, n)
        both = any(c.islower() for c in alphabet) and any(c.isupper() for c in alphabet)
        cased = not both or (any(c.islower() for c in value) and any(c.isupper() for c in value))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value) and cased:
            return value


def _password(rng: random.Random) -> str:
    """What a person picks: a word-like core with digits and a symbol in it, 14-18 characters."""
    core = rng.choice(["Tr", "Bl", "Qu", "Zw", "Kr"]) + _r(rng, "aeiou", 1) + _r(rng, "bdgkmprstvz", 1)
    return (
        core
        + str(rng.randint(10, 99))
        + rng.choice("&!#%*+?@^~")
        + _token(rng, 8, string.ascii_lowercase + string.digits)
    )


def _leet(rng: random.Random) -> str:
    """A word with digits for letters, a word after it and a symbol (`s3cr3tP4ss!`): few distinct
    characters, which the `password=` rule alone took for something other than a password."""
    word = rng.choice(["s3cr3t", "r3s3t", "t3st3r", "s3ss10n", "c0ff33", "b4n4n4"])
    return word + rng.choice(["P4ss", "Pass"]) + rng.choice("!#%*?@")


def _wide(text: str) -> str:
    """Full-width forms (U+FF01..U+FF5E) of printable ASCII: what an IME or a copy from a CJK page gives."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _bold(text: str) -> str:
    """Mathematical bold letters and digits (U+1D400...), which NFKC folds back to ASCII."""
    out = []
    for c in text:
        if "a" <= c <= "z":
            out.append(chr(0x1D41A + ord(c) - ord("a")))
        elif "A" <= c <= "Z":
            out.append(chr(0x1D400 + ord(c) - ord("A")))
        elif "0" <= c <= "9":
            out.append(chr(0x1D7CE + ord(c) - ord("0")))
        else:
            out.append(c)
    return "".join(out)


def _b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


def _wrapped(text: str, width: int = 76) -> str:
    """As `base64` prints it: lines of 76 characters."""
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


def _der_rsa_private_key(rng: random.Random) -> bytes:
    """The shape of a PKCS#1 RSAPrivateKey (SEQUENCE, version 0, a 2048-bit modulus ...), random inside."""
    body = (
        b"\x02\x01\x00\x02\x82\x01\x01\x00"
        + rng.randbytes(256)
        + b"\x02\x03\x01\x00\x01"
        + rng.randbytes(900)
    )
    return b"\x30\x82" + len(body).to_bytes(2, "big") + body


def _der_public_key(rng: random.Random) -> bytes:
    """A SubjectPublicKeyInfo for RSA (public: fine to share), random inside."""
    algorithm = bytes.fromhex("300d06092a864886f70d0101010500")
    key = b"\x03\x82\x01\x0f\x00" + rng.randbytes(270)
    body = algorithm + key
    return b"\x30\x82" + len(body).to_bytes(2, "big") + body


def _der_certificate(rng: random.Random, size: int = 700) -> bytes:
    """The outer shape of an X.509 certificate (SEQUENCE of a SEQUENCE), random inside."""
    inner = rng.randbytes(size)
    tbs = b"\x30\x82" + len(inner).to_bytes(2, "big") + inner
    return b"\x30\x82" + len(tbs).to_bytes(2, "big") + tbs


def _with(text: str, at: int, inserted: str) -> str:
    return text[:at] + inserted + text[at:]


def evasions(seed: int = 11) -> dict[str, Fields]:
    """name -> one item's fields hiding a fake credential from a scanner that matches raw text only.
    Every one of them must be refused."""
    rng = random.Random(seed)
    ghp = "ghp_" + _token(rng, 36)
    gho = "gho_" + _token(rng, 36)
    pat = "github_pat_" + _token(rng, 22) + "_" + _token(rng, 59)
    aws = "AKIA" + _token(rng, 16, _UPPER_DIGITS)
    slack = f"xoxb-{_r(rng, string.digits, 12)}-{_r(rng, string.digits, 13)}-{_token(rng, 24)}"
    openai = "sk-proj-" + _token(rng, 64, _URLSAFE)
    anthropic = "sk-ant-api03-" + _token(rng, 93, _URLSAFE) + "AA"
    stripe = "sk_live_" + _token(rng, 40)
    npm = "npm_" + _token(rng, 36)
    hf = "hf_" + _token(rng, 34)
    pem = _pem(rng, "RSA PRIVATE KEY", 10)
    password = _password(rng)
    ssh_key = b"openssh-key-v1\x00\x00\x00\x00\x04none" + rng.randbytes(300)
    der = _der_rsa_private_key(rng)
    der_pem_body = _wrapped(_b64(der), 64)
    lore = "lore_" + _token(rng, 43, _URLSAFE)
    return {
        "GitHub token, a space inside": (("body", f"CI pushes with {ghp[:20]} {ghp[20:]} nightly"),),
        "GitHub token, a tab inside": (("body", f"token {_with(ghp, 17, chr(9))}"),),
        "GitHub token, a no-break space inside": (("body", _with(ghp, 11, "\u00a0")),),
        "GitHub token, split over two lines": (("body", f"token:\n{ghp[:22]}\n{ghp[22:]}\n"),),
        "GitHub token, in groups of four": (
            ("body", " ".join(ghp[i : i + 4] for i in range(0, len(ghp), 4))),
        ),
        "GitHub token, a space after the prefix": (("statement", f"deploy token ghp_ {ghp[4:]}"),),
        "GitHub token, a zero-width space inside": (("body", _with(ghp, 12, "\u200b")),),
        "GitHub token, a zero-width joiner inside": (("statement", _with(gho, 9, "\u200d")),),
        "GitHub token, a zero-width non-joiner inside": (("body", _with(ghp, 30, "\u200c")),),
        "GitHub token, a word joiner inside": (("body", _with(ghp, 5, "\u2060")),),
        "GitHub token, a BOM inside": (("body", _with(ghp, 20, "\ufeff")),),
        "GitHub token, a soft hyphen inside": (("body", _with(ghp, 25, "\u00ad")),),
        "GitHub token, a right-to-left override inside": (("body", _with(ghp, 8, "\u202e")),),
        "GitHub token, a full-width prefix": (("body", "ｇｈｐ＿" + ghp[4:]),),
        "GitHub token, all full-width": (("statement", f"token {_wide(ghp)}"),),
        "GitHub token, mathematical bold": (("body", _bold(ghp)),),
        "GitHub token, an upper-case prefix": (("body", "GHP_" + ghp[4:]),),
        "GitHub fine-grained token, a space inside": (("body", _with(pat, 40, " ")),),
        "GitHub token, split across title and body": (("title", f"deploy {ghp[:18]}"), ("body", ghp[18:])),
        "GitHub token, split across two tags": (("body", "see tags"), ("tags", ["ci", ghp[:20], ghp[20:]])),
        "AWS key id, lower-case": (("statement", f"deploy uses {aws.lower()} in us-east-1"),),
        "AWS key id, full-width": (("body", f"id {_wide(aws)}"),),
        "AWS key id, a space inside": (("body", f"id {aws[:4]} {aws[4:]}"),),
        "Slack token, a zero-width space inside": (("body", _with(slack, 30, "\u200b")),),
        "OpenAI key, a space inside": (("body", f"OPENAI_API_KEY={_with(openai, 30, ' ')}"),),
        "Anthropic key, a full-width prefix": (("body", _wide("sk-ant-") + anthropic[7:]),),
        "Stripe live key, a space after the prefix": (("body", f"stripe key sk_live_ {stripe[8:]}"),),
        "npm token, a zero-width joiner inside": (("body", _with(npm, 14, "\u200d")),),
        "Hugging Face token, an upper-case prefix": (("body", "HF_" + hf[3:]),),
        "private key block, a zero-width space in its header": (
            ("body", pem.replace("PRIVATE", "PRI\u200bVATE", 1)),
        ),
        "password=, unquoted": (("statement", f"db login: password={password}"),),
        "PASSWORD: in YAML": (("body", f"database:\n  user: app\n  PASSWORD: {password}\n"),),
        "DB_PASSWORD= in an env file": (("body", f"DB_HOST=db.internal\nDB_PASSWORD={password}\n"),),
        "password in JSON, with a symbol": (("body", f'{{"user": "app", "password": "{password}"}}'),),
        "secret= with a random value": (("body", f"secret={_token(rng, 12)}%{_token(rng, 11)}"),),
        "token= in a URL query": (("body", f"https://hooks.example.test/run?token={_token(rng, 32)}"),),
        "base64 of a GitHub token": (("body", f"token (b64): {_b64(ghp)}"),),
        "base64 of an env line with a token": (("body", _b64(f"export GITHUB_TOKEN={ghp}\n")),),
        "url-safe base64 of a Slack token": (("body", base64.urlsafe_b64encode(slack.encode()).decode()),),
        "base64 of base64 of a token": (("body", _b64(_b64(npm))),),
        "base64 of an AWS key id line": (("body", _b64(f"aws_access_key_id = {aws}")),),
        "base64 of a password= line": (("body", _b64(f"password={password}")),),
        "base64 of a PEM private key, wrapped at 76": (("body", _wrapped(_b64(pem))),),
        "a private key's base64 body without its armour": (("body", der_pem_body),),
        "an OpenSSH private key's base64 body without its armour": (("body", _wrapped(_b64(ssh_key), 70)),),
        "GitHub token, a combining acute inside": (("body", _with(ghp, 14, "\u0301")),),
        "GitHub token, a combining mark on every character": (("body", "".join(c + "\u0332" for c in ghp)),),
        "GitHub token, a variation selector inside": (("body", _with(ghp, 22, "\ufe0f")),),
        "GitHub token, a supplementary variation selector inside": (("body", _with(ghp, 9, "\U000e0100")),),
        "GitHub token, an enclosing mark inside": (("statement", _with(gho, 30, "\u20dd")),),
        "GitHub token, full-width with a combining mark": (("body", _with(_wide(ghp), 10, "\u0301")),),
        "AWS key id, a combining grave inside": (("body", f"id {_with(aws, 6, chr(0x300))}"),),
        "lore token, a combining acute inside": (
            ("statement", f"CI signs in with {_with(lore, 20, chr(0x301))}"),
        ),
        "lore token, a space inside": (("body", f"LORE token {_with(lore, 25, ' ')}"),),
    }


def lookalikes(seed: int = 13) -> dict[str, str]:
    """name -> ordinary text that shares a shape with a credential. None of them may be refused."""
    rng = random.Random(seed)
    hexdigits = "0123456789abcdef"
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + rng.randbytes(400)
    gzip = b"\x1f\x8b\x08\x00" + rng.randbytes(300)

    def uuid() -> str:
        parts = (_r(rng, hexdigits, 8), _r(rng, hexdigits, 4), "4" + _r(rng, hexdigits, 3))
        return "-".join((*parts, "a" + _r(rng, hexdigits, 3), _r(rng, hexdigits, 12)))

    def sha(n: int) -> str:
        return _r(rng, hexdigits, n)

    guide = "Deploy guide: run make ship from the repository root, staging first, then production."
    return {
        "a git SHA": f"Fixed in {sha(40)} (see the PR).",
        "short SHAs in prose": f"Reverted {sha(7)} and {sha(7)}; cherry-picked {sha(12)}.",
        "a UUID": f"Request {uuid()} timed out at the gateway.",
        "UUIDs in a table": "\n".join(f"| {i} | {uuid()} |" for i in range(8)),
        "a sha256 digest": f"sha256:{_r(rng, hexdigits, 64)}",
        "an npm integrity hash": f'"integrity": "sha512-{_b64(rng.randbytes(64))}"',
        "a PNG data URI": f"![logo](data:image/png;base64,{_b64(png)})",
        "a gzip blob in base64": f"payload: {_b64(gzip)}",
        "base64 of ordinary prose": f"The guide, encoded: {_b64(guide)}",
        "base64 of a config without secrets": _b64(
            '{"space": "work", "paths": ["~/codes/acme-api"], "max_chars": 8000}'
        ),
        "a public key (PEM)": "-----BEGIN PUBLIC KEY-----\n"
        + _wrapped(_b64(_der_public_key(rng)), 64)
        + "\n-----END PUBLIC KEY-----",
        "a certificate (PEM)": "-----BEGIN CERTIFICATE-----\n"
        + _wrapped(_b64(_der_certificate(rng)), 64)
        + "\n-----END CERTIFICATE-----",
        "prose about passwords": "Choose a strong password (12 characters); rotate the token every 90 days.",
        "a password policy": "The password policy changed on 2024-03-01; passwords expire after 90 days.",
        "password=changeme": "For local dev only: password=changeme",
        "password from the environment": "password=${DB_PASSWORD} and token=$GITHUB_TOKEN",
        "password read in code": "password = os.environ['DB_PASSWORD']\ntoken = get_token(scope='repo')",
        "getpass": "password = getpass.getpass('Password: ')",
        "a placeholder password": "password=<your password>; secret=REDACTED; api_key=None",
        "a CI secret reference": "token: ${{ secrets.GITHUB_TOKEN }}\npassword: ${{ secrets.DB_PASSWORD }}",
        "hunter2": "password: hunter2 (the joke, not a real one)",
        "model parameters": "max_tokens=4096, temperature=0.2, token_budget=12000",
        "nsswitch.conf": "passwd:         files systemd\ngroup:          files systemd",
        "the ghp_ prefix in prose": "GitHub tokens start with ghp_ and those ghp_ tokens are what the "
        "deploy bot uses to push to the release branch every night",
        "sk-learn": "sk- learn is what people type when they mean scikit-learn; the package is scikit-learn",
        "the AKIA prefix in prose": "AKIA marks long-term AWS key ids and ASIA temporary ones; "
        "the Akiapolaau is a Hawaiian bird.",
        "eyJ in prose": "eyJ is how base64 of a JSON object starts.",
        "a long identifier": "def test_lores_own_sources_and_docs_hold_no_findings_at_all() -> None: ...",
        "a long path": "/usr/local/lib/python3.11/site-packages/lore/installers/files.py",
        "accented prose": "Café, déjà vu, naïve résumé: the notes are in French — l’équipe déploie à 18 h.",
        "full-width prose": _wide("deploy with make ship, staging first") + "。",
        "CJK prose with full-width punctuation": "部署使用ｍａｋｅ　ｓｈｉｐ，先预发再生产。测试通过后发布。",
        "emoji with zero-width joiners": "The team: 👨\u200d👩\u200d👧 and 🏳\ufe0f\u200d🌈 in the name.",
        "a word with a soft hyphen": "The de\u00adployment guide is in the wiki.",
        "a Kubernetes secret template": "kind: Secret\ndata:\n  password: <base64 of it>\n  token: ''",
        "a pgpass line format": "host:port:database:username:password, one per line, mode 0600",
        "decomposed accents": "Cafe\u0301, de\u0301ja\u0300 vu, nai\u0308ve re\u0301sume\u0301: "
        "l’e\u0301quipe de\u0301ploie.",
        "emoji with variation selectors": "Status: ✅\ufe0f done, ⚠\ufe0f flaky, ❤\ufe0f thanks, "
        "keycap 1\ufe0f\u20e3.",
        "settings that name secrets but hold none": "PASSWORD_MIN_LENGTH=8\nSECRET_KEY=\nTOKEN_TTL=3600\n"
        "AUTH_BACKEND=django.contrib.auth.backends.ModelBackend\nAPI_KEY_HEADER=X-Api-Key\n"
        "TOKEN_URL=https://auth.example.test/oauth/token\nJWT_ALGORITHM=HS256\nPASSWORD_HASHERS=argon2\n",
        "secret settings from references": "DB_PASS=${DB_PASS}\nexport JWT_SIGNING_KEY=$JWT_KEY\n"
        "ENCRYPTION_KEY=changeme\nAPI_TOKEN=<token>\nCLIENT_SECRET=***\nPRIVATE_KEY=/run/secrets/signing.pem\n"
        "SECRET_KEY=os.environ['SECRET_KEY']\nAUTH_TOKEN=get_token()\nPGPASSWORD=$(cat ~/.pgpw)\n",
        "code that passes a flag": "out = processor.batch_decode(ids, skip_special_tokens=True)[0]",
        "a token digest and ids": f'token_sha256 = "{sha(64)}"\napi_key_id = "{uuid()}"\nbypass: {sha(12)}-x',
        "Authorization headers with placeholders": 'curl -H "Authorization: Bearer $LORE_TOKEN" https://x.test\n'
        "Authorization: Bearer ${LORE_TOKEN}\nAuthorization: Bearer <token>\nAuthorization: Bearer ...\n"
        "Authorization: Bearer lore_…\nauthorization: bearer YOUR_ACCESS_TOKEN\n"
        f"Authorization: Basic {_b64('alice:changeme')}\nAuthorization: Basic <base64 of user:password>",
        "netrc entries without a password": "machine github.com login alice\n"
        "machine gitlab.example.test login bob password $GITLAB_TOKEN\n"
        "Each line reads: machine HOST login USER password PASSWORD.",
        "colon-separated fields": "worker:8000:INFO:uvicorn:started\nat 12:30:45:00:01\n"
        "fe80:0:0:0:abcd and 00:1a:2b:3c:4d:5e\nlocalhost:5432:*:postgres:<password>",
        "a 40-character identifier": "class ThisIsAVeryLongCamelCaseIdentifierName12: ...",
        "base64 of prose, 40 characters": f"b64: {_b64('Staging deploy ran fine today.')}",
        "a certificate whose last line is 40 characters": "-----BEGIN CERTIFICATE-----\n"
        + _wrapped(_b64(_der_certificate(rng, 694)), 64)
        + "\n-----END CERTIFICATE-----",
        "lore_ and a long snake_case name": "lore_session_start_hook_reads_facts_through_psql runs first.",
    }


def prefixed_tokens(seed: int = 17) -> dict[str, tuple[str, str]]:
    """kind -> (prefix, body) of a fake token with a fixed prefix, its body with a digit and both cases
    (as all but a few per cent of real ones: tests/reliability/test_secrets.py, spacing)."""
    rng = random.Random(seed)
    return {
        "GitHub classic": ("ghp_", _token(rng, 36)),
        "GitHub OAuth": ("gho_", _token(rng, 36)),
        "GitHub fine-grained": ("github_pat_", _token(rng, 22) + "_" + _token(rng, 59)),
        "GitLab": ("glpat-", _token(rng, 20, _URLSAFE)),
        "npm": ("npm_", _token(rng, 36)),
        "Hugging Face": ("hf_", _token(rng, 34)),
        "Stripe live": ("sk_live_", _token(rng, 40)),
        "OpenAI project": ("sk-proj-", _token(rng, 64, _URLSAFE)),
        "AWS key id": ("AKIA", _token(rng, 16, _UPPER_DIGITS)),
        "Google API key": ("AIza", _token(rng, 35, _URLSAFE)),
        "lore": ("lore_", _token(rng, 43, _URLSAFE)),
    }
