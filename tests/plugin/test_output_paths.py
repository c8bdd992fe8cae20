"""The baseline an update writes never replaces an input of the run, another kind of file or a
device node (issue 24, item 5), through pytest over real HTTP."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.plugin.plugin_helpers import COUNTRIES, capitals_checkpoint, endpoint_args
from tests.support.openai_server import OpenAIServer


def answers(server: OpenAIServer) -> None:
    for country, capital in COUNTRIES.values():
        server.add_rule(f"It is {capital}.", structured=False, contains=f"capital of {country}")
        server.add_rule({"capital": capital}, structured=True, contains=f"It is {capital}.")


def update(
    pytester: pytest.Pytester, server: OpenAIServer, baseline: Path, *options: str
) -> pytest.RunResult:
    checkpoint = pytester.path / "capitals.jsonld"
    return pytester.runpytest("--karenina", str(checkpoint), *endpoint_args(server),
                              f"--karenina-baseline={baseline}", "--karenina-baseline-update",
                              *options)  # fmt: skip


def node(path: Path, kind: str) -> Path:
    """A character device node (the null device's numbers) or a FIFO at ``path``: a node in
    the test's directory stands for ``/dev/null``, which an update that went wrong would have
    replaced for the whole machine when run as root."""
    if kind == "FIFO":
        os.mkfifo(path)
        return path
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD (root)")
    return path


def test_an_update_never_replaces_the_checkpoint(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """``--karenina-baseline b.jsonld --karenina-baseline-update`` exited 0 and the checkpoint
    was a baseline."""
    answers(openai_server)
    checkpoint = capitals_checkpoint(pytester.path)
    before = checkpoint.read_bytes()

    result = update(pytester, openai_server, checkpoint)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--karenina-baseline {checkpoint}: that is a checkpoint of this run"]
    )
    assert checkpoint.read_bytes() == before
    assert openai_server.requests == []


def test_an_update_never_replaces_the_results_export_or_another_file(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    answers(openai_server)
    capitals_checkpoint(pytester.path)
    export = pytester.path / "results.json"
    result = update(pytester, openai_server, export, f"--karenina-results={export}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--karenina-baseline {export}: that is the results export of this run"]
    )

    notes = pytester.path / "notes.txt"
    notes.write_text("my notes\n")
    result = update(pytester, openai_server, notes)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--karenina-baseline {notes}: the file exists and is not a baseline*"]
    )
    assert notes.read_text() == "my notes\n"


@pytest.mark.parametrize("kind", ["character device", "FIFO"])
def test_an_update_never_replaces_a_device_node(
    pytester: pytest.Pytester, openai_server: OpenAIServer, kind: str
) -> None:
    answers(openai_server)
    capitals_checkpoint(pytester.path)
    target = node(pytester.path / "baseline.json", kind)
    mode = target.lstat().st_mode

    result = update(pytester, openai_server, target)

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--karenina-baseline {target}: that is a {kind}, not a regular file*"]
    )
    assert target.lstat().st_mode == mode


def test_an_update_writes_through_a_file_of_its_own(
    pytester: pytest.Pytester, openai_server: OpenAIServer
) -> None:
    """The baseline is written to a uniquely named file beside it, then renamed: a fixed
    ``<name>.tmp`` (which two writers shared) is neither used nor left behind."""
    answers(openai_server)
    capitals_checkpoint(pytester.path)
    baseline = pytester.path / "baseline.json"
    taken = baseline.with_name("baseline.json.tmp")
    taken.mkdir()  # a fixed temporary name cannot be opened

    result = update(pytester, openai_server, baseline)

    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["karenina baseline baseline.json: written (3 entries: pass 3)"])
    assert sorted(p.name for p in pytester.path.iterdir() if "baseline" in p.name) == [
        "baseline.json", "baseline.json.tmp",
    ]  # fmt: skip
