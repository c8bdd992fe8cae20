"""The report's SVG builders: values become geometry, every text is escaped, and each chart
names itself for screen readers."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pytest_karenina.plugin.report import svg

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(\"x\")</script> & 'co'\x07"


def parsed(text: str) -> ET.Element:
    """The chart as XML (which it must be: inline SVG), root ``<svg>``."""
    root = ET.fromstring(text)
    assert root.tag == f"{NS}svg"
    return root


def rects(root: ET.Element) -> list[ET.Element]:
    return list(root.iter(f"{NS}rect"))


def texts(root: ET.Element) -> list[str]:
    return ["".join(node.itertext()) for node in root.iter(f"{NS}text")]


def test_interval_bars_map_values_and_intervals_to_lengths() -> None:
    bars = [
        svg.Bar("model-a", 0.8, 0.6, 0.9, "80.0% (8/10)"),
        svg.Bar("model-b", 0.25, note="25.0%"),
    ]
    root = parsed(svg.interval_bars("rate", "Pass rate", "two models", bars, 1.0, [(0.5, "50%")]))
    plot = svg.WIDTH - svg.LABEL - svg.NOTE
    widths = [float(r.get("width") or 0) for r in rects(root)]
    assert widths == [pytest.approx(0.8 * plot, abs=0.05), pytest.approx(0.25 * plot, abs=0.05)]
    assert {r.get("x") for r in rects(root)} == {str(svg.LABEL)}
    whisker = root.find(f".//{NS}g[@class='karenina-whisker']")
    assert whisker is not None  # one bar has an interval, the other none
    assert len(root.findall(f".//{NS}g[@class='karenina-whisker']")) == 1
    body, low_cap, high_cap = whisker.findall(f"{NS}line")
    assert float(body.get("x1") or 0) == pytest.approx(svg.LABEL + 0.6 * plot, abs=0.05)
    assert float(body.get("x2") or 0) == pytest.approx(svg.LABEL + 0.9 * plot, abs=0.05)
    assert low_cap.get("x1") == low_cap.get("x2") == body.get("x1")
    assert high_cap.get("x1") == high_cap.get("x2") == body.get("x2")
    assert "80.0% (8/10)" in texts(root) and "50%" in texts(root)
    # Bars taller than the value range are clamped to the plot.
    over = parsed(svg.interval_bars("o", "t", "d", [svg.Bar("m", 3.0)], 1.0))
    assert float(rects(over)[0].get("width") or 0) == pytest.approx(plot, abs=0.05)


def test_charts_name_themselves_for_screen_readers() -> None:
    root = parsed(svg.interval_bars("rate", "Pass rate per model", "what it shows", [], 1.0))
    assert root.get("role") == "img"
    assert root.get("aria-labelledby") == "rate-title rate-desc"
    title = root.find(f"{NS}title")
    desc = root.find(f"{NS}desc")
    assert title is not None and title.get("id") == "rate-title"
    assert title.text == "Pass rate per model"
    assert desc is not None and desc.get("id") == "rate-desc" and desc.text == "what it shows"
    # It shrinks with its container instead of overflowing it.
    assert "max-width: 100%" in (root.get("style") or "")
    assert root.get("viewBox") == f"0 0 {svg.WIDTH} {root.get('height')}"


def test_model_names_and_titles_are_escaped_everywhere() -> None:
    charts = [
        svg.interval_bars(HOSTILE, HOSTILE, HOSTILE, [svg.Bar(HOSTILE, 0.5, 0.1, 0.9, HOSTILE)], 1),
        svg.stacked_bars(
            "s", HOSTILE, "d", [(HOSTILE, [svg.Segment(HOSTILE, 3, "#000")])], [(HOSTILE, "#000")]
        ),
        svg.histogram("h", "t", HOSTILE, [1, 2], [HOSTILE, "b"]),
        svg.matrix("m", "t", "d", [HOSTILE], [HOSTILE], [[svg.Cell(HOSTILE, 0.5, HOSTILE)]]),
        svg.sparkline(["pass", "fail"], HOSTILE, [HOSTILE]),
        svg.trend([1.0, 2.0], HOSTILE),
        svg.data_table(HOSTILE, [HOSTILE], [[HOSTILE]]),
        svg.figure("<svg/>", HOSTILE),
    ]
    for chart in charts:
        assert "<script" not in chart and "\x07" not in chart
        assert "&lt;script&gt;" in chart or "&lt;scr" in chart
        ET.fromstring(chart)  # well-formed: no markup leaked out of a text or an attribute
    # The long label is shortened where space is fixed; its whole text is the tooltip.
    root = parsed(charts[0])
    group = root.find(f".//{NS}g/{NS}title")
    assert group is not None and group.text == HOSTILE.replace("\x07", "")
    assert any(t.endswith("\u2026") and len(t) == 18 for t in texts(root))


def test_stacked_bars_split_each_row_by_share() -> None:
    rows = [
        ("all", [svg.Segment("pass", 6, "#0a0"), svg.Segment("fail", 2, "#a00")]),
        ("m", [svg.Segment("pass", 1, "#0a0"), svg.Segment("fail", 0, "#a00")]),
    ]
    root = parsed(svg.stacked_bars("o", "t", "d", rows, [("pass", "#0a0"), ("fail", "#a00")]))
    plot = svg.WIDTH - svg.LABEL - 10
    drawn = [r for r in rects(root) if float(r.get("height") or 0) == svg.BAR]
    widths = [float(r.get("width") or 0) for r in drawn]
    assert widths == [
        pytest.approx(0.75 * plot, abs=0.05), pytest.approx(0.25 * plot, abs=0.05),
        pytest.approx(plot, abs=0.05), 0.0,
    ]  # fmt: skip
    # Each segment starts where the one before it ends.
    assert float(drawn[1].get("x") or 0) == pytest.approx(svg.LABEL + 0.75 * plot, abs=0.1)
    tips = ["".join(r.itertext()) for r in drawn]
    assert tips[0] == "all: pass 6 (75%)" and tips[1] == "all: fail 2 (25%)"
    assert {"6", "2", "pass", "fail"} <= set(texts(root))  # counts on wide segments, legend


def test_legend_wraps_into_lines() -> None:
    names = [(f"error:category-{n}", "#000") for n in range(8)]
    _, one_line = svg.legend(names[:1], 0)
    drawn, height = svg.legend(names, 0)
    assert one_line == 18 and height > 18
    xs = [float(x) for x in drawn.split('<rect x="')[1:] for x in [x.split('"')[0]]]
    assert max(xs) < svg.WIDTH and xs.count(4.0) == height // 18


def test_histogram_heights_follow_counts() -> None:
    root = parsed(svg.histogram("h", "t", "d", [0, 5, 10], ["a", "b", "c"], width=300))
    bars = rects(root)
    heights = [float(r.get("height") or 0) for r in bars]
    assert heights[0] == 0 and heights[2] == pytest.approx(2 * heights[1], abs=0.1)
    bottoms = {float(r.get("y") or 0) + float(r.get("height") or 0) for r in bars}
    assert len({round(b, 1) for b in bottoms}) == 1  # all stand on the same base line
    assert [float(r.get("x") or 0) for r in bars] == sorted(float(r.get("x") or 0) for r in bars)
    assert texts(root) == ["a", "5", "b", "10", "c"]  # a count above each non-empty bin
    assert root.get("width") == "300"


def test_matrix_shades_cells_by_strength() -> None:
    cells = [[svg.Cell("80%", None), svg.Cell("3", 1.0, "a only: 3")],
             [svg.Cell("0", 0.0), svg.Cell("60%", None)]]  # fmt: skip
    root = parsed(svg.matrix("m", "t", "d", ["a", "b"], ["a", "b"], cells))
    fills = [r.get("fill") for r in rects(root)]
    assert fills == ["#eee", svg.shade(1.0), svg.shade(0.0), "#eee"]
    assert svg.shade(0.0) == "#ffffff" and svg.shade(1.0) == "#283593"
    assert "a only: 3" in ["".join(r.itertext()) for r in rects(root)]
    inks = [t.get("fill") for t in root.iter(f"{NS}text") if t.text == "3"]
    assert inks == ["#fff"]  # white on the dark cell


def test_sparkline_marks_read_without_colour() -> None:
    root = parsed(svg.sparkline(["pass", "fail", "error", "skipped"], "2 of 4 passed", ["r1"]))
    assert root.get("aria-label") == "2 of 4 passed" and root.get("role") == "img"
    passed, failed, errored, other = rects(root)
    # pass rises from the middle line, fail hangs below it, error sits on it
    assert float(passed.get("y") or 0) + float(passed.get("height") or 0) == 9
    assert float(failed.get("y") or 0) == 9
    assert float(errored.get("y") or 0) < 9 < float(errored.get("y") or 0) + 4
    assert float(other.get("height") or 0) == 2
    assert ["".join(r.itertext()) for r in (passed, failed)] == ["r1", "fail"]
    assert float(root.get("width") or 0) == 24


def test_trend_leaves_gaps_and_spans_its_range() -> None:
    root = parsed(svg.trend([0.5, 1.0, None, 0.0, 0.25], "pass rate", width=100))
    lines = [p.get("points") or "" for p in root.iter(f"{NS}polyline")]
    assert len(lines) == 2  # the None splits the line
    ys = [float(point.split(",")[1]) for run in lines for point in run.split()]
    assert min(ys) == 3 and max(ys) == 21  # highest value at the top pad, lowest at the bottom
    dot = root.find(f"{NS}circle")
    assert dot is not None and dot.get("cx") == "97"
