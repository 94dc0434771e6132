"""Trust round 4's corpus: credential shapes as people paste them (connection strings in every common
form, passwords on command lines, URL-encoded values, the providers the public scanners know), and a
benign corpus that shares their look (commit SHAs, image digests, UUIDs, placeholders, env var names,
integrity hashes, URLs and command lines without credentials). Every value is made at run time from a
seeded generator: no key-shaped literal sits in the repository (tests/reliability/fakes.py says why).
"""

from __future__ import annotations

import base64
import random
import string
from urllib.parse import quote

_UPPER = string.ascii_uppercase
_DIGITS = string.digits
_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_URLSAFE = _ALNUM + "-_"
_BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def r(self, alphabet: str, n: int) -> str:
        """n characters of `alphabet` with, where it has them, a digit, a lower- and an upper-case letter."""
        while True:
            value = "".join(self.rng.choice(alphabet) for _ in range(n))
            wanted = [
                any(c.isdigit() for c in alphabet) and not any(c.isdigit() for c in value),
                any(c.islower() for c in alphabet) and not any(c.islower() for c in value),
                any(c.isupper() for c in alphabet) and not any(c.isupper() for c in value),
            ]
            if n < 6 or not any(wanted):
                return value

    def password(self) -> str:
        """Letters and digits, as people pick them (`Winter2031kq`): no symbol."""
        word = self.rng.choice(["Winter", "Harbor", "Falcon", "Copper", "Meadow", "Orbit"])
        return word + str(self.rng.randint(1990, 2039)) + self.r(string.ascii_lowercase, 2)

    def typed(self) -> str:
        """A password with a symbol in it."""
        return self.password()[:7] + self.rng.choice("!#%*?") + self.r(_ALNUM, 5)


def shapes(seed: int = 41) -> dict[str, str]:
    """name -> a text holding one fake credential of that shape. Each must be refused and redacted."""
    g = _Gen(seed)
    pw, typed = g.password(), g.typed()
    at_pw = g.password()[:5] + "@" + g.r(_ALNUM, 6)
    ghp = "ghp_" + g.r(_ALNUM, 36)
    snowflake = str(g.rng.randint(10**17, 10**18))
    discord = base64.b64encode(snowflake.encode()).decode().rstrip("=")
    return {
        # --- connection strings
        "redis URL, empty user": f"REDIS_URL=redis://:{pw}@cache.internal:6379/0",
        "postgres URL, empty user": f"postgresql://:{pw}@db.internal:5432/app",
        "postgres URL, a raw @ in the password": f"postgres://app:{at_pw}@db.internal/app",
        "mongodb+srv URL": f"mongodb+srv://svc:{pw}@cluster0.example.mongodb.net/app?retryWrites=true",
        "amqp URL": f"amqp://guest2:{pw}@rabbit.internal:5672/vhost",
        "mysql URL": f"mysql://root:{typed}@127.0.0.1:3306/shop",
        "git https URL with a token": f"git clone https://oauth2:{g.r(_ALNUM, 24)}@git.example.test/a/b.git",
        "ftp URL": f"ftp://deploy:{pw}@files.example.test/upload/",
        "jdbc postgres, password in the query": (
            f"jdbc:postgresql://db.internal:5432/app?user=app&password={pw}&ssl=true"
        ),
        "jdbc mysql, password in the query": f"jdbc:mysql://db.internal/shop?user=shop&password={pw}",
        "jdbc sqlserver, semicolons": (
            f"jdbc:sqlserver://sql.internal:1433;databaseName=app;user=app;password={pw};encrypt=true"
        ),
        "jdbc oracle thin, user/password@": f"jdbc:oracle:thin:scott/{pw}@db.internal:1521/ORCL",
        "ODBC, braced password": (
            "Driver={ODBC Driver 18 for SQL Server};Server=tcp:sql.internal,1433;Database=app;"
            f"Uid=app;Pwd={{{typed};x}};Encrypt=yes;"
        ),
        "ODBC, DSN and PWD": f"DSN=prod;UID=report;PWD={pw};",
        "ADO.NET, User ID and Password": f"Data Source=sql01;Initial Catalog=app;User ID=app;Password={pw};",
        "ADO.NET, Password first": f"Password={pw};User ID=app;Server=sql01;Database=app;",
        "libpq, password before host": f"password={pw} host=db.internal dbname=app user=app",
        "libpq, user then password": f"user=app password={pw}",
        "password= with letters and digits": f"db login: password={pw}",
        "PASSWORD: in YAML, letters and digits": f"db:\n  user: app\n  password: {pw}\n",
        "DB_PASSWORD= letters and digits": f"DB_HOST=db.internal\nDB_PASSWORD={pw}\n",
        "PGPASSWORD= letters and digits": f"PGPASSWORD={pw} psql -h db -U app",
        # --- command lines
        "curl -u user:pass": f"curl -u deploy:{pw} https://api.example.test/v1/hooks",
        "curl --user=user:pass": f"curl --user=deploy:{typed} https://api.example.test/",
        "curl -u over two lines": f"curl -sS \\\n  -u admin:{pw} \\\n  https://api.example.test/",
        "wget --password": f"wget --user=deploy --password={pw} https://files.example.test/a.tgz",
        "mysql -pPASS": f"mysql -u root -p{pw} -h db.internal shop",
        "mysqldump -pPASS": f"mysqldump -uroot -p{typed} shop > shop.sql",
        "mysql --password=PASS": f"mysql --password={pw} -u app",
        "sshpass -p": f"sshpass -p {pw} ssh deploy@web01 uptime",
        "sshpass -p quoted": f"sshpass -p '{typed}' scp a.tgz web01:",
        "net use with /user": f"net use Z: \\\\fileserver\\share /user:CORP\\bob {pw}",
        "net use, password before /user": f"net use \\\\fileserver\\share {pw} /user:bob",
        "redis-cli -a": f"redis-cli -h cache.internal -a {pw} ping",
        "docker login -p": f"docker login -u deploy -p {pw} registry.example.test",
        "ldapsearch -w": f"ldapsearch -x -D cn=admin,dc=corp -w {pw} -b dc=corp",
        "smbclient -U user%pass": f"smbclient //fs/share -U bob%{pw}",
        "htpasswd -b": f"htpasswd -b -c .htpasswd admin {pw}",
        "openssl -passout pass:": f"openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:{pw}",
        "sqlplus user/pass@db": f"sqlplus scott/{pw}@ORCL @migrate.sql",
        "mongosh -p": f"mongosh --host db -u admin -p {pw}",
        "--db-password flag": f"./migrate --db-password {pw} --host db",
        # --- encoded
        "URL-encoded token=ghp_": f"https://ci.example.test/hook?x=1&token%3D{ghp}",
        "URL-encoded password": f"https://app.example.test/login?next=%2Fhome%26password%3D{quote(typed)}",
        "double URL-encoded token": f"redirect=%2Fcb%253Ftoken%253D{ghp}",
        "URL query access_token": f"https://api.example.test/v2/me?access_token={g.r(_ALNUM, 40)}",
        # --- providers with prefixes of their own
        "Stripe webhook secret": f"STRIPE_WEBHOOK=whsec_{g.r(_ALNUM, 32)}",
        "Stripe test key": f"sk_test_{g.r(_ALNUM, 24)}",
        "DigitalOcean token": f"dop_v1_{g.r(_HEX, 64)}",
        "Shopify access token": f"shpat_{g.r(_HEX, 32)}",
        "Vault service token": f"VAULT_TOKEN=hvs.{g.r(_URLSAFE, 95)}",
        "Doppler service token": f"dp.st.prd.{g.r(_ALNUM, 43)}",
        "Doppler personal token": f"dp.pt.{g.r(_ALNUM, 43)}",
        "Databricks token": f"dapi{g.r('abcdefgh0123456789', 32)}",
        "Linear API key": f"lin_api_{g.r(_ALNUM, 40)}",
        "Notion token": f"ntn_{g.r(_DIGITS, 11)}{g.r(_ALNUM, 35)}",
        "Atlassian API token": f"ATATT3x{g.r(_URLSAFE, 185)}",
        "Azure AD client secret": f"client_secret: {g.r(_ALNUM, 3)}8Q~{g.r(_ALNUM + '_~.', 34)}",
        "Telegram bot token": f"{g.rng.randint(10**8, 10**9)}:AA{g.r(_URLSAFE, 33)}",
        "Discord bot token": f"{discord}.{g.r(_URLSAFE, 6)}.{g.r(_URLSAFE, 38)}",
        "Twilio API key": f"SK{g.r(_HEX, 32)}",
        "Mailgun API key": f"key-{g.r(_HEX, 32)}",
        "age secret key": f"AGE-SECRET-KEY-1{g.r(_BECH32, 58)}",
        "Terraform Cloud token": f"{g.r(_ALNUM, 14)}.atlasv1.{g.r(_URLSAFE, 67)}",
        "New Relic user key": f"NRAK-{g.r(_UPPER + _DIGITS, 27)}",
        "Grafana service account token": f"glsa_{g.r(_ALNUM, 32)}_{g.r(_HEX, 8)}",
        "Grafana cloud token": f"glc_{g.r(_ALNUM, 60)}",
        "1Password service account token": f"ops_eyJ{g.r(_ALNUM, 260)}",
        "Groq API key": f"gsk_{g.r(_ALNUM, 52)}",
        "xAI API key": f"xai-{g.r(_ALNUM, 80)}",
        "Replicate token": f"r8_{g.r(_ALNUM, 37)}",
        "Postman API key": f"PMAK-{g.r(_HEX, 24)}-{g.r(_HEX, 34)}",
        "FCM server key": f"AAAA{g.r(_URLSAFE, 7)}:APA91b{g.r(_URLSAFE, 134)}",
        "PuTTY private key": (
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\nPublic-Lines: 2\n"
            f"{g.r(_ALNUM, 64)}\n{g.r(_ALNUM, 20)}\nPrivate-Lines: 1\n{g.r(_ALNUM, 44)}\n"
            f"Private-MAC: {g.r(_HEX, 64)}"
        ),
        "Sentry DSN": (
            f"SENTRY_DSN=https://{g.r(_HEX, 32)}@o{g.r(_DIGITS, 6)}.ingest.sentry.io/{g.r(_DIGITS, 7)}"
        ),
        "GitLab deploy token": f"gldt-{g.r(_URLSAFE, 20)}",
        "GitLab runner token": f"glrt-{g.r(_URLSAFE, 20)}",
        "Slack app token": f"xapp-1-A{g.r(_UPPER + _DIGITS, 10)}-{g.r(_DIGITS, 13)}-{g.r(_HEX, 64)}",
        "Heroku token": f"HRKU-AA{g.r(_URLSAFE, 58)}",
        "PlanetScale password": f"pscale_pw_{g.r(_URLSAFE, 43)}",
        "Pulumi token": f"pul-{g.r(_HEX, 40)}",
        "Fly.io token": f"fo1_{g.r(_URLSAFE, 43)}",
        "Docker Hub token": f"dckr_pat_{g.r(_URLSAFE, 27)}",
        "Perplexity key": f"pplx-{g.r(_ALNUM, 48)}",
        "Hugging Face org token": f"api_org_{g.r(string.ascii_letters, 34)}",
        "Dynatrace token": f"dt0c01.{g.r(_UPPER + _DIGITS, 24)}.{g.r(_UPPER + _DIGITS, 64)}",
        "Tailscale key": f"tskey-auth-k{g.r(_ALNUM, 12)}-{g.r(_ALNUM, 30)}",
        "RubyGems token": f"rubygems_{g.r(_HEX, 48)}",
        "Sendinblue key": f"xkeysib-{g.r(_HEX, 64)}-{g.r(_ALNUM, 16)}",
        "Square token": f"sq0atp-{g.r(_URLSAFE, 22)}",
        "Alibaba key id": f"LTAI{g.r(_ALNUM, 20)}",
        "OpenShift token": f"sha256~{g.r(_URLSAFE, 43)}",
        "Discord webhook": (f"https://discord.com/api/webhooks/{snowflake}/{g.r(_URLSAFE, 68)}"),
        "Artifactory key": f"AKCp{g.r(_ALNUM, 69)}",
        "Sentry user token": f"sntryu_{g.r(_HEX, 64)}",
        "Buildkite token": f"bkua_{g.r(_HEX, 40)}",
        "Bitbucket app password": f"ATBB{g.r(_ALNUM, 32)}",
        "LangSmith key": f"lsv2_pt_{g.r(_HEX, 32)}_{g.r(_HEX, 10)}",
    }


def benign(seed: int = 43) -> dict[str, str]:
    """name -> ordinary text that shares a shape with a credential. Each must be stored."""
    g = _Gen(seed)

    def sha(n: int) -> str:
        return g.r(_HEX, n)

    def uuid() -> str:
        return f"{sha(8)}-{sha(4)}-4{sha(3)}-a{sha(3)}-{sha(12)}"

    return {
        "a commit SHA": f"Fixed in {sha(40)}; reverted {sha(7)} first.",
        "a merge line": f"Merge: {sha(7)} {sha(7)}",
        "an image digest": f"image: ghcr.io/acme/api@sha256:{sha(64)}",
        "a docker pull by digest": f"docker pull nginx@sha256:{sha(64)}",
        "a UUID": f"Request {uuid()} failed with 502.",
        "UUIDs in a table": "\n".join(f"| {i} | {uuid()} |" for i in range(5)),
        "an SRI integrity hash": f'<script src="/a.js" integrity="sha384-{g.r(_ALNUM + "+/", 64)}"></script>',
        "a package-lock integrity": f'"integrity": "sha512-{g.r(_ALNUM + "+/", 86)}=="',
        "a go.sum line": f"golang.org/x/net v0.30.0 h1:{g.r(_ALNUM + '+/', 43)}=",
        "a pip hash": f"requests==2.32.3 --hash=sha256:{sha(64)}",
        "a Cargo.lock checksum": f'checksum = "{sha(64)}"',
        "a Git LFS pointer": f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha(64)}\nsize 1234",
        "placeholders": (
            "API_KEY=<your-api-key>\nSTRIPE_WEBHOOK_SECRET=whsec_...\nGITHUB_TOKEN=ghp_xxxxxxxxxxxx"
        ),
        "placeholder URLs": "postgres://user:password@localhost:5432/db and redis://:<password>@host:6379",
        "placeholder connection strings": "Server=myServer;Database=myDB;User Id=myUser;Password=<password>;",
        "placeholder jdbc": "jdbc:postgresql://host:5432/db?user=${DB_USER}&password=${DB_PASSWORD}",
        "placeholder command lines": (
            'mysql -u root -p\ncurl -u $USER:$TOKEN https://x.test\nsshpass -p "$PASS" ssh h'
        ),
        "net use prompting": "net use Z: \\\\fileserver\\share /user:CORP\\bob *",
        "env var names": "Set GITHUB_TOKEN, STRIPE_WEBHOOK_SECRET, DOPPLER_TOKEN and VAULT_TOKEN in CI.",
        "env var references": (
            "export DATABASE_URL=$DATABASE_URL\nPASSWORD_FILE=/run/secrets/db\nTOKEN_TTL=3600"
        ),
        "URLs without credentials": (
            "https://user@git.example.test/a.git, redis://cache.internal:6379/0, "
            "postgresql://localhost/app, jdbc:postgresql://db:5432/app?user=app&ssl=true"
        ),
        "a URL with a port and a path": "http://localhost:8080/api/v1?page=2&sort=desc&token_type=bearer",
        "prose about prefixes": (
            "Stripe webhook secrets start with whsec_, Vault tokens with hvs., Doppler with dp.st., "
            "Linear keys with lin_api_, Grafana with glsa_ and xAI keys with xai-."
        ),
        "package and module names": "pip install xai-sdk groq replicate; import ops_dashboard, gsk_utils",
        "snake_case names with provider prefixes": (
            "lin_api_client = make_client()\nops_eyJ_parser = None\nr8_model = 3"
        ),
        "a DNS AAAA record": "api.example.test. 300 IN AAAA 2001:db8::1",
        "an IPv6 address and a MAC": "fe80::1ff:fe23:4567:890a and 00:1a:2b:3c:4d:5e",
        "keyboard keys": "Press key-a then key-b; the key-value store keeps key-2024 rows.",
        "a cache key with a hash": f"restore key: node-cache-{sha(32)}",
        "SK in prose": "SKU SKATE-2024 and SK-Telecom are not keys.",
        "mysql -P port": "mysql -h db -P 3306 -u app -p app_db",
        "curl -u user only": "curl -u deploy https://api.example.test/  # curl asks for the password",
        "docker run -u uid:gid": "docker run -u 1000:1000 -v $PWD:/src image",
        "a password policy": "Passwords need 12 characters; password=required in the form validator.",
        "password hashing settings": (
            "PASSWORD_HASHERS=argon2\npassword_hash: argon2id\npwd_field2 = form.pwd"
        ),
        "CLI flag in prose": "Pass the --password flag, or --password-stdin to read it from a pipe.",
        "openssl with env and file": (
            "openssl enc -pass env:KEY -in a -out b; openssl rsa -passin file:pw.txt"
        ),
        "a Sentry DSN placeholder": "SENTRY_DSN=https://<key>@o0.ingest.sentry.io/<project>",
        "a webhook URL without a secret": "https://hooks.example.test/services/deploy",
        "base64 of prose": base64.b64encode(b"Deploy to staging first, then production.").decode(),
        "a JWT-like word": "eyJ is how a base64 JSON object starts.",
        "Kubernetes object names": (
            "secret/db-credentials, configmap/app-config-7f9c8d, pod/api-6d5f7c9b8-xk2lp"
        ),
        "percent-encoded prose": "search?q=password%20reset%20policy&lang=en",
        "a percent-encoded path": "/files/My%20Documents/report%202024.pdf",
        "timestamps and versions": "v1.0-rc1 built 2026-12-05T01:02:03Z, build 1.0-beta.3",
        "an AWS ARN": "arn:aws:iam::123456789012:role/deploy and s3://acme-builds/api/",
        "hex colour and numbers": "#1f2937 and 0x7fffffff, 3.14159265358979",
        "a Telegram handle and a time": "Ping @deploy_bot at 12:30:45 or 100200300:ABC",
        "a long identifier": "class AtlassianIntegrationSettingsForDeploymentPipelines: ...",
        "Bearer placeholder": "Authorization: Bearer $TOKEN",
    }
