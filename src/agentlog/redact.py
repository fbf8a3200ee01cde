"""Secret redaction: find API keys, tokens, private keys and passwords in text.

:func:`findings` lists what a text holds (a kind and a span, never the secret);
:func:`redact` replaces each secret with ``[REDACTED:<kind>]``;
:func:`redact_value` does so in every string of a JSON-like value.

The rule shapes follow the two maintained rule sets for secret scanning,
gitleaks' ``config/gitleaks.toml`` (rule ids named on each rule below) and
Yelp's detect-secrets plugins, and the providers' documented token formats.
Neither engine is used as is: detect-secrets scans line by line with every
plugin (0.09 MB/s on transcript text here) and gitleaks' rules are written for
Go's linear-time RE2, so under Python's backtracking ``re`` they ran at
0.17 MB/s.  Each rule here is instead anchored on literal keywords: a chunk is
matched against a rule only when one of its keywords occurs in it (gitleaks'
keyword pre-filter), so text with no secret costs a few substring searches.

Text is scanned in chunks of :data:`CHUNK` characters that overlap by
:data:`OVERLAP` (longer than any secret but a private key's body, whose match
is bounded by the same figure), so a secret across a chunk border is found once.

Where only part of a match is secret (the value of ``NAME=value``, the password
of ``scheme://user:password@host``) only that part is replaced, so a redacted
text still says which variable or host it was.  Values that are placeholders
(``${VAR}``, ``<token>``, ``changeme``, ``xxxx``…) are left alone.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

CHUNK = 1 << 20
"""Characters scanned at once (1 MiB of text)."""
OVERLAP = 8192
"""Characters two chunks share: every secret shape is shorter (a private key is cut here)."""


class Finding(msgspec.Struct, frozen=True):
    """A secret in a text: its ``kind`` (e.g. ``aws_access_key``) and the span
    ``start``…``end`` (character offsets, end exclusive) it covers.  Holds no
    part of the secret, so its repr and JSON are safe to print."""

    kind: str
    start: int
    end: int

    @property
    def span(self) -> tuple[int, int]:
        """``(start, end)``."""
        return (self.start, self.end)


def marker(kind: str) -> str:
    """The text that replaces a secret of ``kind``: ``[REDACTED:<kind>]``."""
    return f"[REDACTED:{kind}]"


MARKERS = re.compile(r"\[REDACTED:[\w.-]{1,48}\]")
"""A :func:`marker` as a text holds it (one this module made, or one the log itself
holds: an agent's own redaction, pasted output); at most :data:`MARKER_CHARS` long."""
MARKER_CHARS = 59


_PLACEHOLDER = re.compile(
    r"""(?ix)
    ^(?:
        \$\{?[a-z_][a-z0-9_]*\}? | \{\{.*\}\} | <[^>]*> | %\(?[a-z_]*\)?s | \[redacted[^\]]*\]
      | (?:x+|\*+|\.+|-+|_+|0+|\#+)
      | (?:my|sample|fake|test|insert)[-_a-z0-9]*
      | .*(?:your[-_]|example|placeholder|redacted|changeme|dummy).*
      | [-_a-z0-9]*here | [0-9.,_]+
      | password | passwd | secret | changeme | none | null | true | false | undefined | string
      | \*{3,}[^*]* | [a-z]+\(.*\)?
    )$""",
)


def _real_value(value: str) -> bool:
    """Not a placeholder, a variable reference, a function call or one repeated character."""
    return not _PLACEHOLDER.match(value) and len(set(value)) > 3


def _jwt_valid(token: str) -> bool:
    """Its header decodes (base64url) to a JSON object naming ``alg`` or ``typ`` (RFC 7519 §5)."""
    head = token.split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (binascii.Error, ValueError):
        return False
    return isinstance(decoded, dict) and ("alg" in decoded or "typ" in decoded)


class _Rule:
    """One secret shape: ``kind``; the literal ``keywords`` at which a match
    starts (or, when ``word`` is a set of characters, inside the run of them
    the match starts at: a keyword inside a variable's name); the ``pattern``
    tried there, whose first matched group of ``group`` is the secret; and an
    optional ``check`` of that secret.  Case-insensitive rules list each
    spelling of a keyword they expect (``passw``, ``Passw``, ``PASSW``)."""

    __slots__ = ("_compiled", "_source", "check", "groups", "keywords", "kind", "word")

    def __init__(
        self,
        kind: str,
        keywords: tuple[str, ...],
        pattern: str,
        *,
        group: int | tuple[int, ...] = 0,
        word: frozenset[str] | None = None,
        check: Callable[[str], bool] | None = None,
    ) -> None:
        self.kind = kind
        self.keywords = keywords
        self._source = pattern
        self._compiled: re.Pattern[str] | None = None
        self.groups = group if isinstance(group, tuple) else (group,)
        self.word = word
        self.check = check

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern (compiled on first use: a listing that redacts
        a few folder names pays for the rules their keywords reach, not all)."""
        if self._compiled is None:
            self._compiled = re.compile(self._source)
        return self._compiled

    def start(self, text: str, at: int) -> int:
        """Where a match through the keyword at ``at`` starts: ``at``, or the
        start of the run of :attr:`word` characters holding it (at most
        :data:`NAME_CHARS` back; -1 when the run is longer: not a name)."""
        if self.word is None:
            return at
        start = at
        while start > 0 and text[start - 1] in self.word:
            start -= 1
            if at - start > NAME_CHARS:
                return -1
        return start

    def secret(self, match: re.Match[str]) -> tuple[int, int]:
        """The span of the secret in ``match``: its first group that matched."""
        for g in self.groups:
            if match.start(g) >= 0:
                return match.span(g)
        return (0, 0)


NAME_CHARS = 64
"""The longest variable name before a keyword inside it (``…_API_KEY``)."""
_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_KEY = _NAME | frozenset(".-")


def _spellings(*words: str) -> tuple[str, ...]:
    """Each word as written, in capitals and capitalised."""
    return tuple(dict.fromkeys(s for w in words for s in (w, w.upper(), w.capitalize())))


_B = r"(?<![A-Za-z0-9])"  # no letter or digit before (``_`` may join it: ``mcp__gh__ghp_…``)
_E = r"(?![A-Za-z0-9_])"  # none after
_E_DASH = r"(?![A-Za-z0-9_-])"

RULES: tuple[_Rule, ...] = (
    # gitleaks private-key; detect-secrets PrivateKeyDetector.  Bounded body; an
    # unterminated block (a cut tool output) is redacted through its base64 lines.
    _Rule(
        "private_key",
        ("-----BEGIN",),
        r"-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]{0,8000}?-----END[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:(?:\s|\\n|\\r)*[A-Za-z0-9+/=:,-]{4,}){1,200})",
    ),
    # gitleaks aws-access-token; detect-secrets AWSKeyDetector.
    _Rule(
        "aws_access_key",
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        _B + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}" + _E,
    ),
    # detect-secrets AWSKeyDetector's second pattern (a 40-character secret near "aws" and "secret").
    _Rule(
        "aws_secret_key",
        _spellings("aws"),
        r"(?i)aws[a-z0-9_ .\-]{0,20}?(?:secret|sk)[a-z0-9_ .\-]{0,20}?[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        group=1,
    ),
    # gitleaks github-pat, github-oauth, github-app-token, github-refresh-token, github-fine-grained-pat.
    _Rule(
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        _B + r"(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})" + _E,
    ),
    # gitleaks gitlab-pat, gitlab-ptt, gitlab-rrt, gitlab-deploy-token…; detect-secrets GitLabTokenDetector.
    _Rule(
        "gitlab_token",
        (
            "glpat-",
            "gldt-",
            "glft-",
            "glsoat-",
            "glrt-",
            "glcbt-",
            "glimt-",
            "glptt-",
            "glagent-",
            "gloas-",
            "GR1348941",
        ),
        _B
        + r"(?:gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-(?:[0-9a-fA-F]{2}_)?[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})"
        + _E_DASH,
    ),
    # gitleaks slack-bot-token, slack-user-token, slack-app-token…; detect-secrets SlackDetector.
    _Rule(
        "slack_token",
        ("xox", "xapp-"),
        _B
        + r"(?:xox[abposre]-[0-9]{6,}-[A-Za-z0-9-]{8,}|xapp-[0-9]-[A-Z0-9]{6,}-[0-9]{6,}-[a-z0-9]{20,})"
        + _E_DASH,
    ),
    # gitleaks slack-webhook-url.
    _Rule(
        "slack_webhook",
        ("hooks.slack.com",),
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_]{20,}",
    ),
    # gitleaks stripe-access-token; detect-secrets StripeDetector.
    _Rule(
        "stripe_key",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        _B + r"[rs]k_(?:live|test)_[A-Za-z0-9]{20,}" + _E,
    ),
    # gitleaks anthropic-api-key, anthropic-admin-api-key.
    _Rule(
        "anthropic_key",
        ("sk-ant-",),
        _B + r"sk-ant-(?:api|admin|oat|sid)[0-9]{2}-[A-Za-z0-9_-]{80,}" + _E_DASH,
    ),
    # gitleaks openai-api-key (the T3BlbkFJ marker); detect-secrets OpenAIDetector; project/service keys.
    _Rule(
        "openai_key",
        ("sk-",),
        _B
        + r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|[A-Za-z0-9_-]{0,60}T3BlbkFJ[A-Za-z0-9_-]{20,})"
        + _E_DASH,
    ),
    # gitleaks gcp-api-key.
    _Rule("google_api_key", ("AIza",), _B + r"AIza[0-9A-Za-z_-]{35}" + _E_DASH),
    # Google OAuth client secret (GOCSPX-) and access token (ya29.).
    _Rule(
        "google_oauth",
        ("GOCSPX-", "ya29."),
        _B + r"(?:GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[0-9A-Za-z_-]{30,})" + _E_DASH,
    ),
    # gitleaks huggingface-access-token.
    _Rule("huggingface_token", ("hf_",), _B + r"hf_[A-Za-z]{34}" + _E),
    # gitleaks npm-access-token.
    _Rule("npm_token", ("npm_",), _B + r"npm_[A-Za-z0-9]{36}" + _E),
    # gitleaks pypi-upload-token; detect-secrets PypiTokenDetector.
    _Rule("pypi_token", ("pypi-AgE",), r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    # gitleaks sendgrid-api-token; detect-secrets SendGridDetector.
    _Rule("sendgrid_key", ("SG.",), _B + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _E_DASH),
    # gitleaks digitalocean-pat / -access-token.
    _Rule("digitalocean_token", ("dop_v1_", "doo_v1_"), _B + r"do[op]_v1_[a-f0-9]{64}" + _E),
    # detect-secrets AzureStorageKeyDetector.
    _Rule("azure_storage_key", ("AccountKey=",), r"AccountKey=([A-Za-z0-9+/=]{86,88})", group=1),
    # gitleaks jwt; detect-secrets JwtTokenDetector (header checked as it does).
    _Rule(
        "jwt",
        ("eyJ",),
        _B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}" + _E_DASH,
        check=_jwt_valid,
    ),
    # detect-secrets BasicAuthDetector: the password of scheme://user:password@host.
    _Rule(
        "url_password",
        ("://",),
        r"://[^\s:/?#@\[\]'\"<>]{1,100}:([^\s/?#@\[\]'\"<>]{3,200})@[A-Za-z0-9.\[-]",
        group=1,
        check=_real_value,
    ),
    # .env-style and shell assignments (dotenv ``NAME=value``, optionally after
    # ``export``; ``docker run -e NAME=value``, ``cd x && NAME=value cmd``) and
    # YAML ``NAME: value`` of a variable whose name says it is a secret: the
    # shape of gitleaks' generic-api-key (keyword in the name, an assignment
    # operator, the value up to a quote, space or shell separator) for names
    # in capitals.  A ``NAME: value`` value must mix letters and digits.
    _Rule(
        "env_secret",
        ("KEY", "TOKEN", "SECRET", "PASSW", "PWD", "CREDENTIAL", "AUTH"),
        r"(?=[A-Z])[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PWD|CREDENTIALS?|AUTH)[A-Z0-9_]*"
        r"(?:[ \t]*=[ \t]*(?P<q>[\"']?)([^\s\"'`;&|]{8,})(?P=q)"
        r"|:[ \t]+(?P<q2>[\"']?)(?=[^\s\"']*[0-9])(?=[^\s\"']*[A-Za-z])([^\s\"'`;&|]{8,})(?P=q2))"
        r"(?=[\s\"'`;&|)]|$)",
        group=(2, 4),
        word=_NAME,
        check=_real_value,
    ),
    # gitleaks generic-api-key, narrowed: a quoted value assigned to a key named
    # password/secret/api key/token (JSON, YAML, code).  A key ending in ``token``
    # (``api_token = "…"``, ``"accessToken": "…"``) is found by its keyword with what
    # follows it (``token"``, ``token =``…): ``token`` alone is in every usage record.
    _Rule(
        "password",
        (
            *_spellings("passw", "secret", "api_key", "apikey", "api-key"),
            "apiKey",
            *(word + op for word in _spellings("token") for op in ('"', "'", "=", ":", " =", " :")),
        ),
        r"(?i)(?:passw(?:or)?d|secret|api[_-]?key|token)[\"']?[ \t]*(?::|=|:=|=>)[ \t]*[\"']([^\s\"']{8,200})[\"']",
        group=1,
        check=_real_value,
    ),
    # The same keys with an unquoted value (``password=hunter2secret``,
    # ``password: SuperS3cretPw2``, ``-H "X-Api-Key: …"``): the key word ends
    # the name, the value mixes letters and digits (gitleaks asks the same
    # values for entropy), so ``token: 5`` or ``the password field`` stay.
    # Its keywords hold the operator (``token=``, ``token:``): ``token`` alone
    # is in every usage record.
    _Rule(
        "password",
        tuple(
            word + op
            for word in (
                *_spellings("password", "passwd", "pwd", "secret", "token", "api_key", "apikey", "api-key"),
                *("apiKey", "Api-Key"),
            )
            for op in ("=", ":", " =")
        ),
        r"(?i)[a-z0-9_.-]*(?:passw(?:or)?d|pwd|secret|token|api[_-]?key)"
        r"[ \t]*(?:=|:=|=>|:[ \t]+)[ \t]*(?=[^\s\"']*[0-9])(?=[^\s\"']*[a-z])"
        r"([^\s\"'`;&|<>,(){}\[\]]{8,200})(?=[\s\"'`;&|<>,(){}\[\]]|$)",
        group=1,
        word=_KEY,
        check=_real_value,
    ),
    # HTTP authorization (RFC 6750 Bearer tokens, RFC 7617 Basic credentials):
    # ``Authorization: Bearer <token>``, or a Bearer token alone; the token mixes
    # letters and digits and is 16+ characters (``Bearer authentication`` stays).
    _Rule(
        "bearer_token",
        (*_spellings("bearer"), *_spellings("authorization")),
        r"(?:(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?:Basic|Token|token)[ \t]+([A-Za-z0-9+/=._~-]{8,})"
        r"|(?i:(?:authorization[\"']?[ \t]*[:=][ \t]*[\"']?)?bearer)[ \t]+"
        r"(?=[A-Za-z0-9._~+/=-]*[0-9])(?=[A-Za-z0-9._~+/=-]*[A-Za-z])([A-Za-z0-9._~+/=-]{16,}))",
        group=(1, 2),
        check=_real_value,
    ),
)
"""The rules, most specific first: where two overlap the earlier-starting, then the earlier rule wins."""

KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule.kind for rule in RULES))
"""Every kind a finding can have."""
_ORDER = {kind: i for i, kind in enumerate(KINDS)}


_AUTOMATON: Any = None
_KEYWORD_RULES: list[tuple[_Rule, ...]] = []


def _automaton() -> Any:
    """The Aho-Corasick automaton of every rule's keywords (built on first use)
    and, per keyword, the rules it starts."""
    global _AUTOMATON
    if _AUTOMATON is None:
        import ahocorasick_rs

        by_word: dict[str, list[_Rule]] = {}
        for rule in RULES:
            for word in rule.keywords:
                by_word.setdefault(word, []).append(rule)
        _KEYWORD_RULES[:] = [tuple(rules) for rules in by_word.values()]
        # A DFA: with 160 keywords the default (a noncontiguous NFA) ran at two thirds of its speed.
        _AUTOMATON = ahocorasick_rs.AhoCorasick(
            list(by_word), implementation=ahocorasick_rs.Implementation.DFA
        )
    return _AUTOMATON


def _scan(chunk: str, base: int) -> Iterator[Finding]:
    """Findings of every rule in ``chunk`` (offsets shifted by ``base``), unordered:
    one Aho-Corasick pass finds the keywords, each rule is tried where its keyword is."""
    tried: set[tuple[int, int]] = set()
    for word, at, _end in _automaton().find_matches_as_indexes(chunk, overlapping=True):
        for rule in _KEYWORD_RULES[word]:
            start = rule.start(chunk, at)
            if start < 0 or (id(rule), start) in tried:
                continue
            tried.add((id(rule), start))
            match = rule.pattern.match(chunk, start)
            if match is None:
                continue
            begin, end = rule.secret(match)
            if begin == end or (rule.check is not None and not rule.check(chunk[begin:end])):
                continue
            yield Finding(rule.kind, base + begin, base + end)


def findings(text: str) -> list[Finding]:
    """The secrets in ``text``, in order, not overlapping: where two rules match
    overlapping spans the one starting first (then the earlier rule, then the
    longer) is kept.  Scanned in :data:`CHUNK`-character chunks."""
    found: list[tuple[int, int, int, Finding]] = []
    order = _ORDER
    for at in range(0, max(len(text), 1), CHUNK):
        window = text[at : at + CHUNK + OVERLAP] if len(text) > CHUNK else text
        for f in _scan(window, at):
            if f.start < at + CHUNK:
                found.append((f.start, order[f.kind], -f.end, f))
    found.sort()
    kept: list[Finding] = []
    for _start, _order, _end, f in found:
        if not kept or f.start >= kept[-1].end:
            kept.append(f)
    return kept


_JSON_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|[\"'\\/bfnrt])")
"""An escape of a JSON string (and ``\\'``, as a shell or Python string escapes a quote)."""
_ESCAPED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescaped(text: str) -> tuple[str, list[tuple[int, int, int]]]:
    """``text`` read as what a JSON string holds (each :data:`_JSON_ESCAPE` as the
    character it stands for), and each escape read: ``(offset in the text read,
    start, end in text)``."""
    pieces: list[str] = []
    escapes: list[tuple[int, int, int]] = []
    at = shift = 0
    for found in _JSON_ESCAPE.finditer(text):
        body = found.group()[1:]
        pieces += (text[at : found.start()], chr(int(body[1:], 16)) if body[0] == "u" else _ESCAPED.get(body, body))
        escapes.append((found.start() - shift, found.start(), found.end()))
        shift += found.end() - found.start() - 1
        at = found.end()
    pieces.append(text[at:])
    return "".join(pieces), escapes


def _in_text(escapes: list[tuple[int, int, int]], at: int) -> int:
    """Where offset ``at`` of :func:`_unescaped`'s text is in the escaped text."""
    i = bisect.bisect_right(escapes, at, key=lambda e: e[0]) - 1
    if i < 0:
        return at
    read_at, start, end = escapes[i]
    return start if at == read_at else end + at - read_at - 1


def escaped_findings(text: str) -> list[Finding]:
    """:func:`findings` of ``text`` as it is and read as what a JSON string holds
    (``db_password = \\"…\\"`` in a tool input shown as JSON, or in a search snippet
    cut from it, is the ``db_password = "…"`` its string holds), spans in ``text``;
    where a finding of one reading overlaps one of the other, one finding spans both
    (of the kind of the one starting first)."""
    found = findings(text)
    if "\\" not in text:
        return found
    read, escapes = _unescaped(text)
    if not escapes:
        return found
    order = _ORDER
    both = sorted(
        [*found, *(Finding(f.kind, _in_text(escapes, f.start), _in_text(escapes, f.end)) for f in findings(read))],
        key=lambda f: (f.start, order[f.kind], -f.end),
    )
    kept: list[Finding] = []
    for f in both:
        if kept and f.start < kept[-1].end:
            if f.end > kept[-1].end:
                kept[-1] = Finding(kept[-1].kind, kept[-1].start, f.end)
        else:
            kept.append(f)
    return kept


def redact(text: str) -> str:
    """``text`` with each finding replaced by ``[REDACTED:<kind>]`` (the same string when there is none)."""
    found = findings(text)
    if not found:
        return text
    pieces: list[str] = []
    at = 0
    for f in found:
        pieces += (text[at : f.start], marker(f.kind))
        at = f.end
    pieces.append(text[at:])
    return "".join(pieces)


def redact_value(value: Any) -> Any:
    """``value`` with every string in it redacted: strings, and the values and
    keys of lists, tuples and dicts (as JSON decodes them), recursively; other
    values as they are.  Returns ``value`` itself when nothing changed."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        items = [(redact_value(k), redact_value(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list | tuple):
        values = [redact_value(v) for v in value]
        if all(v is v0 for v, v0 in zip(values, value, strict=True)):
            return value
        return type(value)(values)
    return value


_FRAGMENT = re.compile(r"[A-Za-z0-9_+/=-]{16,}")
ELLIPSIS = "…"


def _fragment(token: str) -> bool:
    """A cut-off piece that may be the rest of a secret: 16+ key characters, letters and digits."""
    return (
        bool(_FRAGMENT.fullmatch(token))
        and any(c.isdigit() for c in token)
        and any(c.isalpha() for c in token)
    )


def redact_snippet(text: str, marks: tuple[str, str]) -> str:
    """A search snippet redacted: ``text`` holds highlight ``marks`` (a start and
    an end character around each match) which are kept, moved to a redaction's
    edges when inside it.  A snippet of a tool's input is cut from its JSON text, so
    its secrets are those of :func:`escaped_findings`.  A snippet cut from a longer
    text (beginning or ending with ``…``) may start or end inside a secret: such an
    edge piece (16 or more key characters mixing letters and digits) is replaced by
    ``[REDACTED:fragment]``."""
    plain_chars: list[str] = []
    placed: list[tuple[int, str]] = []
    for c in text:
        if c in marks:
            placed.append((len(plain_chars), c))
        else:
            plain_chars.append(c)
    plain = "".join(plain_chars)
    spans = [(f.start, f.end, f.kind) for f in escaped_findings(plain)]
    spans += _edge_fragments(plain, spans)
    if not spans:
        return text
    spans.sort()
    out: list[str] = []
    at = 0
    marks_at = iter([*placed, (len(plain) + 1, "")])
    pending = next(marks_at)

    def emit_marks(upto: int, inclusive: bool) -> None:
        nonlocal pending
        while pending[0] < upto or (inclusive and pending[0] == upto):
            out.append(pending[1])
            pending = next(marks_at)

    for start, end, kind in spans:
        for i in range(at, start):
            emit_marks(i, inclusive=True)
            out.append(plain[i])
        emit_marks(start, inclusive=True)
        starts = ends = 0
        while pending[0] < end:  # marks inside the secret: starts before it, ends after
            starts += pending[1] == marks[0]
            ends += pending[1] == marks[1]
            pending = next(marks_at)
        out.append(marks[0] * starts + marker(kind) + marks[1] * ends)
        at = end
    for i in range(at, len(plain)):
        emit_marks(i, inclusive=True)
        out.append(plain[i])
    emit_marks(len(plain), inclusive=True)
    return "".join(out)


def _edge_fragments(plain: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Spans of the cut-off pieces at a snippet's ``…`` edges not inside ``spans``."""
    found: list[tuple[int, int, str]] = []
    if plain.startswith(ELLIPSIS):
        match = re.match(r"…\s*(\S+)", plain)
        if match and _fragment(match.group(1)):
            found.append((match.start(1), match.end(1), "fragment"))
    if plain.endswith(ELLIPSIS):
        match = re.search(r"(\S+?)\s*…$", plain)
        if match and _fragment(match.group(1)):
            found.append((match.start(1), match.end(1), "fragment"))
    return [f for f in found if not any(s < f[1] and f[0] < e for s, e, _ in spans)]
