"""Model-id normalisation before a price lookup.

Agents and gateways write the same model many ways; genai-prices matches
provider-native ids (``claude-sonnet-4-20250514``, ``gpt-5.3-codex``) and does
not strip wrappers (``shared/cost.md`` §6, "Model matching").  Handled here:

* provider prefixes: ``anthropic/…``, ``openai/…``, ``openrouter/anthropic/…``,
  ``vertex_ai/…``, ``bedrock/…``, ``azure/…``, ``google/…``, ``openai:…``;
* Vertex ``@date``: ``claude-sonnet-4@20250514`` → ``claude-sonnet-4-20250514``;
* Bedrock ids and ARNs: ``us.anthropic.claude-sonnet-4-20250514-v1:0``,
  ``arn:aws:bedrock:…:inference-profile/eu.anthropic.claude-…-v2:0``;
* dated suffixes (``-20250514``, ``-2025-08-07``) and ``-latest`` aliases
  (``claude-3-5-sonnet-latest``, Anthropic's moving alias of a dated id) are
  dropped only as a second try (:func:`candidates`), since some tables price
  dated ids (and ``codex-mini-latest``) apart;
* aliases that are not price-card ids: ``codex-auto-review`` is Codex's review
  activity label, billed as the review model of its day (GPT-5.4, then GPT-5.6
  Luna from 2026-07-30; ccusage PR #1303, codeburn PR #1056, sub2api PR #5145).
"""

from __future__ import annotations

from datetime import UTC, date, datetime

from agentlog import lazy

_PROVIDERS = {
    "anthropic": "anthropic",
    "claude": "anthropic",
    "openai": "openai",
    "azure": "openai",
    "google": "google",
    "gemini": "google",
    "vertex_ai": None,
    "bedrock": None,
    "openrouter": None,
    "litellm": None,
    "deepseek": "deepseek",
    "moonshotai": "moonshotai",
    "mistral": "mistral",
    "x-ai": "x-ai",
    "xai": "x-ai",
}
_BEDROCK = lazy.pattern(
    r"^(?:[a-z]{2,4}\.)?(anthropic|meta|amazon|mistral|cohere|deepseek|qwen)\.(.+?)(?:-v\d+(?::\d+)?)?$"
)
_VERTEX_AT = lazy.pattern(r"@(\d{8})$")
_VERTEX_AT_LATEST = lazy.pattern(r"@(latest|default)$")
_DATED = lazy.pattern(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")

#: alias → [(first UTC day, model priced)], newest last.
ALIASES: dict[str, list[tuple[date, str]]] = {
    "codex-auto-review": [(date(1970, 1, 1), "gpt-5.4"), (date(2026, 7, 30), "gpt-5.6-luna")],
}


def normalize(raw: str, when: datetime | None = None) -> tuple[str, str | None]:
    """``(model id, provider hint or None)`` for a recorded model id ``raw``.

    ``when`` (aware UTC) picks the dated target of an alias; ``None`` means now.
    """
    model = raw.strip().lower()
    provider: str | None = None
    if model.startswith("arn:aws:bedrock:"):
        model = model.rsplit("/", 1)[-1]
    while True:
        head, sep, rest = model.partition("/")
        if not sep:
            head, sep, rest = model.partition(":") if model.split(":", 1)[0] in _PROVIDERS else ("", "", "")
        if sep and head in _PROVIDERS:
            provider = _PROVIDERS[head] or provider
            model = rest
            continue
        break
    bedrock = _BEDROCK.match(model)
    if bedrock and "." in model:
        provider = {"anthropic": "anthropic", "deepseek": "deepseek"}.get(bedrock.group(1), provider)
        model = bedrock.group(2)
    model = _VERTEX_AT_LATEST.sub("", _VERTEX_AT.sub(r"-\1", model))
    if model in ALIASES:
        day = (when or datetime.now(UTC)).astimezone(UTC).date()
        model = [target for start, target in ALIASES[model] if start <= day][-1]
    if provider is None and model.startswith("claude"):
        provider = "anthropic"
    return model, provider


def candidates(model: str) -> list[str]:
    """Ids to try in order: the normalised id, then without a dated (or
    ``-latest``) suffix."""
    undated = _DATED.sub("", model)
    return [model] if undated == model else [model, undated]
