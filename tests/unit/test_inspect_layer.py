"""The inspect layer's rules, read from its source: it never prints or writes to the
console, runs commands only through ``toolkit.core.proc``, imports only ``toolkit.core``
and itself, and its ELF and offload readers do not import each other in a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import toolkit.inspect

PACKAGE = Path(toolkit.inspect.__file__).parent
MODULES = sorted(PACKAGE.glob("**/*.py"))


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
    names = {p.relative_to(PACKAGE).as_posix() for p in MODULES}
    want = {"checks.py", "readers/elf.py", "readers/offload.py", "readers/policy.py", "rules/needed.py"}
    assert want <= names


def test_readers_judge_nothing() -> None:
    """readers/ turns bytes into facts; findings, severities and verdicts live in rules/ and above."""
    for path in sorted((PACKAGE / "readers").glob("*.py")):
        bad = {m for m in _imports(_tree(path))
               if m.startswith(("toolkit.inspect.rules", "toolkit.inspect.report", "toolkit.inspect.checks",
                                "toolkit.inspect.inputs"))}
        assert not bad, f"readers/{path.name} imports {sorted(bad)}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
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


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_imports_stay_in_core_and_inspect(path: Path) -> None:
    toolkit_imports = {m for m in _imports(_tree(path)) if m == "toolkit" or m.startswith("toolkit.")}
    bad = {m for m in toolkit_imports if not m.startswith(("toolkit.core", "toolkit.inspect"))}
    assert not bad, f"{path.name} imports {sorted(bad)}"
    others = _imports(_tree(path))
    assert not {"subprocess", "os.system", "os.popen"} & others, "commands go through toolkit.core.proc"


def test_offload_does_not_import_the_elf_reader() -> None:
    """elf -> gpuscan -> offload, one way: the readers below never import the ELF reader."""
    for low in ("offload.py", "gpuscan.py", "amdgpu.py"):
        imported = _imports(_tree(PACKAGE / "readers" / low))
        assert not {m for m in imported if m.startswith("toolkit.inspect.readers.elf")}
    assert "toolkit.inspect.readers.gpuscan" in _imports(_tree(PACKAGE / "readers" / "elf.py"))
    assert "toolkit.inspect.readers.offload" in _imports(_tree(PACKAGE / "readers" / "gpuscan.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_modules_are_small(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= 500
