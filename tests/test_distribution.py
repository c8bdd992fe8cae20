"""Release-ready: the wheel and the sdist that ``python -m build`` makes.

The wheel is built from the sdist (``build``'s default), so the sdist holds what a build
needs; its metadata is complete, and the wheel, installed into a fresh virtual environment,
runs the command and the quickstart. ``.ci/run`` builds both again in an isolated environment
and runs ``twine check --strict`` on them.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.message import Message
from email.parser import HeaderParser
from pathlib import Path

import pytest

import pytest_karenina

pytestmark = pytest.mark.subprocess

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
SDIST_TOP = {
    "pytest_karenina", "docs", "examples", "README.md", "CHANGELOG.md", "LICENSE",
    "pyproject.toml", "PKG-INFO", ".gitignore",
}  # fmt: skip
"""Everything at the top of the sdist (hatchling adds PKG-INFO and keeps .gitignore, whose
patterns the wheel build applies)."""


def build(out: Path, *kinds: str) -> list[Path]:
    """``python -m build`` of this checkout into ``out`` (without an isolated environment:
    the dev extra installs hatchling), the files it made."""
    pytest.importorskip("build", reason="the dev extra: pip install -e '.[dev]'")
    pytest.importorskip("hatchling", reason="the dev extra: pip install -e '.[dev]'")
    command = [sys.executable, "-m", "build", "--no-isolation", *kinds, "--outdir", str(out)]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True)
    return sorted(out.iterdir())


def package_files() -> set[str]:
    """The files of the package in the checkout, as the wheel names them: its modules,
    py.typed, and the HTML report's script and style sheet."""
    package = ROOT / "pytest_karenina"
    found = {p for p in package.rglob("*.py") if "__pycache__" not in p.parts}
    found |= set((package / "plugin" / "report" / "web").iterdir())
    return {p.relative_to(ROOT).as_posix() for p in found} | {"pytest_karenina/py.typed"}


def requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\s<>=!~;\[]", text, maxsplit=1)[0].lower() for text in requirements}


def check_metadata(metadata: Message) -> None:
    assert metadata["Name"] == PROJECT["name"]
    assert metadata["Version"] == pytest_karenina.__version__
    assert metadata["Summary"] == PROJECT["description"]
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert metadata["Requires-Python"] == PROJECT["requires-python"]
    assert metadata["Description-Content-Type"] == "text/markdown"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert metadata.get_payload().strip() == readme.strip()
    classifiers = metadata.get_all("Classifier") or []
    assert {"Framework :: Pytest", "Typing :: Typed"} <= set(classifiers)
    assert sorted(classifiers) == sorted(PROJECT["classifiers"])
    unconditional = [r for r in metadata.get_all("Requires-Dist") or [] if "extra ==" not in r]
    assert requirement_names(unconditional) == requirement_names(PROJECT["dependencies"])
    extras = set(metadata.get_all("Provides-Extra") or [])
    assert extras == set(PROJECT["optional-dependencies"])


def test_the_sdist_and_the_wheel_hold_the_package_and_its_metadata(tmp_path: Path) -> None:
    made = build(tmp_path)
    version = pytest_karenina.__version__
    assert [p.name for p in made] == [
        f"pytest_karenina-{version}-py3-none-any.whl",
        f"pytest_karenina-{version}.tar.gz",
    ]
    wheel, sdist = made
    info = f"pytest_karenina-{version}.dist-info"

    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        check_metadata(HeaderParser().parsestr(archive.read(f"{info}/METADATA").decode()))
        entry_points = configparser.ConfigParser()
        entry_points.read_string(archive.read(f"{info}/entry_points.txt").decode())
        license_text = archive.read(f"{info}/licenses/LICENSE").decode()
    assert {n for n in names if not n.startswith(f"{info}/")} == package_files()
    assert dict(entry_points["pytest11"]) == {"karenina": "pytest_karenina.plugin"}
    assert dict(entry_points["console_scripts"]) == {
        "pytest-karenina": "pytest_karenina.plugin.cli:main"
    }
    assert license_text == (ROOT / "LICENSE").read_text(encoding="utf-8")

    with tarfile.open(sdist) as archive:
        members = [m.name.split("/", 1) for m in archive.getmembers() if m.isfile()]
        pkg_info = archive.extractfile(f"pytest_karenina-{version}/PKG-INFO")
        assert pkg_info is not None
        check_metadata(HeaderParser().parsestr(pkg_info.read().decode()))
    assert {top for top, path in members} == {f"pytest_karenina-{version}"}
    assert {path.split("/")[0] for top, path in members} == SDIST_TOP
    assert {p for _, p in members if p.startswith("pytest_karenina/")} == package_files()
    assert "examples/quickstart.jsonld" in {p for _, p in members}


def fresh_environment(tmp_path: Path, wheel: Path) -> Path:
    """A virtual environment that sees this Python's packages (torch and friends, not
    downloaded again) with the wheel installed in it; its ``bin`` directory."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True)  # fmt: skip
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return venv / "bin"


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # Nothing from this checkout or this run may reach the installed copy.
    drop = ("PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "GITHUB_ACTIONS", "CI")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_installed_wheel_runs_the_command_and_the_quickstart(tmp_path: Path) -> None:
    (wheel,) = build(tmp_path / "dist", "--wheel")
    wheel_version = wheel.name.split("-")[1]
    bin_dir = fresh_environment(tmp_path, wheel)
    work = tmp_path / "work"
    work.mkdir()
    for name in ("quickstart.jsonld", "quickstart.replay.jsonl"):
        shutil.copy(ROOT / "examples" / name, work / name)

    where = run([str(bin_dir / "python"), "-c", "import pytest_karenina.plugin as p; "
                 "print(p.__file__)"], work)  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(bin_dir.parent), where.stdout

    helped = run([str(bin_dir / "pytest-karenina"), "--help"], work)
    assert helped.returncode == 0, helped.stderr
    assert "merge" in helped.stdout
    version = run([str(bin_dir / "pytest-karenina"), "--version"], work)
    assert (version.returncode, version.stdout) == (0, f"pytest-karenina {wheel_version}\n")

    # The quickstart's settings, which this repository's pyproject.toml gives it.
    quickstart = run(
        [str(bin_dir / "python"), "-m", "pytest", "-p", "no:cacheprovider", "-q",
         "--karenina", "quickstart.jsonld", "--karenina-replay", "strict",
         "--karenina-answering-model", "openai:gpt-4.1-mini",
         "--karenina-parsing-model", "openai:gpt-4.1-mini", "--karenina-abstention", "yes",
         "--html", "report.html"],
        work,
    )  # fmt: skip
    assert quickstart.returncode == pytest.ExitCode.TESTS_FAILED, quickstart.stderr
    assert re.search(r"^3 failed, 9 passed in ", quickstart.stdout, re.M), quickstart.stdout
    report = (work / "report.html").read_text(encoding="utf-8")
    assert 'id="karenina-report-config"' in report  # the wheel carries the report's script
