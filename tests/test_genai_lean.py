"""genai-prices loaded without its network updater (:mod:`agentlog.usage.genai`),
and still whole for any code that imports it in the same process."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from datetime import datetime, UTC
from agentlog.usage.resolve import Resolver
table, whole_day = Resolver().resolve("claude-sonnet-4-20250514", datetime(2025, 9, 1, tzinfo=UTC))
lean = sorted(m for m in ("httpx2", "asyncio", "genai_prices.update_prices") if m in sys.modules)
import genai_prices
from importlib import metadata
from genai_prices import Usage, calc_price
price = calc_price(Usage(input_tokens=1_000_000, output_tokens=1_000_000), "claude-sonnet-4-20250514")
print(json.dumps({
    "before_use": lean,
    "rates": [table.tiers[0][1].input, table.tiers[0][1].output, table.tiers[0][1].cache_read],
    "whole_day": whole_day,
    "version": genai_prices.__version__ == metadata.version("genai_prices"),
    "calc_price": str(price.total_price),
    "after_use": "genai_prices.update_prices" in sys.modules,
}))
"""


def test_pricing_skips_the_updater_and_the_package_stays_whole() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == {
        "before_use": [],  # resolving a price loaded neither httpx2, asyncio nor the updater
        "rates": [3_000_000, 15_000_000, 300_000],  # pico-dollars per token: $3, $15, $0.30 per Mtok
        "whole_day": True,
        "version": True,  # the package's own __init__ ran on first use
        "calc_price": "18.00",  # genai-prices' own API answers as usual: $3 + $15
        "after_use": True,
    }
