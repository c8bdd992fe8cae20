"""Small inline SVG charts for the HTML report, written as text: no script, no network.

Every chart is an ``<svg role="img">`` whose ``<title>`` and ``<desc>`` name it and say what
it shows (``aria-labelledby`` points at both); marks carry a ``<title>`` of their own (a
tooltip on hover). :func:`figure` puts a chart in a ``<figure>`` with its caption and its data
as a table that only screen readers see (``karenina-sr-only``). Charts draw in a fixed
coordinate system (``viewBox``) and shrink with their container (``max-width: 100%``), so a
narrow window scales them instead of scrolling.

Every piece of text (model names come from the user's settings, trait names from the
checkpoint) is escaped here, and shortened where space is fixed (the whole text stays in the
mark's ``<title>``). The builders are pure: values in, SVG text out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 480
"""The width of a chart's coordinate system (a chart is at most this many pixels wide)."""
LABEL = 130
"""The left column of a bar chart, holding each row's label (right-aligned)."""
NOTE = 110
"""The right column of a bar chart, holding each row's value as text."""
ROW = 24
BAR = 14
FONT = 'font-family="sans-serif" font-size="12"'
INK = "#222"
GRID = "#ccc"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_NOT_ID = re.compile(r"[^A-Za-z0-9_-]")


def esc(text: object) -> str:
    """``text`` safe in SVG or HTML text and attribute values (control characters dropped:
    XML has no place for them)."""
    return escape(_CONTROL.sub("", str(text)), quote=True)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis ending a cut one."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "\u2026"


def num(value: float) -> str:
    """A coordinate: at most one decimal, no trailing zeros."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def scale(value: float, maximum: float, length: float) -> float:
    """``value`` of ``maximum`` as a length along ``length`` (clamped to ``[0, length]``)."""
    if maximum <= 0:
        return 0.0
    return min(max(value / maximum, 0.0), 1.0) * length


def svg(key: str, title: str, desc: str, width: float, height: float, body: str) -> str:
    """The ``<svg>`` element: ``key`` (made an id: letters, digits, dashes) prefixes the ids
    of its title and description."""
    key = _NOT_ID.sub("-", key)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="karenina-svg" role="img" '
        f'viewBox="0 0 {num(width)} {num(height)}" width="{num(width)}" height="{num(height)}" '
        f'style="max-width: 100%; height: auto" aria-labelledby="{key}-title {key}-desc">'
        f'<title id="{key}-title">{esc(title)}</title><desc id="{key}-desc">{esc(desc)}</desc>'
        f"{body}</svg>"
    )


def text(x: float, y: float, content: str, anchor: str = "start", size: int = 12) -> str:
    """A ``<text>`` element (``content`` is escaped here)."""
    return (
        f'<text x="{num(x)}" y="{num(y)}" text-anchor="{anchor}" font-family="sans-serif" '
        f'font-size="{size}" fill="{INK}">{esc(content)}</text>'
    )


def rect(x: float, y: float, width: float, height: float, fill: str, tip: str = "") -> str:
    """A ``<rect>``; ``tip`` becomes its ``<title>``."""
    inner = f"<title>{esc(tip)}</title>" if tip else ""
    return (
        f'<rect x="{num(x)}" y="{num(y)}" width="{num(width)}" height="{num(height)}" '
        f'fill="{fill}">{inner}</rect>'
    )


def line(x1: float, y1: float, x2: float, y2: float, stroke: str = INK) -> str:
    return (
        f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" '
        f'stroke="{stroke}" stroke-width="1.5"/>'
    )


def data_table(caption: str, head: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """The chart's numbers as a table only screen readers see (escaped)."""
    cells = "".join(f"<th>{esc(cell)}</th>" for cell in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    # A table is as wide as its cells whatever its own width: a block around it hides it.
    return (
        f'<div class="karenina-sr-only"><table><caption>{esc(caption)}</caption>'
        f"<tr>{cells}</tr>{body}</table></div>"
    )


def figure(chart: str, caption: str, table: str = "") -> str:
    """A chart in a ``<figure>`` with its visible caption and its hidden data table."""
    return (
        f'<figure class="karenina-chart">{chart}<figcaption>{esc(caption)}</figcaption>'
        f"{table}</figure>"
    )


@dataclass(frozen=True)
class Bar:
    """One row of :func:`interval_bars`: ``value`` with an optional interval ``low-high``
    (whiskers), ``note`` written right of the plot."""

    label: str
    value: float
    low: float | None = None
    high: float | None = None
    note: str = ""
    fill: str = "#5c6bc0"


def _label(y: float, label: str, limit: int = 18) -> str:
    """A row's label, right-aligned in the label column, its full text on hover."""
    shown = text(LABEL - 6, y, clip(label, limit), "end")
    return f"<g><title>{esc(label)}</title>{shown}</g>" if len(label) > limit else shown


def _axis(top: float, bottom: float, maximum: float, ticks: Sequence[tuple[float, str]]) -> str:
    """Vertical grid lines at ``ticks`` (value, label) with their labels under the plot."""
    plot = WIDTH - LABEL - NOTE
    found = []
    for value, label in ticks:
        x = LABEL + scale(value, maximum, plot)
        found.append(line(x, top, x, bottom, GRID))
        found.append(text(x, bottom + 14, label, "middle", 10))
    return "".join(found)


def interval_bars(
    key: str, title: str, desc: str, bars: Sequence[Bar], maximum: float,
    ticks: Sequence[tuple[float, str]] = (),
) -> str:  # fmt: skip
    """Horizontal bars from 0 to each ``value`` of ``maximum``; a bar with ``low`` and
    ``high`` gets whiskers (a line between them with end caps)."""
    plot = WIDTH - LABEL - NOTE
    top = 6
    height = top + ROW * len(bars) + (22 if ticks else 6)
    parts = [_axis(top, top + ROW * len(bars), maximum, ticks)] if ticks else []
    for index, bar in enumerate(bars):
        y = top + ROW * index
        middle = y + ROW / 2
        width = scale(bar.value, maximum, plot)
        tip = f"{bar.label}: {bar.note}" if bar.note else bar.label
        parts.append(_label(middle + 4, bar.label))
        parts.append(rect(LABEL, middle - BAR / 2, width, BAR, bar.fill, tip))
        if bar.low is not None and bar.high is not None:
            low = LABEL + scale(bar.low, maximum, plot)
            high = LABEL + scale(bar.high, maximum, plot)
            parts.append(
                '<g class="karenina-whisker">'
                + line(low, middle, high, middle)
                + line(low, middle - 5, low, middle + 5)
                + line(high, middle - 5, high, middle + 5)
                + "</g>"
            )
        parts.append(text(WIDTH - NOTE + 6, middle + 4, bar.note))
    return svg(key, title, desc, WIDTH, height, "".join(parts))


@dataclass(frozen=True)
class Segment:
    """One part of a stacked bar: ``count`` of ``name``, drawn in ``fill``; ``shown`` is
    the count as written (the count itself by default)."""

    name: str
    count: float
    fill: str
    shown: str = ""


def legend(
    entries: Sequence[tuple[str, str]], top: float, width: float = WIDTH
) -> tuple[str, float]:
    """Swatches with their text, (name, fill) in order, wrapped into lines of ``width``;
    the SVG and the height it took."""
    parts = []
    x, y = 4.0, top
    for name, fill in entries:
        span = 18 + 6.5 * len(name)
        if x > 4 and x + span > width:
            x, y = 4.0, y + 18
        parts.append(rect(x, y, 10, 10, fill) + text(x + 14, y + 9, name, size=11))
        x += span + 10
    return "".join(parts), (y - top + 18 if entries else 0)


def stacked_bars(
    key: str, title: str, desc: str, rows: Sequence[tuple[str, Sequence[Segment]]],
    names: Sequence[tuple[str, str]], maximum: float | None = None,
) -> str:  # fmt: skip
    """One bar per row, its segments side by side as shares of the row's total (every row
    100% wide), or with ``maximum`` to scale (a row as long as its total of ``maximum``); a
    segment wide enough shows its count; ``names`` (name, fill) make the legend."""
    plot = WIDTH - LABEL - 10
    top = 6
    parts = []
    for index, (label, segments) in enumerate(rows):
        total = sum(segment.count for segment in segments)
        middle = top + ROW * index + ROW / 2
        parts.append(_label(middle + 4, label))
        x = float(LABEL)
        for segment in segments:
            width = scale(segment.count, total if maximum is None else maximum, plot)
            share = segment.count / total if total else 0.0
            shown = segment.shown or num(segment.count)
            tip = f"{label}: {segment.name} {shown} ({share:.0%})"
            parts.append(rect(x, middle - BAR / 2, width, BAR, segment.fill, tip))
            if width >= 8 + 7 * len(shown):
                parts.append(
                    f'<text x="{num(x + width / 2)}" y="{num(middle + 4)}" text-anchor="middle" '
                    f'{FONT} fill="#fff">{esc(shown)}</text>'
                )
            x += width
    drawn, taken = legend(names, top + ROW * len(rows) + 6)
    height = top + ROW * len(rows) + 6 + taken + 4
    return svg(key, title, desc, WIDTH, height, "".join(parts) + drawn)


def histogram(
    key: str, title: str, desc: str, counts: Sequence[int], labels: Sequence[str],
    width: float = WIDTH, fill: str = "#5c6bc0",
) -> str:  # fmt: skip
    """Vertical bars, one per bin, heights in proportion to the largest count; each bin's
    ``label`` under it and its count above it."""
    height = 150.0
    left, right, top, bottom = 8.0, 8.0, 18.0, height - 22
    slot = (width - left - right) / max(len(counts), 1)
    tallest = max(counts, default=0)
    parts = [line(left, bottom, width - right, bottom, GRID)]
    for index, (count, label) in enumerate(zip(counts, labels, strict=True)):
        x = left + slot * index
        tall = scale(count, tallest, bottom - top)
        parts.append(rect(x + 2, bottom - tall, slot - 4, tall, fill, f"{label}: {count}"))
        middle = x + slot / 2
        if count:
            parts.append(text(middle, bottom - tall - 4, str(count), "middle", 10))
        parts.append(text(middle, bottom + 14, clip(label, max(int(slot / 5.5), 3)), "middle", 9))
    return svg(key, title, desc, width, height, "".join(parts))


@dataclass(frozen=True)
class Cell:
    """One cell of :func:`matrix`: its text, how strongly it is shaded (0-1, None: blank
    grey) and its tooltip."""

    text: str
    shade: float | None = None
    tip: str = ""


def shade(strength: float) -> str:
    """White to deep blue as ``strength`` goes from 0 to 1."""
    strength = min(max(strength, 0.0), 1.0)
    red, green, blue = (round(255 - (255 - c) * strength) for c in (40, 53, 147))
    return f"#{red:02x}{green:02x}{blue:02x}"


def matrix(
    key: str, title: str, desc: str, rows: Sequence[str], columns: Sequence[str],
    cells: Sequence[Sequence[Cell]],
) -> str:  # fmt: skip
    """A grid: ``rows`` labelled on the left, ``columns`` on top, each cell shaded by its
    strength with its text on it (white on a dark cell)."""
    head = 22
    side = (WIDTH - LABEL) / max(len(columns), 1)
    limit = max(int(side / 7), 3)
    parts = []
    for index, column in enumerate(columns):
        shown = text(LABEL + side * index + side / 2, 15, clip(column, limit), "middle")
        parts.append(f"<g><title>{esc(column)}</title>{shown}</g>")
    for row_index, (label, row) in enumerate(zip(rows, cells, strict=True)):
        y = head + ROW * row_index
        parts.append(_label(y + ROW / 2 + 4, label))
        for index, cell in enumerate(row):
            x = LABEL + side * index
            fill = "#eee" if cell.shade is None else shade(cell.shade)
            parts.append(rect(x + 1, y + 1, side - 2, ROW - 2, fill, cell.tip or cell.text))
            ink = "#fff" if cell.shade is not None and cell.shade > 0.55 else INK
            parts.append(
                f'<text x="{num(x + side / 2)}" y="{num(y + ROW / 2 + 4)}" text-anchor="middle" '
                f'{FONT} fill="{ink}">{esc(clip(cell.text, limit))}</text>'
            )
    return svg(key, title, desc, WIDTH, head + ROW * len(rows) + 4, "".join(parts))


MARK_FILLS: Mapping[str, str] = {"pass": "#2e7d32", "fail": "#c62828", "error": "#455a64"}


def sparkline(marks: Sequence[str], label: str, tips: Sequence[str] = ()) -> str:
    """A run-history strip, oldest first: ``pass`` a bar up, ``fail`` a bar down, ``error`` a
    square on the middle line, anything else a short grey tick (so the marks read without
    colour); ``label`` says it in words (its accessible name), ``tips`` per mark on hover."""
    step, height, middle = 6.0, 18.0, 9.0
    parts = [line(0, middle, step * len(marks), middle, GRID)]
    for index, mark in enumerate(marks):
        x = step * index + 1
        tip = tips[index] if index < len(tips) else mark
        if mark == "pass":
            parts.append(rect(x, 1, step - 2, middle - 1, MARK_FILLS["pass"], tip))
        elif mark == "fail":
            parts.append(rect(x, middle, step - 2, middle - 1, MARK_FILLS["fail"], tip))
        elif mark == "error":
            parts.append(rect(x, middle - 2, step - 2, 4, MARK_FILLS["error"], tip))
        else:
            parts.append(rect(x + 1, middle - 1, step - 4, 2, "#999", tip))
    width = max(step * len(marks), step)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="karenina-sparkline" role="img" '
        f'viewBox="0 0 {num(width)} {num(height)}" width="{num(width)}" height="{num(height)}" '
        f'aria-label="{esc(label)}"><title>{esc(label)}</title>{"".join(parts)}</svg>'
    )


def trend(values: Sequence[float | None], label: str, width: float = 120) -> str:
    """A line through ``values`` (oldest first; None leaves a gap) between their lowest and
    highest, the last one dotted; ``label`` is its accessible name."""
    height, pad = 24.0, 3.0
    known = [v for v in values if v is not None]
    low, high = (min(known), max(known)) if known else (0.0, 1.0)
    span = (high - low) or 1.0
    step = (width - 2 * pad) / max(len(values) - 1, 1)
    runs: list[list[str]] = [[]]
    last = ""
    for index, value in enumerate(values):
        if value is None:
            runs.append([])
            continue
        y = height - pad - (value - low) / span * (height - 2 * pad)
        point = f"{num(pad + step * index)},{num(y)}"
        runs[-1].append(point)
        last = point
    lines = "".join(
        f'<polyline points="{" ".join(run)}" fill="none" stroke="#3949ab" stroke-width="1.5"/>'
        for run in runs
        if len(run) > 1
    )
    dot = ""
    if last:
        cx, cy = last.split(",")
        dot = f'<circle cx="{cx}" cy="{cy}" r="2.5" fill="#3949ab"/>'
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="karenina-sparkline" role="img" '
        f'viewBox="0 0 {num(width)} {num(height)}" width="{num(width)}" height="{num(height)}" '
        f'aria-label="{esc(label)}"><title>{esc(label)}</title>{lines}{dot}</svg>'
    )
