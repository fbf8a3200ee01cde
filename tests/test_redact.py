"""Secret redaction (agentlog.redact): real secret shapes caught, look-alikes left alone."""

from __future__ import annotations

import base64
import json

import pytest

from agentlog import redact as r

A36 = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"  # 36 alphanumerics
HEX64 = "0123456789abcdef" * 4


def _jwt(header: dict[str, str], payload: dict[str, str]) -> str:
    def part(value: dict[str, str]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part(header)}.{part(payload)}.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"


RSA_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n"
    "aNJx5qJrEnvXv2sGsmkjMTXuX7nE2yYw3d9vQeC8Ss0mUhbTpTr0cL4MJXxwDSeK\n"
    "-----END RSA PRIVATE KEY-----"
)
#: (text holding a secret, the kind found, the secret part).
SECRETS = [
    ("AKIAZ3QWERTY2TYUIOPA", "aws_access_key", "AKIAZ3QWERTY2TYUIOPA"),
    ("ASIAY7HJKLMNBVCXZ2QW", "aws_access_key", "ASIAY7HJKLMNBVCXZ2QW"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Ld92WQk",
        "aws_secret_key",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Ld92WQk",
    ),
    (f"ghp_{A36}", "github_token", f"ghp_{A36}"),
    (f"gho_{A36}", "github_token", f"gho_{A36}"),
    ("github_pat_" + "11ABCDEFG0" + "x" * 72, "github_token", "github_pat_" + "11ABCDEFG0" + "x" * 72),
    ("glpat-Zq8x_Yt5-Wv3Ur2Ts1Qp", "gitlab_token", "glpat-Zq8x_Yt5-Wv3Ur2Ts1Qp"),
    (
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "slack_token",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    (
        "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2",
        "slack_webhook",
        "hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2",
    ),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe_key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("rk_test_51H8abcDEFghiJKLmnoPQRstu", "stripe_key", "rk_test_51H8abcDEFghiJKLmnoPQRstu"),
    ("sk-ant-api03-" + "Ab1_" * 23 + "cdAA", "anthropic_key", "sk-ant-api03-" + "Ab1_" * 23 + "cdAA"),
    ("sk-proj-" + "Xy9-Zw8_" * 20, "openai_key", "sk-proj-" + "Xy9-Zw8_" * 20),
    (
        "sk-abcdefghij0123456789T3BlbkFJklmnopqrst0123456789",
        "openai_key",
        "sk-abcdefghij0123456789T3BlbkFJklmnopqrst0123456789",
    ),
    ("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "google_api_key", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("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", "google_oauth", "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"),
    ("hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "huggingface_token", "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"),
    (f"npm_{A36}", "npm_token", f"npm_{A36}"),
    ("pypi-AgEIcHlwaS5vcmc" + "CJ" * 40, "pypi_token", "pypi-AgEIcHlwaS5vcmc" + "CJ" * 40),
    (
        "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",
        "sendgrid_key",
        "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",
    ),
    (f"dop_v1_{HEX64}", "digitalocean_token", f"dop_v1_{HEX64}"),
    ("AccountKey=" + "Ab+/" * 22, "azure_storage_key", "Ab+/" * 22),
    (
        _jwt({"alg": "HS256", "typ": "JWT"}, {"sub": "1234567890", "name": "Jo"}),
        "jwt",
        _jwt({"alg": "HS256", "typ": "JWT"}, {"sub": "1234567890", "name": "Jo"}),
    ),
    (RSA_KEY, "private_key", RSA_KEY),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n",
        "private_key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    ),
    ("postgres://admin:s3cr3tP4ss@db.internal:5432/app", "url_password", "s3cr3tP4ss"),
    ("https://deploy:gH7!kq2Lz@git.example.org/repo.git", "url_password", "gH7!kq2Lz"),
    ('export DATABASE_PASSWORD="Xk29!pq7zz"', "env_secret", "Xk29!pq7zz"),
    ("STRIPE_SECRET_KEY=abc123def456ghi789", "env_secret", "abc123def456ghi789"),
    ('{"password": "correct-horse-battery"}', "password", "correct-horse-battery"),
    ("client.apiKey = 'q8Zr2Lm5Xw9Tn4Vb'", "password", "q8Zr2Lm5Xw9Tn4Vb"),
    # a quoted token value, as the README lists it (tester14 finding 7)
    ('api_token = "q8Zr2LmN5vX1pQ7sT4wY"', "password", "q8Zr2LmN5vX1pQ7sT4wY"),
    ('{"accessToken": "q8Zr2LmN5vX1pQ7sT4wY"}', "password", "q8Zr2LmN5vX1pQ7sT4wY"),
    ('auth({token: "q8Zr2LmN5vX1pQ7sT4wY"})', "password", "q8Zr2LmN5vX1pQ7sT4wY"),
    # shell and header forms (the tester's list): inside a command line, after a label, in YAML, unquoted
    ("docker run -e DB_PASSWORD=SuperS3cretPw2 pg", "env_secret", "SuperS3cretPw2"),
    ("cd app && OPENAI_API_KEY=abc123def456ghi789 python r.py", "env_secret", "abc123def456ghi789"),
    ("PASSWORD=SuperS3cretPw2", "env_secret", "SuperS3cretPw2"),
    ("CASE: DB_PASSWORD=SuperS3cretPw2", "env_secret", "SuperS3cretPw2"),
    ("GITHUB_TOKEN: abc123def456ghi789", "env_secret", "abc123def456ghi789"),
    ("password=hunter2secret", "password", "hunter2secret"),
    ("password: SuperS3cretPw2", "password", "SuperS3cretPw2"),
    ('curl -H "X-Api-Key: 9f8e7d6c5b4a3210" x', "password", "9f8e7d6c5b4a3210"),
    (
        'curl -H "Authorization: Bearer abcdef0123456789abcdef0123456789" x',
        "bearer_token",
        "abcdef0123456789abcdef0123456789",
    ),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "bearer_token", "dXNlcjpwYXNzd29yZA=="),
]

LOOK_ALIKES = [
    "The AKIA prefix marks an AWS access key id.",
    "AKIAZ3QWERTY2TYU is too short",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "ghp_shorttoken",
    "the task-runner-abcdefghijklmnopqrstuvwxyz0123456789 job",
    "sk-ant-api03-short",
    "https://user@example.com/path",
    "https://example.com:8080/index.html",
    "git@github.com:org/repo.git",
    "API_KEY=${API_KEY}",
    "export GITHUB_TOKEN=$(gh auth token)",
    "PASSWORD=changeme",
    "SECRET_KEY=<your-secret-key>",
    "MAX_TOKENS=12800000",
    '"password": "${DB_PASSWORD}"',
    "password = get_password()",
    '{"input_tokens": 12345, "cache_read_tokens": 678}',
    _jwt({"foo": "bar"}, {"baz": "qux"}),
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n",
    "hf_transfer is a package",
    "AIza prefix",
    "SLACK_BOT_TOKEN=xoxb-your-token",
    "use sk_live_... in production",
    "SG.abc.def",
    "EURASIAPACIFICREGIONS2345",
    "Authorization: Bearer <token>",
    "password: hunter2",
    'api_key: "your-api-key-here"',
    "postgres://user:${PGPASSWORD}@localhost/db",
    # prose and settings the shell and header forms must leave alone
    "the password field is empty",
    "token: 5",
    "password: string",
    "max_tokens: 4096",
    "input_tokens=12345678",
    "token_count: 1a2b3c4d",
    "Bearer authentication is used",
    "use the Bearer token from env",
    "the secret: nothing",
    "api_key: process.env.API_KEY",
    "AUTH_PROVIDER: keycloak",
    "PRIMARY KEY (id)",
    "KEY: value",
    "password: ${DB_PASSWORD}",
    "TOKEN: sha256",
    "export TOKEN_LIMIT=100000000",
    "set the password to something long",
    '{"tokens": "q8Zr2LmN5vX1pQ7sT4wY", "max_tokens": "12800000"}',
    '{"token": "<|endoftext|>", "next": "token: function"}',
]


def test_rule_set_sizes() -> None:
    assert len(SECRETS) >= 20 and len(LOOK_ALIKES) >= 20
    assert len({kind for _, kind, _ in SECRETS}) == len(r.KINDS)


@pytest.mark.parametrize(("text", "kind", "secret"), SECRETS, ids=[k for _, k, _ in SECRETS])
def test_secret_is_caught(text: str, kind: str, secret: str) -> None:
    wrapped = f"see:\n{text}\nnow"
    start = wrapped.index(secret)
    assert r.findings(wrapped) == [r.Finding(kind, start, start + len(secret))]
    assert r.redact(wrapped) == wrapped.replace(secret, f"[REDACTED:{kind}]")


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alike_is_left_alone(text: str) -> None:
    assert r.findings(text) == []
    assert r.redact(text) is text


def test_finding_repr_never_holds_the_secret() -> None:
    text = f"token ghp_{A36}"
    (found,) = r.findings(text)
    assert repr(found) == "Finding(kind='github_token', start=6, end=46)"
    assert found.span == (6, 46)
    assert A36 not in repr(r.findings(text)) and A36 not in str(found)


def test_several_secrets_and_a_name_kept() -> None:
    text = "AWS_ACCESS_KEY_ID=AKIAZ3QWERTY2TYUIOPA\nGITHUB_TOKEN=ghp_" + A36 + "\n"
    assert r.redact(text) == (
        "AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key]\nGITHUB_TOKEN=[REDACTED:github_token]\n"
    )


def test_secret_across_a_chunk_border_found_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(r, "CHUNK", 64)
    monkeypatch.setattr(r, "OVERLAP", 64)
    text = "x " * 30 + f"ghp_{A36}" + " y" * 100 + " AKIAZ3QWERTY2TYUIOPA"
    assert r.redact(text) == "x " * 30 + "[REDACTED:github_token]" + " y" * 100 + " [REDACTED:aws_access_key]"


def test_redact_value_walks_json() -> None:
    value = {
        "cmd": f"curl -H 'Authorization: token ghp_{A36}'",
        "n": 3,
        "args": ["a", "AKIAZ3QWERTY2TYUIOPA"],
    }
    assert r.redact_value(value) == {
        "cmd": "curl -H 'Authorization: token [REDACTED:github_token]'",
        "n": 3,
        "args": ["a", "[REDACTED:aws_access_key]"],
    }
    clean = {"a": ["b", 1], "c": None}
    assert r.redact_value(clean) is clean


def test_redaction_is_idempotent() -> None:
    once = r.redact(" ".join(text for text, _, _ in SECRETS))
    assert r.redact(once) == once
    assert r.findings(once) == []


S, E = "\x02", "\x03"


def test_snippet_marks_kept_and_moved_to_a_redactions_edges() -> None:
    assert (
        r.redact_snippet(f"key {S}AKIAZ3QWERTY2TYUIOPA{E} here", (S, E))
        == f"key {S}[REDACTED:aws_access_key]{E} here"
    )
    assert (
        r.redact_snippet(f"{S}deploy{E} ghp_{A36} {S}now{E}", (S, E))
        == f"{S}deploy{E} [REDACTED:github_token] {S}now{E}"
    )
    plain = f"plain {S}text{E} only"
    assert r.redact_snippet(plain, (S, E)) is plain


def test_snippet_edge_fragment_of_a_cut_secret() -> None:
    text = f"…dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4 pushed {S}token{E} ok AKIAZ3QWERTY2TYUIOPA…"
    assert (
        r.redact_snippet(text, (S, E))
        == f"…[REDACTED:fragment] pushed {S}token{E} ok [REDACTED:aws_access_key]…"
    )
    words = "…version3 of the parser_module_for_json is here…"
    assert r.redact_snippet(words, (S, E)) == words  # 'version3' is short; the long one has no digit


def test_escaped_findings_read_a_json_strings_text() -> None:
    """Tester14 finding 7: a tool input shown as JSON escapes its quotes
    (``db_password = \\"…\\"``); read as what the string holds, the quoted-value rule
    holds there as in plain text, the spans in the escaped text."""
    text = r'{"content":"db_password = \"Tr0ub4dor&3horsebattery\"\napi_token = \"q8Zr2LmN5vX1pQ7sT4wY\"\n"}'
    assert r.findings(text) == []
    found = r.escaped_findings(text)
    assert [(f.kind, text[f.start : f.end]) for f in found] == [
        ("password", "Tr0ub4dor&3horsebattery"),
        ("password", "q8Zr2LmN5vX1pQ7sT4wY"),
    ]
    # a \\ and a \u00e9 escape before a secret: its span is still the escaped text's
    text = r'\\ \u00e9 \"password\": \"correct-horse-battery\", AKIAZ3QWERTY2TYUIOPA'
    assert [(f.kind, text[f.start : f.end]) for f in r.escaped_findings(text)] == [
        ("password", "correct-horse-battery"),
        ("aws_access_key", "AKIAZ3QWERTY2TYUIOPA"),
    ]
    # a finding of the text as it is that reaches past the one read: one span of both
    text = r"password=hunter2secret\nnext"
    assert [(f.kind, text[f.start : f.end]) for f in r.escaped_findings(text)] == [
        ("password", r"hunter2secret\nnext")
    ]
    plain = "no escapes: AKIAZ3QWERTY2TYUIOPA"
    assert r.escaped_findings(plain) == r.findings(plain)


def test_snippet_of_json_text_redacts_escaped_quoted_values() -> None:
    text = f'write {{"content":"{S}db_password{E} = \\"Tr0ub4dor&3horsebattery\\"\\n'
    assert r.redact_snippet(text, (S, E)) == (
        f'write {{"content":"{S}db_password{E} = \\"[REDACTED:password]\\"\\n'
    )
    text = f'\\"{S}password{E}\\": \\"correct-horse-battery\\"}}'
    assert r.redact_snippet(text, (S, E)) == f'\\"{S}password{E}\\": \\"[REDACTED:password]\\"}}'
