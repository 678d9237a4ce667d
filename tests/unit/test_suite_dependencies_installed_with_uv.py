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
from toolkit.verify.smoke_builds import SmokeTarget


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


def test_a_smoke_run_says_what_it_installs_before_the_install_fails(tmp_path: Path) -> None:
    """``smoke.run`` reports the install on its reporter (the line a user sees before uv's
    error), then stops with exit 4 before any test runs."""
    # the package's version probe gets its name last; the suite's probe gets module names
    _python(tmp_path / "env", 'for a; do last=$a; done\n'
            'if [ "$last" = sample-dist ]; then echo 0.1.0; else echo zstandard; fi\n')
    uv = _script(tmp_path / "uv", "echo 'no network' >&2; exit 2\n")
    manifest = {"build": {"id": "sample-0.1.0-cp311-rocm5.2"}, "dist": "sample-dist"}
    target = SmokeTarget("sample-0.1.0-cp311-rocm5.2", manifest, tmp_path / "env")
    reporter = ListReporter()
    with pytest.raises(EnvironmentProblem) as err:
        smoke.run(target, ["gfx90a"], reporter=reporter, uv=str(uv))
    assert err.value.exit_code == 4 and err.value.message.endswith("no network")
    assert reporter.lines == [f"smoke: installing zstandard into {tmp_path / 'env'}"]
