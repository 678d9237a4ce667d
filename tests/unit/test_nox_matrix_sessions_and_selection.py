"""The matrix's nox sessions and which sessions a nox command asks for, judged by nox's own
command-line parser (``nox -s A B``, ``-l``, ``-t``, ``-k``, ``--json``, ``NOXSESSION``) and
by the matrix data read with tomllib-independent counting: every (Python, ROCm) pair with a
build, ROCm releases in numeric order, then Pythons in numeric order."""

from __future__ import annotations

import pytest

from toolkit.cli import noxsupport
from toolkit.plan.recipes import load_matrix


def _numbers(text: str) -> tuple[int, ...]:
    """"6.10" -> (6, 10); a free-threaded Python ("3.13t") after its plain one."""
    return (*(int(p) for p in text.rstrip("t").split(".")), int(text.endswith("t")))


def test_one_pair_per_python_and_rocm_with_a_build_in_numeric_order() -> None:
    pairs = noxsupport.matrix_pairs()
    builds = load_matrix().builds
    assert {(py, rocm) for py, rocm, _ in pairs} == {(b.python, b.rocm.version) for b in builds}
    assert len(pairs) == len({(py, rocm) for py, rocm, _ in pairs})
    keys = [(_numbers(rocm) if rocm != "cpu" else (), _numbers(py)) for py, rocm, _ in pairs]
    gpu = [k for k, (_, rocm, _) in zip(keys, pairs, strict=True) if rocm != "cpu"]
    assert gpu == sorted(gpu)
    for py, rocm, tags in pairs:
        packages = sorted({b.package.name for b in builds if (b.python, b.rocm.version) == (py, rocm)})
        assert tags == [*packages, f"rocm{rocm}", f"py{py}", f"python{py}"]


@pytest.mark.parametrize(("argv", "defaults", "wanted"), [
    (["-s", "tests", "lint"], None, ["tests", "lint"]),
    (["--session", "tests"], ["lint"], ["tests"]),
    ([], ["tests", "lint"], ["tests", "lint"]),
    ([], None, None),
    (["-l"], None, None),
    (["--list"], ["tests"], None),
    (["-t", "build"], ["tests"], None),
    (["-k", "tests"], ["tests"], None),
    (["--json", "-l"], ["tests"], None),
    (["-s", "tests", "-t", "build"], None, None),
    (["-s", "tests", "-k", "lint"], None, None),
    (["--no-such-nox-option"], ["tests"], None),
])
def test_the_sessions_a_nox_command_runs(argv: list[str], defaults: list[str] | None,
                                         wanted: list[str] | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOXSESSION", raising=False)
    assert noxsupport.requested_sessions(argv, defaults) == wanted


def test_noxsession_names_the_sessions_as_nox_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOXSESSION", "tests,lint")
    assert noxsupport.requested_sessions([], None) == ["tests", "lint"]


def test_each_kind_of_matrix_session_says_what_it_does() -> None:
    assert noxsupport.KINDS == ("build", "smoke", "lock")
    for kind in noxsupport.KINDS:
        doc = noxsupport.DOCS[kind].format(python="3.12", rocm="7.0")
        assert "3.12" in doc and "7.0" in doc
    assert noxsupport.DOCS["lock"].format(python="3.12", rocm="7.0").startswith(
        "Write locks/3.12-rocm7.0.txt")
