"""Small promises of the build options and of the files a run reads, each against the README
or a hand-written expectation: a recipe option given on the command line reaches the plan
(``--apex-ops jit``: apex's ``apex-ops=jit``); ``--allow-insecure-index`` covers
``--find-links`` too (README: "plain http only with --allow-insecure-index"); a refusal names
what it refused (the ``--changed-since`` index, the lock file, the TheRock script); a hipcc
that prints its version is read whatever its exit status."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from toolkit.cli.commands.plan import add_build_options
from toolkit.cli.main import main
from toolkit.core.errors import EnvironmentProblem, UsageError
from toolkit.plan.request import given_options
from toolkit.run import preflight, provisioning
from toolkit.verify import published
from toolkit.verify.upstream import therock_lines


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_build_options(p)
    return p.parse_args(list(argv))


def test_a_recipe_option_on_the_command_line_reaches_the_options() -> None:
    assert given_options(_args("--apex-ops", "jit"), environ={}).recipe_options == ("apex-ops=jit",)
    assert given_options(_args(), environ={}).recipe_options == ()


def test_insecure_find_links_only_when_allowed(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "apex-1.8.0-cp312-rocm7.0", "--find-links", "http://wheels.example.org/f/",
            "--workdir", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "refusing insecure find-links value http://wheels.example.org/f/" in err
    assert "--allow-insecure-index" in err
    assert main([*argv, "--allow-insecure-index"]) == 0
    assert "http://wheels.example.org/f/" in capsys.readouterr().out


def test_an_insecure_changed_since_index_is_named_as_one() -> None:
    with pytest.raises(UsageError) as err:
        published.read_published("http://index.example.org/simple/")
    assert err.value.message.startswith(
        "refusing insecure --changed-since index http://index.example.org/simple/")


def test_a_missing_lock_file_is_named_with_its_way_out(tmp_path: Path) -> None:
    missing = tmp_path / "requirements.lock"
    with pytest.raises(EnvironmentProblem) as err:
        provisioning._lock_text(str(missing))
    assert err.value.message == f"lock file {missing}: no such file"
    assert err.value.hint == "regenerate it, or pass --no-lock"
    assert provisioning._lock_text(None) is None


def test_a_therock_script_that_is_no_python_is_named() -> None:
    with pytest.raises(therock_lines.Unreadable) as err:
        therock_lines._url_map("INDEXES = {", "build_tools/setup_venv.py", "INDEXES")
    assert str(err.value).startswith("build_tools/setup_venv.py is not valid Python (line 1)")


def test_hipccs_version_line_is_read_whatever_its_exit(tmp_path: Path) -> None:
    """Some hipcc wrappers print the version and then fail on a missing compiler; the line is
    what counts. A hipcc that cannot start is named."""
    hipcc = tmp_path / "hipcc"
    hipcc.write_text("#!/bin/sh\necho 'HIP version: 6.2.41133-dd7f95766'\nexit 1\n")
    os.chmod(hipcc, 0o755)
    assert preflight.hipcc_version(str(hipcc)) == "6.2"
    with pytest.raises(EnvironmentProblem) as err:
        preflight.hipcc_version(str(tmp_path / "none"))
    assert err.value.message.startswith(f"cannot run {tmp_path / 'none'} --version: ")
