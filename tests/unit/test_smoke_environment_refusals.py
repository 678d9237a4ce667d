"""A build's environment that cannot be smoke-tested, each in one line with its hint
(README "Exit codes": 4, an environment problem). The environment's Python is a real
process: a shell script answering the version probe as written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.core.errors import EnvironmentProblem
from toolkit.verify import smoke
from toolkit.verify.smoke_builds import SmokeTarget


def _target(env: Path, **manifest: object) -> SmokeTarget:
    return SmokeTarget("b-1", {"build": {"id": "b-1", "package": "p"}, "dist": "p-dist",
                               **manifest}, env)


def _python(env: Path, body: str) -> None:
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").write_text("#!/bin/sh\n" + body)
    (env / "bin" / "python").chmod(0o755)


def test_an_environment_without_python_says_how_to_make_it(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem) as err:
        smoke.check_environment(_target(tmp_path / "env"))
    assert err.value.message == f"environment {tmp_path / 'env'} of b-1 does not exist (no bin/python)"
    assert err.value.hint == "check --env, or run the build again (its create-env step makes it)"
    assert err.value.exit_code == 4


def test_the_installed_version_is_the_probes_answer(tmp_path: Path) -> None:
    _python(tmp_path / "env", 'echo " 1.2.3 "\n')
    assert smoke.check_environment(_target(tmp_path / "env")) == "1.2.3"


@pytest.mark.parametrize(("body", "manifest", "why"), [
    ("echo\n", {}, ""),
    ("echo 1.0; exit 1\n", {"outcome": "ok"}, ""),
    ("echo\n", {"outcome": "failed"}, " (its build ended: failed)"),
    ("echo\n", {"outcome": "failed", "failed_step": "build-wheel"},
     " (its build ended: failed at step build-wheel)"),
    ("echo\n", {"outcome": "interrupted", "failed_step": "build-wheel"}, ""),
])
def test_a_package_not_installed_says_where_its_build_stopped(
        tmp_path: Path, body: str, manifest: dict[str, object], why: str) -> None:
    _python(tmp_path / "env", body)
    with pytest.raises(EnvironmentProblem) as err:
        smoke.check_environment(_target(tmp_path / "env", **manifest))
    assert err.value.message == f"p-dist is not installed in {tmp_path / 'env'}{why}"
    assert err.value.hint == "run the build b-1 to its install-wheel step"


def test_a_python_that_cannot_start_is_named(tmp_path: Path) -> None:
    (tmp_path / "env" / "bin").mkdir(parents=True)
    (tmp_path / "env" / "bin" / "python").write_text("not executable")
    with pytest.raises(EnvironmentProblem) as err:
        smoke.check_environment(_target(tmp_path / "env"))
    assert err.value.message.startswith(
        f"the environment's Python {tmp_path / 'env' / 'bin' / 'python'} does not run: ")
