"""Checkpoint loading and template compilation at scale (run by hand).

    python benchmarks/bench_checkpoint.py [--questions 10000] [--repeat 3]

Generates a synthetic checkpoint (distinct VerifiedField and classic templates,
a global rubric, question-specific traits on every tenth question), then, each
in a fresh interpreter so numbers do not leak between phases:

* loads it with ``load_checkpoint`` (no template compiled) and reports wall
  time and peak RSS, against the RSS of the same interpreter before loading;
* compiles every template and reports the mean compile time per template.

Targets (docs/performance.md): load < 2 s and peak RSS < 500 MB for 10,000
questions; mean compile time < 5 ms per template.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

VERIFIED = '''from karenina.schemas.entities import BaseAnswer, VerifiedField
from karenina.schemas.primitives import BooleanMatch, ExactMatch, NumericTolerance


class Answer(BaseAnswer):
    """Answer template for generated question {i}."""

    gene: str = VerifiedField(
        description="The gene symbol the response names as the main target",
        ground_truth="GENE{i}",
        verify_with=ExactMatch(normalize=["lowercase", "strip"]),
    )
    count: float = VerifiedField(
        description="How many interacting partners the response reports",
        ground_truth={i},
        verify_with=NumericTolerance(tolerance=0.1),
        weight=2.0,
    )
    approved: bool = VerifiedField(
        description="True if the response says the drug is approved",
        ground_truth=True,
        verify_with=BooleanMatch(),
    )
'''

CLASSIC = """from karenina.schemas.entities import BaseAnswer
from pydantic import Field


class Answer(BaseAnswer):
    value: int = Field(description="The numerical result of calculation {i}")
    unit: str = Field(description="The unit stated in the response")

    def model_post_init(self, __context):
        self.correct = {{"value": {i}, "unit": "mg"}}

    def verify(self) -> bool:
        return self.value == self.correct["value"] and self.unit.lower() == "mg"
"""


def _prop(name: str, value: Any) -> dict[str, Any]:
    return {"@type": "PropertyValue", "name": name, "value": value}


def _trait(name: str, scope: str) -> dict[str, Any]:
    return {
        "@type": "Rating",
        "name": name,
        "description": f"{name} of the response",
        "bestRating": 5,
        "worstRating": 1,
        "additionalType": f"karenina:{scope}RubricTrait",
        "additionalProperty": [_prop("min_score", 1), _prop("max_score", 5)],
    }


def generate(questions: int) -> dict[str, Any]:
    elements = []
    for i in range(questions):
        template = (VERIFIED if i % 2 else CLASSIC).format(i=i)
        item: dict[str, Any] = {
            "@type": "Question",
            "text": f"Generated question number {i}: which gene and how many partners?",
            "acceptedAnswer": {"@type": "Answer", "text": f"GENE{i}, {i} partners, approved"},
            "hasPart": {"@type": "SoftwareSourceCode", "name": f"Template {i}", "text": template},
            "additionalProperty": [_prop("finished", True), _prop("custom_batch", i // 100)],
            "keywords": ["generated", f"batch-{i // 100}"],
        }
        if i % 10 == 0:
            item["rating"] = [
                _trait("Depth", "QuestionSpecific"),
                {
                    "@type": "Rating",
                    "name": "Cites",
                    "bestRating": 1,
                    "worstRating": 0,
                    "additionalType": "karenina:QuestionSpecificRegexTrait",
                    "additionalProperty": [_prop("pattern", r"\[\d+\]")],
                },
            ]
        elements.append(
            {
                "@type": "DataFeedItem",
                "@id": f"urn:bench:q{i:05d}",
                "dateCreated": "2026-11-22T00:00:00",
                "dateModified": "2026-11-22T00:00:00",
                "item": item,
            }
        )
    return {
        "@context": {"@vocab": "https://schema.org/"},
        "@type": "DataFeed",
        "name": "bench",
        "dateCreated": "2026-11-22T00:00:00",
        "dateModified": "2026-11-22T00:00:00",
        "rating": [_trait("Clarity", "Global"), _trait("Completeness", "Global")],
        "dataFeedElement": elements,
    }


# Peak RSS comes from VmHWM: ru_maxrss would include the parent's memory,
# which a forked child inherits until exec.
PEAK_RSS_MB = """
def peak_rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")
"""

LOAD = (
    PEAK_RSS_MB
    + """
import json, sys, time
import pytest_karenina
from pytest_karenina.checkpoint import load_checkpoint
before = peak_rss_mb()
times = []
for _ in range({repeat}):
    start = time.perf_counter()
    benchmark = load_checkpoint(sys.argv[1])
    times.append(time.perf_counter() - start)
    del benchmark
print(json.dumps({{"best_s": min(times), "times_s": times, "rss_before_mb": before,
                  "rss_peak_mb": peak_rss_mb()}}))
"""
)

COMPILE = (
    PEAK_RSS_MB
    + """
import json, sys, time
from pytest_karenina.checkpoint import load_checkpoint
from pytest_karenina.templates import compile_template
benchmark = load_checkpoint(sys.argv[1])
start = time.perf_counter()
for question in benchmark.questions:
    compile_template(question.template_code, question.id)
elapsed = time.perf_counter() - start
print(json.dumps({"templates": len(benchmark.questions), "total_s": elapsed,
                  "mean_ms": elapsed / len(benchmark.questions) * 1000,
                  "rss_peak_mb": peak_rss_mb()}))
"""
)


def _run(script: str, path: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", script, str(path)], check=True, capture_output=True, text=True
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonld"
        path.write_text(json.dumps(generate(args.questions), indent=2), encoding="utf-8")
        size_mb = path.stat().st_size / 1e6
        load = _run(LOAD.format(repeat=args.repeat), path)
        compiled = _run(COMPILE, path)
    print(f"| questions | file | load (best of {args.repeat}) | RSS before -> peak | ")
    print(
        f"| {args.questions:,} | {size_mb:.1f} MB | {load['best_s']:.2f} s | "
        f"{load['rss_before_mb']:.0f} -> {load['rss_peak_mb']:.0f} MB |"
    )
    print(
        f"compile: {compiled['templates']:,} templates in {compiled['total_s']:.1f} s, "
        f"mean {compiled['mean_ms']:.2f} ms/template, peak RSS {compiled['rss_peak_mb']:.0f} MB"
    )


if __name__ == "__main__":
    main()
