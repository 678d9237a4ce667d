"""What the smoke runner installs into a build's environment before the suite runs
(``smoke.ensure_suite_deps``) and the uv command line it gives (uv's documented
``uv pip install --python PYTHON PACKAGE...``). The environment's Python and uv are real
processes: small shell scripts that answer as written here and record their arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.core.errors import EnvironmentProblem
from toolkit.core.reporter import ListReporter
from toolkit.verify import smoke


def _script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def _python(env: Path, body: str) -> Path:
    return _script(env / "bin" / "python", body)


def test_an_environment_whose_probe_fails_gets_every_dependency_with_xdist(tmp_path: Path) -> None:
    python = _python(tmp_path / "env", "exit 1\n")
    args = tmp_path / "uv-args"
    uv = _script(tmp_path / "uv", f'printf "%s\\n" "$@" > {args}\n')
    reporter = ListReporter()
    installed = smoke.ensure_suite_deps(python, str(uv), xdist=True, reporter=reporter)
    assert installed == ["packaging", "pytest", "pytest-xdist", "zstandard"]
    assert args.read_text().splitlines() == ["pip", "install", "--python", str(python),
                                             "packaging", "pytest", "pytest-xdist", "zstandard"]
    assert reporter.lines == [f"smoke: installing packaging, pytest, pytest-xdist, zstandard "
                              f"into {tmp_path / 'env'}"]


def test_the_probe_is_asked_for_the_sorted_module_names(tmp_path: Path) -> None:
    # the probe prints the names it was given that are missing: here, all of them
    python = _python(tmp_path / "env", 'shift 2\necho "$@"\n')
    args = tmp_path / "uv-args"
    uv = _script(tmp_path / "uv", f'printf "%s\\n" "$@" > {args}\n')
    assert smoke.ensure_suite_deps(python, str(uv), xdist=False) == \
        ["packaging", "pytest", "zstandard"]
    assert smoke.ensure_suite_deps(python, str(uv), xdist=True) == \
        ["packaging", "pytest", "pytest-xdist", "zstandard"]  # module xdist sorts before zstandard


def test_a_failed_install_names_the_packages_the_last_lines_and_what_to_do(tmp_path: Path) -> None:
    python = _python(tmp_path / "env", "echo pytest\n")
    uv = _script(tmp_path / "uv", "echo one; echo; echo two; echo three; echo four >&2; exit 2\n")
    with pytest.raises(EnvironmentProblem) as err:
        smoke.ensure_suite_deps(python, str(uv), xdist=False)
    assert err.value.message.startswith(f"could not install pytest into {tmp_path / 'env'}: ")
    assert err.value.message.endswith("four") and err.value.message.count(" | ") == 2
    assert err.value.hint == ("the smoke suite needs them in the build's environment (network "
                              "or --find-links)")
    silent = _script(tmp_path / "uv2", "exit 2\n")
    with pytest.raises(EnvironmentProblem) as err:
        smoke.ensure_suite_deps(python, str(silent), xdist=False)
    assert err.value.message.startswith(f"could not install pytest into {tmp_path / 'env'}: ")
