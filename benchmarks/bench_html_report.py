"""The HTML report of a large run: how long headless Chromium takes to open it and to filter
it (run by hand; docs/performance.md).

    python benchmarks/bench_html_report.py [--items 5000,20000] [--repeat 3] [--keep DIR]
    python benchmarks/bench_html_report.py --measure report.html [--repeat 3]

1. A real run writes each report: bench_pipeline's generated questions (three VerifiedField
   fields each) answered by two models, ``model-a`` and ``model-b`` (items = 2 x questions),
   through the scripted OpenAI-compatible server in a child process at 0 ms latency.
   ``model-a`` names the wrong gene on every 7th question and ``model-b`` the wrong partner
   count on every 5th: about one item in six fails, and the models disagree on two questions
   in seven. The run is ``pytest --karenina FILE --html=report.html --self-contained-html``:
   the plugin through pytest-html's own hooks, failing items carrying the model's answer (the
   default ``--karenina-html-trace failed``).
2. Headless Chromium opens the report through its DevTools protocol (the ``websockets``
   package, which langchain's dependencies install). *open* is the time from navigation start
   to the first frame drawn after pytest-html's and karenina's scripts ran (DOMContentLoaded
   is given too). Each filter is then applied as a user would (a click on the control, or
   typing in the search box, a key at a time) and timed to the next frame drawn, then undone
   the same way; so are pytest-html's own outcome filter and a click that expands or folds a
   row. Figures are medians over ``--repeat`` fresh loads.

A report written before the karenina filters existed has no karenina controls: those rows
print ``n/a``. Run with ``PYTHONPATH=<a checkout>`` to measure another revision's report.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_pipeline  # noqa: E402  (a sibling script, not a package)

API_KEY = "bench-key"
MODELS = ("model-a", "model-b")
ANSWER = re.compile(r"targets (GENE\d+), which has (\d+) interacting partners")
OTHER_PLUGINS_OFF = ["-p", "no:langsmith_plugin", "-p", "no:hypothesispytest"]


# --- the scripted models ---------------------------------------------------------------------
def answer_text(model: str, i: int) -> str:
    gene = f"GENE{i + 1}" if model == "model-a" and i % 7 == 0 else f"GENE{i}"
    count = 2 * i + 1 if model == "model-b" and i % 5 == 0 else i
    return f"Compound C{i} targets {gene}, which has {count} interacting partners. It is approved."


def parsed(text: str) -> dict[str, Any]:
    found = ANSWER.search(text)
    if found is None:
        raise ValueError("no generated answer in the parse request")
    return {"gene": found.group(1), "count": int(found.group(2)), "approved": True}


def serve(stdin: IO[str], stdout: IO[str]) -> None:
    """The scripted server until ``quit`` or EOF on stdin; its port on stdout."""
    sys.path.insert(0, str(ROOT))
    from tests.support.openai_rules import request_text
    from tests.support.openai_server import OpenAIServer

    def answer(body: dict[str, Any]) -> str:
        return answer_text(
            str(body.get("model")), bench_pipeline.question_number(request_text(body))
        )

    with OpenAIServer(keep_alive=True) as server:
        server.add_rule(lambda body: parsed(request_text(body)), structured=True)
        server.add_rule(answer, structured=False)
        stdout.write(f"{server.port}\n")
        stdout.flush()
        for line in stdin:
            if line.strip() == "quit":
                break


@contextmanager
def server_process() -> Iterator[str]:
    """The scripted server in a child process; yields its base URL."""
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True, cwd=ROOT,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    try:
        yield f"http://127.0.0.1:{int(process.stdout.readline())}/v1"
    finally:
        process.stdin.write("quit\n")
        process.stdin.close()
        process.wait(timeout=30)
        process.stdout.close()


def write_report(items: int, directory: Path) -> Path:
    """Run pytest over ``items // 2`` generated questions and two models; the report's path."""
    from pytest_karenina import save_checkpoint

    checkpoint = directory / "bench.jsonld"
    save_checkpoint(bench_pipeline.make_benchmark(items // len(MODELS)), checkpoint)
    report = directory / "report.html"
    with server_process() as base_url:
        models = [arg for model in MODELS for arg in ("--karenina-answering-model", model)]
        args = [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *OTHER_PLUGINS_OFF,
            "--karenina", str(checkpoint), "--karenina-endpoint", base_url, *models,
            "--karenina-parsing-model", "judge", "--karenina-concurrency", "32",
            f"--html={report}", "--self-contained-html", "-q", "--tb=no",
        ]  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(
            args, cwd=directory, env={**os.environ, "OPENAI_API_KEY": API_KEY},
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        seconds = time.perf_counter() - start
    if done.returncode not in (0, 1) or not report.exists():
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout[-3000:]}")
    size = report.stat().st_size / 1e6
    print(f"{items} items: the run took {seconds:.0f} s; report {size:.1f} MB")
    return report


# --- Chromium through its DevTools protocol ----------------------------------------------------
FRAME = "new Promise(done => requestAnimationFrame(() => setTimeout(done)))"
"""Resolves once the next frame is drawn."""
SHOWN = (
    "document.querySelector('#karenina-filters .karenina-status')?.textContent ||"
    " [...document.getElementById('results-table').tBodies]"
    ".filter(b => b.offsetParent !== null && b.rows[0].dataset.id).length + ' rows shown'"
)
"""What the reader sees: the karenina filters' count, or the rows pytest-html shows."""
ROW = "#results-table tbody.results-table-row .col-testId"
ACTIONS: list[tuple[str, str]] = [
    # (name, what the user does: done twice, the second time undoes the first)
    ("pytest-html's outcome filter: untick Passed", "input[data-test-result=passed]"),
    ("outcome category: untick pass", "#karenina-filters input[data-kcategory=pass]"),
    ("model: untick model-b", "#karenina-filters input[data-kmodel=model-b]"),
    ("flaky only", "#karenina-filters input[data-kflag=flaky]"),
    ("models disagree", "#karenina-filters input[data-kflag=disagree]"),
    ("a click on a row: expand or fold it", ROW),
]
SEARCH = "gene7"


def clicked(selector: str) -> str:
    """JavaScript: click ``selector`` and resolve to the milliseconds to the next frame (null
    when there is no such control, or it is disabled)."""
    return (
        f"(async () => {{ const target = document.querySelector({json.dumps(selector)});"
        " if (!target || target.disabled) return null; const start = performance.now();"
        f" target.click(); await {FRAME}; return performance.now() - start; }})()"
    )


def typed(text: str) -> str:
    """JavaScript: type ``text`` into the search box a key at a time (clear it when empty);
    resolves to the milliseconds from each key to the next frame (null without the box)."""
    steps = [text[: n + 1] for n in range(len(text))] or [""]
    return (
        "(async () => { const box = document.querySelector('#karenina-filters"
        " input[type=search]'); if (!box) return null; const times = [];"
        f" for (const value of {json.dumps(steps)}) {{ const start = performance.now();"
        " box.value = value; box.dispatchEvent(new Event('input', {bubbles: true}));"
        f" await {FRAME}; times.push(performance.now() - start); }} return times; }})()"
    )


class Chromium:
    """One headless Chromium with one page, spoken to over the DevTools websocket."""

    def __init__(self, profile: Path) -> None:
        from websockets.sync.client import connect

        self.stack = ExitStack()
        binary = shutil.which("chromium") or "/usr/bin/chromium"
        self.process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--remote-debugging-port=0",
             "--remote-allow-origins=*", "--window-size=1400,1000",
             f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        port_file = profile / "DevToolsActivePort"
        for _ in range(300):
            if port_file.exists() and port_file.read_text().strip():
                break
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as answer:
            pages = [t for t in json.load(answer) if t["type"] == "page"]
        self.socket = self.stack.enter_context(
            connect(pages[0]["webSocketDebuggerUrl"], max_size=None)
        )
        self.calls = 0
        self.call("Page.enable")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.calls += 1
        ident = self.calls
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=300))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    def wait(self, event: str) -> None:
        while json.loads(self.socket.recv(timeout=300)).get("method") != event:
            pass

    def evaluate(self, expression: str) -> Any:
        found = self.call(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in found:
            raise RuntimeError(f"{expression[:80]}: {found['exceptionDetails']}")
        return found["result"].get("value")

    def open(self, url: str) -> tuple[float, float]:
        """Load ``url``; (ms to DOMContentLoaded's end, ms to the first frame after it)."""
        self.call("Page.navigate", url="about:blank")
        self.wait("Page.loadEventFired")
        self.call("Page.navigate", url=url)
        self.wait("Page.loadEventFired")
        drawn = self.evaluate(f"(async () => {{ await {FRAME}; return performance.now(); }})()")
        loaded = self.evaluate(
            "performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd"
        )
        return float(loaded), float(drawn)

    def close(self) -> None:
        self.stack.close()
        self.process.terminate()
        self.process.wait(timeout=30)


def measure(report: Path, repeat: int) -> None:
    """Open ``report`` ``repeat`` times and time each filter; print the medians."""
    opened: list[tuple[float, float]] = []
    times: dict[str, list[float]] = {name: [] for name, _ in ACTIONS}
    first_key: list[float] = []
    next_keys: list[float] = []
    shown: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as profile:
        chromium = Chromium(Path(profile))
        try:
            for _ in range(repeat):
                opened.append(chromium.open(report.as_uri()))
                shown["open"] = chromium.evaluate(SHOWN)
                for name, selector in ACTIONS:
                    took = chromium.evaluate(clicked(selector))
                    if took is not None:
                        times[name].append(took)
                        shown[name] = chromium.evaluate(SHOWN)
                        chromium.evaluate(clicked(selector))
                keys = chromium.evaluate(typed(SEARCH))
                if keys:
                    first_key.append(keys[0])
                    next_keys += keys[1:]
                    shown["search"] = chromium.evaluate(SHOWN)
                    chromium.evaluate(typed(""))
        finally:
            chromium.close()
    size = report.stat().st_size / 1e6
    loaded = statistics.median(o[0] for o in opened)
    drawn = statistics.median(o[1] for o in opened)
    print(
        f"{report} ({size:.1f} MB; {shown['open']}): DOMContentLoaded {loaded / 1000:.2f} s,"
        f" first frame {drawn / 1000:.2f} s (median of {repeat})"
    )
    for name, found in times.items():
        if found:
            print(f"  {name}: {statistics.median(found) / 1000:.2f} s ({shown[name]})")
        else:
            print(f"  {name}: n/a (no such control, or nothing to filter)")
    if first_key:
        print(
            f"  search {SEARCH!r}: first key {statistics.median(first_key) / 1000:.2f} s, each"
            f" next key {statistics.median(next_keys) / 1000:.2f} s ({shown['search']})"
        )
    else:
        print("  search: n/a (no search box)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--items", default="5000,20000", help="report sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the reports under this directory")
    parser.add_argument("--measure", type=Path, help="measure this report; no run")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(sys.stdin, sys.stdout)
        return
    if args.measure is not None:
        measure(args.measure.resolve(), args.repeat)
        return
    for items in (int(n) for n in args.items.split(",")):
        with tempfile.TemporaryDirectory() as temp:
            directory = (args.keep / str(items)) if args.keep else Path(temp)
            directory.mkdir(parents=True, exist_ok=True)
            measure(write_report(items, directory), args.repeat)


if __name__ == "__main__":
    main()
