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
