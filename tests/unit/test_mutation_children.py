"""A Python process a test starts while ``nox -s mutants`` runs takes part in the mutation run
(tests/mutation_child/sitecustomize.py, installed by tests/conftest.py under mutmut).

The mutated module is made by mutmut itself (its ``mutate_file_contents``) from a two-line
source whose mutant is known by hand (``a + b`` becomes ``a - b``); the children are real
interpreters started as a test starts them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mutmut")

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "tests" / "mutation_child"
SOURCE = "def add(a, b):\n    return a + b\n"
CALL = "import demo_mod; print(demo_mod.add(5, 3))"


@pytest.fixture(scope="module")
def mutants(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mutants/demo_mod.py`` as mutmut writes it (in a child: mutmut reads its settings from
    the working folder's pyproject.toml)."""
    project = tmp_path_factory.mktemp("project")
    (project / "pyproject.toml").write_text('[tool.mutmut]\nsource_paths = ["demo_mod.py"]\n')
    folder = project / "mutants"
    folder.mkdir()
    code = ("import sys\nfrom mutmut.mutation.file_mutation import mutate_file_contents\n"
            "sys.stdout.write(mutate_file_contents('demo_mod.py', sys.argv[1]).code)")
    out = subprocess.run([sys.executable, "-c", code, SOURCE], cwd=project, check=True,
                         capture_output=True, text=True).stdout
    assert "x_add__mutmut_1" in out  # mutmut's own name of the one mutant, `a - b`
    (folder / "demo_mod.py").write_text(out)
    return folder


def _child(python: str, mutants: Path, hits: Path, under_test: str,
           cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MUTANT_UNDER_TEST")}
    env.update(PYTHONPATH=os.pathsep.join((str(HOOK), str(mutants))), MUTANT_UNDER_TEST=under_test,
               TOOLKIT_MUTANTS_ROOT=str(mutants), TOOLKIT_MUTMUT_HITS=str(hits))
    return subprocess.run([python, "-c", CALL], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)


def test_a_child_under_stats_reports_the_functions_it_called(mutants: Path, tmp_path: Path) -> None:
    res = _child(sys.executable, mutants, tmp_path, "stats", cwd=tmp_path)
    assert (res.returncode, res.stdout) == (0, "8\n"), res.stderr  # the original: 5 + 3
    files = list(tmp_path.glob("*.hits"))
    assert len(files) == 1, files  # one file per child, named by its pid; no .part left
    assert not list(tmp_path.glob("*.part"))
    assert files[0].read_text().split() == ["demo_mod.x_add"]  # mutmut's mangled name


def test_a_child_runs_the_mutant_under_test_and_reports_nothing(mutants: Path, tmp_path: Path) -> None:
    res = _child(sys.executable, mutants, tmp_path, "demo_mod.x_add__mutmut_1", cwd=tmp_path)
    assert (res.returncode, res.stdout) == (0, "2\n"), res.stderr  # the mutant: 5 - 3
    assert not list(tmp_path.iterdir())
    clean = _child(sys.executable, mutants, tmp_path, "", cwd=tmp_path)
    assert clean.stdout == "8\n"  # no mutant active: the original


def test_an_interpreter_without_mutmut_does_not_see_the_mutated_sources(
        mutants: Path, tmp_path: Path) -> None:
    """A session's own venv has no mutmut, so the mutated file would not import: the child
    drops mutants/ from its path, here also as its working folder, and runs what it has
    (here: nothing, so the import fails by name rather than on mutmut)."""
    bare = "/usr/bin/python3"
    probe = subprocess.run([bare, "-c", "import mutmut"], capture_output=True, check=False)
    if not Path(bare).exists() or probe.returncode == 0:
        pytest.skip(f"needs an interpreter without mutmut at {bare}")
    for cwd in (tmp_path, mutants):
        res = _child(bare, mutants, tmp_path, "stats", cwd=cwd)
        assert res.returncode == 1
        assert "No module named 'demo_mod'" in res.stderr, res.stderr
        assert "mutmut" not in res.stderr
    assert not list(tmp_path.glob("*.hits"))
