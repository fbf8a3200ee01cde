"""Server-side SVG charts (no JavaScript): stacked bars with a legend.

Labels and titles are escaped; sizes are in SVG user units (pixels).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from markupsafe import Markup, escape

PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
WIDTH, HEIGHT = 920, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 12, 34, 64


def _axis(top: float) -> tuple[float, int]:
    """A round axis maximum at or above ``top`` (1, 2, 2.5 or 5 × 10^n) and how
    many gridline intervals divide it into round steps."""
    if top <= 0:
        return 1.0, 5
    power = 10 ** math.floor(math.log10(top))
    for factor, intervals in ((1, 5), (2, 4), (2.5, 5), (5, 5), (10, 5)):
        if factor * power >= top * (1 - 1e-9):
            return factor * power, intervals
    raise AssertionError("unreachable: 10 × 10^floor(log10(top)) > top")


def fold_small(series: dict[str, list[float]], limit: int) -> dict[str, list[float]]:
    """``series`` as is if it has at most ``limit`` entries; else its ``limit - 1``
    largest (by sum, in their original order) plus ``"N others"``, the element-wise
    sum of the rest."""
    if len(series) <= limit:
        return series
    ranked = sorted(series, key=lambda name: -sum(series[name]))
    keep, rest = set(ranked[: limit - 1]), ranked[limit - 1 :]
    folded = {name: values for name, values in series.items() if name in keep}
    folded[f"{len(rest)} others"] = [
        sum(column) for column in zip(*(series[name] for name in rest), strict=True)
    ]
    return folded


def stacked_bars(
    title: str,
    categories: Sequence[str],
    series: dict[str, list[float]],
    fmt: Callable[[float], str],
    maximum: float | None = None,
) -> Markup:
    """A stacked bar chart: one bar per category, one colour per series (values
    ≥ 0, ``series[name][i]`` for ``categories[i]``), y axis labelled with ``fmt``
    and ending at ``maximum`` (default: a round number above the highest bar).
    Beyond the palette's size, the largest series keep their own colours and the
    rest are summed into one grey "N others" series (never two series one colour)."""
    series = fold_small(series, len(PALETTE))
    totals = [sum(values[i] for values in series.values()) for i in range(len(categories))]
    top, intervals = (maximum, 4) if maximum else _axis(max(totals, default=0.0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(len(categories), 1)
    bar = max(min(slot * 0.7, 48), 1)
    out = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT + 24 * ((len(series) + 3) // 4)}" role="img"'
        f' aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
        f'<text x="{LEFT}" y="18" class="chart-title">{escape(title)}</text>'
    ]
    for i in range(intervals + 1):
        value = top * i / intervals
        y = TOP + plot_h - plot_h * i / intervals
        out.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" class="axis" text-anchor="end">{escape(fmt(value))}</text>'
        )
    every = max(1, round(len(categories) / 16))
    for i, category in enumerate(categories):
        x = LEFT + slot * i + (slot - bar) / 2
        base: float = TOP + plot_h
        for n, (name, values) in enumerate(series.items()):
            h = plot_h * values[i] / top
            if h <= 0:
                continue
            base -= h
            out.append(
                f'<rect x="{x:.1f}" y="{base:.1f}" width="{bar:.1f}" height="{h:.1f}"'
                f' fill="{PALETTE[n]}"><title>{escape(category)} · {escape(name)}: '
                f"{escape(fmt(values[i]))}</title></rect>"
            )
        if i % every == 0:
            cx, cy = LEFT + slot * i + slot / 2, TOP + plot_h + 14
            out.append(
                f'<text x="{cx:.1f}" y="{cy:.1f}" class="axis" text-anchor="end"'
                f' transform="rotate(-35 {cx:.1f} {cy:.1f})">{escape(category)}</text>'
            )
    for n, name in enumerate(series):
        x, y = LEFT + (n % 4) * 210, HEIGHT + 24 * (n // 4) - 4
        out.append(
            f'<rect x="{x}" y="{y - 10}" width="12" height="12" fill="{PALETTE[n]}"/>'
            f'<text x="{x + 18}" y="{y}" class="legend">{escape(name[:30])}</text>'
        )
    out.append("</svg>")
    return Markup("".join(out))
