"""``examples/github-workflow.yml`` (shown in docs/ci.md): it parses, every command and
option it runs exists (pytest's options as ``pytest --help`` lists them with the plugin
loaded, the merge command's as its parser accepts them), and every job installs
pytest-karenina from the one package spec the user sets, ``KARENINA_PACKAGE``."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

import pytest_karenina
from pytest_karenina.plugin.cli import main

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "examples" / "github-workflow.yml"
EXPRESSION = re.compile(r"\$\{\{[^}]*\}\}")


def workflow() -> dict[str, Any]:
    data = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(data, dict)
    return data


def commands(kind: str) -> list[list[str]]:
    """The command lines of every ``run`` step that start with ``kind``, as argv lists
    (``${{ ... }}`` expressions and shell variables replaced by ``1``)."""
    found = []
    for job in workflow()["jobs"].values():
        for step in job["steps"]:
            script = EXPRESSION.sub("1", step.get("run", "")).replace("\\\n", " ")
            for line in script.splitlines():
                argv = shlex.split(re.sub(r"\$[A-Za-z_]+", "1", line))
                if argv[:1] == [kind]:
                    found.append(argv)
    return found


def test_the_workflow_is_a_complete_github_workflow() -> None:
    data = workflow()
    # YAML 1.1 reads the key ``on`` as True; GitHub reads it as the trigger.
    assert data.get("on", data.get(True)) is not None
    jobs = data["jobs"]
    assert set(jobs) == {"shard", "merge"} and jobs["merge"]["needs"] == "shard"
    assert jobs["shard"]["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    uses = [step["uses"] for job in jobs.values() for step in job["steps"] if "uses" in step]
    assert all(re.fullmatch(r"actions/[a-z-]+@v\d+", action) for action in uses), uses
    assert "actions/cache@v4" in uses and "actions/upload-artifact@v4" in uses
    assert len(commands("pytest")) == 1 and len(commands("pytest-karenina")) == 1


def test_every_pytest_option_of_the_workflow_exists(pytester: pytest.Pytester) -> None:
    (argv,) = commands("pytest")
    listed = pytester.runpytest("--help").stdout.str()
    flags = [arg.split("=")[0] for arg in argv if arg.startswith("-")]
    assert "--karenina-shard" in flags and "--karenina-baseline" in flags
    missing = [flag for flag in flags if not re.search(rf"(^|[\s,]){re.escape(flag)}\b", listed)]
    assert missing == []


def test_the_merge_command_of_the_workflow_parses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (argv,) = commands("pytest-karenina")
    assert argv[1] == "merge"
    # The arguments parse: what fails is reading the (absent) exports, a usage error.
    code = main([*argv[1:2], str(tmp_path / "out.json"), str(tmp_path / "none.json"),
                 *argv[4:]])  # fmt: skip
    captured = capsys.readouterr()
    assert code == pytest.ExitCode.USAGE_ERROR
    assert "none.json: no such file" in captured.err
    assert "unrecognized arguments" not in captured.err


def test_every_job_installs_the_one_package_spec_the_workflow_sets() -> None:
    """``KARENINA_PACKAGE`` is set once, for the whole workflow, to the wheel that
    ``python -m build`` makes of this version; each job installs exactly it, nothing
    overrides it, and no other step names the package, so one edit moves every job to an
    index, a git tag or another wheel."""
    data = workflow()
    version = pytest_karenina.__version__
    assert data["env"]["KARENINA_PACKAGE"] == f"./ci/pytest_karenina-{version}-py3-none-any.whl"
    header = WORKFLOW.read_text().split("\nname:", 1)[0]
    for form in ("KARENINA_PACKAGE", "pytest-karenina ", "git+https://", "-py3-none-any.whl"):
        assert form in header, form
    for name, job in data["jobs"].items():
        assert "KARENINA_PACKAGE" not in job.get("env", {}), name
        runs = [step.get("run", "") for step in job["steps"]]
        installs = [run.strip() for run in runs if re.search(r"\bpip\b", run)]
        assert installs == ['python -m pip install "$KARENINA_PACKAGE"'], name
        named = [r for r in runs if re.search(r"pytest[-_]karenina(?! merge)", r)]
        assert named == [], name
        # The pip cache follows the package spec: its key is this file, where the spec is.
        (setup,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-py")]
        assert setup["with"]["cache"] == "pip"
        assert setup["with"]["cache-dependency-path"] == ".github/workflows/benchmark.yml"
    assert "copy to .github/workflows/benchmark.yml" in header
