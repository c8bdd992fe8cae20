"""Which configuration file plain pytest would read from a directory."""

from __future__ import annotations

from pathlib import Path

from pytest_karenina.plugin.options.config_place import invocation_config


def test_the_nearest_file_that_holds_a_pytest_section_wins(tmp_path: Path) -> None:
    project, inner = tmp_path / "project", tmp_path / "project" / "sub" / "deeper"
    inner.mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\nkarenina_x = 1\n")
    (project / "sub" / "pyproject.toml").write_text("[project]\nname = 'no pytest here'\n")
    (project / "sub" / "setup.cfg").write_text("[metadata]\nname = x\n")

    assert invocation_config(inner) == project / "pyproject.toml"

    (project / "sub" / "tox.ini").write_text("[pytest]\naddopts = -q\n")
    assert invocation_config(inner) == project / "sub" / "tox.ini"

    (project / "sub" / "pytest.ini").write_text("")
    assert invocation_config(inner) == project / "sub" / "pytest.ini"
