"""The inspect layer's rules, read from its source: it never prints or writes to the
console, runs commands only through ``toolkit.core.proc``, imports only ``toolkit.core``
and itself, and its ELF and offload readers do not import each other in a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import toolkit.inspect

PACKAGE = Path(toolkit.inspect.__file__).parent
MODULES = sorted(PACKAGE.glob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _imports(tree: ast.Module) -> set[str]:
    """Modules imported anywhere (module or function level), except under TYPE_CHECKING."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for n in ast.walk(node)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


def test_the_package_has_modules() -> None:
    assert {"checks.py", "elf.py", "offload.py", "policy.py"} <= {p.name for p in MODULES}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_console_output(path: Path) -> None:
    tree = _tree(path)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    assert not [c.lineno for c in calls if c.func.id in ("print", "input", "breakpoint")]
    streams = [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute)
        and n.attr in ("stdout", "stderr", "__stdout__", "__stderr__")
        and isinstance(n.value, ast.Name)
        and n.value.id == "sys"
    ]
    assert not streams, f"{path.name} touches sys.stdout/stderr at lines {streams}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_imports_stay_in_core_and_inspect(path: Path) -> None:
    toolkit_imports = {m for m in _imports(_tree(path)) if m == "toolkit" or m.startswith("toolkit.")}
    bad = {m for m in toolkit_imports if not m.startswith(("toolkit.core", "toolkit.inspect"))}
    assert not bad, f"{path.name} imports {sorted(bad)}"
    others = _imports(_tree(path))
    assert not {"subprocess", "os.system", "os.popen"} & others, "commands go through toolkit.core.proc"


def test_offload_does_not_import_the_elf_reader() -> None:
    """elf -> gpuscan -> offload, one way: the readers below never import the ELF reader."""
    for low in ("offload.py", "gpuscan.py", "amdgpu.py"):
        assert not {m for m in _imports(_tree(PACKAGE / low)) if m.startswith("toolkit.inspect.elf")}
    assert "toolkit.inspect.gpuscan" in _imports(_tree(PACKAGE / "elf.py"))
    assert "toolkit.inspect.offload" in _imports(_tree(PACKAGE / "gpuscan.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_modules_are_small(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= 500
