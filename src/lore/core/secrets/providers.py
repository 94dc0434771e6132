"""Credentials a provider issues with a prefix of its own: each rule is the prefix, the body's alphabet
and its length as the provider issues them.

Sources, for the prefixes and lengths (facts; the rules are lore's own): the providers' documentation,
and the public scanners' default rule sets, gitleaks' `config/gitleaks.toml` (as of July 2026) and
trufflehog's `pkg/detectors/` (Groq, xAI, Replicate, Doppler, Telegram, Discord). A provider whose
token has no prefix of its own (a hex string next to the provider's name) is left to the assignment
and setting rules of `rules`: lore does not guess from a name alone.
"""

from __future__ import annotations

from collections.abc import Callable

from lore.core.secrets import judge
from lore.core.secrets.rule import ALNUM, ID, B, E, Rule, rule, token, token_rule

_HEX = "0-9a-fA-F"


def _plain(
    kind: str,
    prefixes: list[str],
    body: str,
    *,
    spacing: bool = False,
    alphabet: str = ID,
    shortest: int = 16,
    accept: Callable[[str], bool] | None = judge.mixed,
) -> Rule:
    """A prefixed token as issued (case kept), tried with spacing inside only when `spacing` (a prefix
    distinctive enough to start the spacing pass from)."""
    return token_rule(
        kind, prefixes, body, alphabet=alphabet, shortest=shortest, fold=False, accept=accept, spacing=spacing
    )


# The tokens lore knew before Trust round 4 (also tried with spacing taken out, and their prefixes in
# either case where the provider's own tools accept that).
KNOWN: tuple[Rule, ...] = (
    token_rule("Google API key", ["AIza"], r"[0-9A-Za-z_\-]{35}", alphabet=ID, shortest=35, fold=False),
    token_rule(
        "AWS access key id",
        ["AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA"],
        r"[A-Za-z0-9]{16}",
        alphabet=ALNUM,
        shortest=16,
        accept=judge.aws_key_id,
    ),
    rule(
        "AWS secret access key",
        r"(?i:aws)?_?(?i:secret)_?(?i:access)?_?(?i:key)[\"']?\s*[:=]\s*[\"']?(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        ("secret",),
        "v",
        judge.mixed,
    ),
    rule(
        "Azure connection string",
        r"(?i:AccountKey|SharedAccessKey)\s*=\s*(?P<v>[A-Za-z0-9+/]{20,}={0,2})",
        ("accountkey", "sharedaccesskey"),
        "v",
        judge.mixed,
    ),
    rule(
        "Azure SAS signature",
        r"[?&]sv=\d{4}-\d{2}-\d{2}&[^\s\"']*?sig=(?P<v>[A-Za-z0-9%+/=]{20,})",
        ("sig=",),
        "v",
    ),
    token_rule(
        "GitHub token",
        ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"[A-Za-z0-9]{36,255}",
        alphabet=ALNUM,
        shortest=36,
    ),
    token_rule("GitHub token", ["github_pat_"], r"[A-Za-z0-9_]{50,255}", alphabet=ALNUM + "_", shortest=50),
    token_rule("GitLab token", ["glpat-"], r"[A-Za-z0-9_\-]{20,}", alphabet=ID, shortest=20),
    token_rule(
        "lore token", ["lore_"], r"[A-Za-z0-9_\-]{43}(?!-)", alphabet=ID, shortest=43, accept=judge.lore_token
    ),
    token_rule(
        "Slack token",
        [f"xox{c}-" for c in "abposre"],
        r"(?:[0-9]+-)*[A-Za-z0-9\-]{10,}",
        alphabet=ALNUM + r"\-",
        shortest=10,
        accept=judge.mixed,
    ),
    rule(
        "Slack webhook URL",
        r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}",
        ("hooks.slack.com",),
    ),
    token_rule("Anthropic API key", ["sk-ant-"], r"[a-z0-9]+-[A-Za-z0-9_\-]{32,}", alphabet=ID, shortest=34),
    token_rule(
        "OpenAI API key",
        ["sk-"],
        r"(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{32,}",
        alphabet=ID,
        shortest=32,
        fold=False,
        accept=judge.mixed,
    ),
    token_rule("Stripe live key", ["sk_live_", "rk_live_"], r"[A-Za-z0-9]{16,}", alphabet=ALNUM, shortest=16),
    token_rule("npm token", ["npm_"], r"[A-Za-z0-9]{36}", alphabet=ALNUM, shortest=36),
    rule(
        "npm auth token",
        r"_authToken\s*=\s*(?P<v>[^\s\"'$]{16,})",
        ("_authtoken",),
        "v",
        lambda v: not judge.placeholder(v),
    ),
    token_rule("PyPI token", ["pypi-"], r"AgE[A-Za-z0-9_\-]{50,}", alphabet=ID, shortest=53),
    token_rule(
        "Hugging Face token", ["hf_"], r"[A-Za-z0-9]{34,}", alphabet=ALNUM, shortest=34, accept=judge.mixed
    ),
    token_rule(
        "SendGrid API key",
        ["SG."],
        r"[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
        alphabet=ID + ".",
        shortest=66,
        fold=False,
    ),
)

# Trust round 4: the prefixes the public scanners' default rule sets know. Grouped by prefix width (a
# `token` pattern looks behind a fixed width). Bodies are exact where the provider's length is fixed.
PREFIXED: tuple[Rule, ...] = (
    # payments and commerce
    _plain("Stripe webhook secret", ["whsec_"], r"[A-Za-z0-9]{32,64}", spacing=True, shortest=32),
    _plain("Stripe key", ["sk_test_", "rk_test_", "sk_prod_", "rk_prod_"], r"[A-Za-z0-9]{16,99}"),
    _plain("Shopify token", ["shpat_", "shpca_", "shppa_", "shpss_"], rf"[{_HEX}]{{32}}", spacing=True),
    _plain("Square token", ["sq0atp-", "sq0csp-"], r"[A-Za-z0-9_\-]{22,60}"),
    _plain("Shippo token", ["shippo_live_", "shippo_test_"], rf"[{_HEX}]{{40}}"),
    _plain("Flutterwave secret key", ["FLWSECK_TEST-", "FLWSECK-LIVE-"], r"[a-h0-9]{32}-X"),
    _plain("Duffel token", ["duffel_test_", "duffel_live_"], r"[A-Za-z0-9_\-=]{43}"),
    _plain("EasyPost key", ["EZAK", "EZTK"], r"[A-Za-z0-9]{54}"),
    # cloud and infrastructure
    _plain(
        "DigitalOcean token", ["dop_v1_", "doo_v1_", "dor_v1_"], rf"[{_HEX}]{{64}}", spacing=True, shortest=64
    ),
    _plain("HashiCorp Vault token", ["hvs."], r"[A-Za-z0-9_\-]{90,120}", spacing=True, shortest=90),
    _plain("HashiCorp Vault token", ["hvb."], r"[A-Za-z0-9_\-]{138,300}"),
    _plain("Pulumi token", ["pul-"], rf"[{_HEX}]{{40}}"),
    _plain(
        "Doppler token",
        ["dp.pt.", "dp.st.", "dp.sa.", "dp.ct."],
        r"(?:[a-z0-9_\-]{1,40}\.)?[A-Za-z0-9]{40,44}",
    ),
    _plain("Doppler token", ["dp.scim."], r"[A-Za-z0-9]{40,44}"),
    _plain("Doppler token", ["dp.audit."], r"[A-Za-z0-9]{40,44}"),
    _plain("Databricks token", ["dapi"], r"[a-h0-9]{32}(?:-\d)?"),
    _plain("Heroku token", ["HRKU-AA"], r"[0-9A-Za-z_\-]{58}"),
    _plain("Fly.io token", ["fo1_"], r"[A-Za-z0-9_\-]{43}"),
    _plain("Fly.io token", ["fm2_"], r"[A-Za-z0-9+/]{100,}={0,3}"),
    _plain("Fly.io token", ["fm1a_", "fm1r_"], r"[A-Za-z0-9+/]{100,}={0,3}"),
    _plain("PlanetScale token", ["pscale_tkn_"], r"[A-Za-z0-9_=.\-]{32,64}"),
    _plain("PlanetScale token", ["pscale_pw_"], r"[A-Za-z0-9_=.\-]{32,64}"),
    _plain("PlanetScale token", ["pscale_oauth_"], r"[A-Za-z0-9_=.\-]{32,64}"),
    _plain("Scalingo token", ["tk-us-"], r"[A-Za-z0-9_\-]{48}"),
    _plain("Alibaba Cloud access key id", ["LTAI"], r"[A-Za-z0-9]{20}"),
    _plain("Cloudflare Origin CA key", ["v1.0-"], rf"[{_HEX}]{{24}}-[{_HEX}]{{146}}"),
    _plain("Tailscale key", ["tskey-"], r"(?:api|auth|client|webhook|scim)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}"),
    _plain("AWS Bedrock API key", ["ABSK"], r"[A-Za-z0-9+/]{109,269}={0,2}"),
    _plain("Dynatrace token", ["dt0c01."], r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    _plain("Octopus Deploy key", ["API-"], r"[A-Z0-9]{26}"),
    _plain("Infracost token", ["ico-"], r"[A-Za-z0-9]{32}"),
    _plain("OpenShift token", ["sha256~"], r"[A-Za-z0-9_\-]{43}"),
    _plain("Render API key", ["rnd_"], r"[A-Za-z0-9]{32,}"),
    _plain("Netlify token", ["nfp_"], r"[A-Za-z0-9]{36,}"),
    _plain("Supabase token", ["sbp_"], r"[a-f0-9]{40}"),
    _plain("Supabase secret key", ["sb_secret_"], r"[A-Za-z0-9_\-]{20,}"),
    _plain("Docker Hub token", ["dckr_pat_", "dckr_oat_"], r"[A-Za-z0-9_\-]{27,}"),
    # code, CI and packages
    _plain(
        "GitLab token",
        ["gldt-", "glrt-", "glft-"],
        r"[0-9A-Za-z_\-]{20,}",
    ),
    _plain("GitLab token", ["glptt-"], rf"[{_HEX}]{{40}}"),
    _plain("GitLab token", ["glsoat-", "glffct-"], r"[0-9A-Za-z_\-]{20,}"),
    _plain("GitLab token", ["glimt-"], r"[0-9A-Za-z_\-]{25}"),
    _plain("GitLab token", ["glagent-"], r"[0-9A-Za-z_\-]{50}"),
    _plain("GitLab token", ["gloas-"], r"[0-9A-Za-z_\-]{64}"),
    _plain("GitLab token", ["glcbt-"], r"[0-9A-Za-z]{1,5}_[0-9A-Za-z_\-]{20}"),
    _plain("GitLab runner registration token", ["GR1348941"], r"[A-Za-z0-9_\-]{20}"),
    _plain("Atlassian API token", ["ATATT3"], r"[A-Za-z0-9_\-=]{180,200}", spacing=True, shortest=180),
    _plain("Bitbucket app password", ["ATBB"], r"[A-Za-z0-9]{32}"),
    _plain("Buildkite token", ["bkua_"], rf"[{_HEX}]{{40}}"),
    _plain("CircleCI token", ["CCIPAT_"], rf"[A-Za-z0-9]{{22}}_[{_HEX}]{{40}}"),
    _plain("RubyGems token", ["rubygems_"], rf"[{_HEX}]{{48}}"),
    _plain("Clojars token", ["CLOJARS_"], r"[A-Za-z0-9]{60}"),
    _plain("Artifactory API key", ["AKCp"], r"[A-Za-z0-9]{69}"),
    _plain("Postman API key", ["PMAK-"], rf"[{_HEX}]{{24}}-[{_HEX}]{{34}}", spacing=True, shortest=59),
    _plain("ReadMe API key", ["rdme_"], r"[a-z0-9]{70}"),
    _plain("Prefect API key", ["pnu_"], r"[A-Za-z0-9]{36}"),
    _plain("SonarQube token", ["squ_", "sqp_", "sqa_"], rf"[{_HEX}]{{40}}"),
    _plain("Sourcegraph token", ["sgp_"], rf"(?:[{_HEX}]{{16}}_)?[{_HEX}]{{40}}"),
    # productivity and messaging
    _plain("Linear API key", ["lin_api_"], r"[A-Za-z0-9]{40}", spacing=True, shortest=40),
    _plain("Notion token", ["ntn_"], r"[0-9]{11}[A-Za-z0-9]{35}", spacing=True, shortest=46),
    _plain("Slack app token", ["xapp-"], r"\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    _plain("Figma token", ["figd_"], r"[A-Za-z0-9_\-]{40,}"),
    _plain("Airtable token", ["pat"], r"[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    _plain("ClickUp token", ["pk_"], r"\d+_[A-Z0-9]{32}"),
    _plain("Typeform token", ["tfp_"], r"[A-Za-z0-9_\-.=]{59}"),
    _plain("Frame.io token", ["fio-u-"], r"[A-Za-z0-9_\-=]{64}"),
    _plain("Brevo API key", ["xkeysib-"], rf"[{_HEX}]{{64}}-[A-Za-z0-9]{{16}}"),
    _plain("Twilio API key", ["SK"], rf"[{_HEX}]{{32}}", accept=judge.random_body),
    _plain("Mapbox secret token", ["sk.eyJ"], r"[A-Za-z0-9_\-]{50,}\.[A-Za-z0-9_\-]{20,}"),
    _plain("Adobe client secret", ["p8e-"], r"[A-Za-z0-9]{32}"),
    # observability
    _plain("New Relic key", ["NRAK-"], r"[A-Z0-9]{27}", spacing=True, shortest=27),
    _plain("New Relic key", ["NRII-"], r"[A-Za-z0-9\-]{32}"),
    _plain("New Relic key", ["NRJS-"], rf"[{_HEX}]{{19}}"),
    _plain("Grafana token", ["glsa_"], rf"[A-Za-z0-9]{{32}}_[{_HEX}]{{8}}", spacing=True, shortest=41),
    _plain("Grafana token", ["glc_"], r"[A-Za-z0-9+/]{32,400}={0,3}"),
    _plain("Sentry token", ["sntrys_"], r"eyJ[A-Za-z0-9+/=_]{60,}"),
    _plain("Sentry token", ["sntryu_"], rf"[{_HEX}]{{64}}"),
    # secret managers
    _plain("1Password service account token", ["ops_eyJ"], r"[A-Za-z0-9+/]{250,}={0,3}"),
    _plain(
        "1Password secret key",
        ["A3-"],
        r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
    ),
    _plain(
        "age secret key",
        ["AGE-SECRET-KEY-1"],
        r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        alphabet="QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
        shortest=58,
        spacing=True,
    ),
    # AI providers
    _plain("Groq API key", ["gsk_"], r"[A-Za-z0-9]{52}", spacing=True, shortest=52),
    _plain("xAI API key", ["xai-"], r"[A-Za-z0-9_]{80}", spacing=True, shortest=80),
    _plain("Replicate token", ["r8_"], r"[A-Za-z0-9_\-]{37}", spacing=True, shortest=37),
    _plain("Perplexity API key", ["pplx-"], r"[A-Za-z0-9]{48}"),
    _plain("LangSmith key", ["lsv2_pt_", "lsv2_sk_"], rf"[{_HEX}]{{32}}_[{_HEX}]{{10}}"),
    _plain("Hugging Face token", ["api_org_"], r"[A-Za-z]{34}", accept=None),
    # social
    _plain("Facebook access token", ["EAAM", "EAAC"], r"[A-Za-z0-9]{100,}"),
)

# Tokens whose shape is not a prefix: a bot id and a secret, a secret with a marker inside, a URL.
SHAPED: tuple[Rule, ...] = (
    rule(
        "Telegram bot token",
        B + r"[0-9]{5,16}:A[A-Za-z0-9_\-]{34}" + E,
        (":a",),
        accept=judge.mixed,
    ),
    rule(
        "Discord bot token",
        B + r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,40}" + E,
        (".",),
        check=judge.discord_token,
        gate=r"[MNO][A-Za-z0-9_\-]{23,27}\.",
    ),
    rule(
        "Azure AD client secret",
        r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
        ("q~",),
    ),
    rule(
        "Firebase Cloud Messaging server key",
        B + r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{120,160}" + E,
        ("apa91b",),
    ),
    rule("Terraform Cloud token", B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,70}", ("atlasv1",)),
    rule("MaxMind license key", B + r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk" + E, ("_mmk",)),
    # `key-` alone is common (`cache-key-<md5>`): a Mailgun key is never part of a longer name.
    rule("Mailgun API key", r"(?<![A-Za-z0-9_.\-])key-[a-f0-9]{32}" + E, ("key-",), accept=judge.mixed),
    rule(
        "Harness token",
        token(["pat.", "sat."], r"[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", fold=False),
        ("pat.", "sat."),
    ),
    rule(
        "Twitter bearer token",
        B + r"A{22}[A-Za-z0-9%]{80,100}" + E,
        ("aaaaaaaaaaaaaaaaaaaaaa",),
    ),
    rule(
        "Discord webhook URL",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{17,20}/[A-Za-z0-9_\-]{60,80}",
        ("discord",),
    ),
    rule(
        "Microsoft Teams webhook URL",
        r"https://[a-z0-9\-]+\.webhook\.office\.com/webhookb2/[a-f0-9\-]{36}@[a-f0-9\-]{36}"
        r"/IncomingWebhook/[a-f0-9]{32}/[a-f0-9\-]{36}",
        ("webhook.office.com",),
    ),
    rule(
        "Sentry DSN",
        r"https?://(?P<v>[0-9a-f]{32})(?::[0-9a-f]{32})?@[A-Za-z0-9.\-]+(?::\d{1,5})?/\d+(?![\w/])",
        ("@",),
        "v",
    ),
    rule(
        "Plaid token",
        r"access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        ("access-",),
    ),
)
