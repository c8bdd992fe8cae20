"""The suite's processes match its marks (tests/support/process_marks.py), so that
``pytest -m "not xdist and not subprocess"`` runs every test that runs in this process."""

from __future__ import annotations

import pytest

TESTS = """
import multiprocessing
import os
import subprocess
import sys

import pytest


def test_unmarked_python():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_unmarked_shell_command():
    assert os.system("true") == 0


def test_unmarked_multiprocessing():
    process = multiprocessing.get_context("spawn").Process(target=len, args=([],))
    process.start()
    process.join()
    assert process.exitcode == 0


@pytest.mark.subprocess
def test_marked_python():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


@pytest.fixture
def python_process():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


@pytest.mark.subprocess
def test_marked_with_a_fixture_that_starts_python(python_process):
    pass


@pytest.mark.xdist
def test_marked_without_a_process():
    pass


@pytest.mark.subprocess
def test_marked_and_skipped_before_its_process():
    pytest.skip("no chromium here")


def test_git_does_not_count():
    subprocess.run(["git", "--version"], check=True, capture_output=True)
"""


@pytest.mark.subprocess
def test_a_process_needs_a_mark_and_a_mark_needs_a_process(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["tests.support.process_marks"]\n')
    pytester.makeini(
        "[pytest]\nmarkers =\n    xdist: real xdist workers\n    subprocess: another process\n"
    )
    pytester.makepyfile(test_processes=TESTS)

    result = pytester.runpytest("-p", "no:cacheprovider", "-rA")

    result.assert_outcomes(passed=7, skipped=1, errors=4)
    result.stdout.fnmatch_lines_random([
        "test_processes.py::test_unmarked_python started python* but is not marked: mark it *",
        "test_processes.py::test_unmarked_shell_command started true but is not marked*",
        "test_processes.py::test_unmarked_multiprocessing started multiprocessing python* but is"
        " not marked*",
        "test_processes.py::test_marked_without_a_process is marked xdist but started no process*",
    ])  # fmt: skip
    errored = {line.split()[1] for line in result.stdout.lines if line.startswith("ERROR ")}
    assert errored == {
        f"test_processes.py::{name}"
        for name in ("test_unmarked_python", "test_unmarked_shell_command",
                     "test_unmarked_multiprocessing", "test_marked_without_a_process")
    }  # fmt: skip
