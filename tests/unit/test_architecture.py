"""The shape of the package: one-way layers, no cycles, small modules, a library that never
prints. Also run by `nox -s lint`."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "toolkit"
MAX_LINES = 500


def _modules() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if "examples" not in p.relative_to(PACKAGE).parts]


def test_no_module_over_500_lines() -> None:
    big = {str(p.relative_to(ROOT)): n for p in _modules()
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert big == {}


def test_the_library_never_prints() -> None:
    """print() appears only in the entry layer (toolkit/cli) and in code run as a child."""
    offenders = []
    for path in _modules():
        if "cli" in path.relative_to(PACKAGE).parts[:1]:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "print"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_no_bare_subprocess_outside_the_runner() -> None:
    """Every command goes through toolkit.core.proc (timeout, one error type)."""
    offenders = []
    for path in _modules():
        if path == PACKAGE / "core" / "proc.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""])
                if "subprocess" in names:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_import_contracts_hold() -> None:
    """Layers import one way and nothing imports in a cycle (import-linter, pyproject.toml)."""
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        found = shutil.which("lint-imports")
        if found is None:
            pytest.fail("import-linter is not installed (pip install -e '.[dev]')")
        exe = Path(found)
    proc = subprocess.run([str(exe)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert len(declared) >= 3, "the layers, the inspect layers and the no-cycles contracts"
    assert f"Contracts: {len(declared)} kept, 0 broken." in proc.stdout


# ------------------------------------------------------------------ package knowledge in recipes
def _package_names() -> frozenset[str]:
    """Every recipe's name (the registry) and every package's (the data): what code outside
    plan/recipes must not compare with."""
    from toolkit.plan.recipes import REGISTRY, load_matrix

    return frozenset(REGISTRY) | frozenset(load_matrix().packages)


def _name_comparisons(source: str, names: frozenset[str]) -> list[int]:
    """Lines comparing a value with a recipe's or package's name (``recipe == "apex"``,
    ``name in ("apex", "fbgemm_gpu")``, ``!=``, ``not in``)."""
    def named(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in names
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(named(e) for e in node.elts)
        return False

    lines = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Compare)
                and any(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops)
                and any(named(side) for side in (node.left, *node.comparators))):
            lines.append(node.lineno)
        elif isinstance(node, ast.match_case) and isinstance(node.pattern, ast.MatchValue) \
                and named(node.pattern.value):
            lines.append(node.pattern.lineno)
    return lines


def test_no_recipe_name_comparison_outside_the_recipes() -> None:
    """What a package needs is said by its recipe (plan/recipes/), found through the registry:
    no code elsewhere (nor the smoke suite) asks whether a build is apex's."""
    names = _package_names()
    files = [p for p in _modules() if p.relative_to(PACKAGE).parts[:2] != ("plan", "recipes")]
    files += sorted((ROOT / "smoke_tests").glob("*.py"))
    offenders = [f"{path.relative_to(ROOT)}:{line}" for path in files
                 for line in _name_comparisons(path.read_text(encoding="utf-8"), names)]
    assert offenders == []


@pytest.mark.parametrize("planted", [
    'if data.get("recipe") == "sample":\n    pass\n',
    'ok = build.recipe != "apex"\n',
    'ok = package.name in ("apex", "fbgemm_gpu")\n',
    'ok = "fbgemm_gpu" not in {b.package.name for b in builds}\n',
    'match recipe:\n    case "apex":\n        pass\n',
])
def test_a_planted_recipe_name_comparison_is_found(planted: str) -> None:
    assert _name_comparisons(planted, _package_names()) != []


def test_comparisons_with_other_words_are_not_recipe_knowledge() -> None:
    assert _name_comparisons('ok = kind == "pip" or name in ("tbb", "rocm")\n',
                             _package_names()) == []
