"""Every ``uv pip install`` a plan runs is one uv takes: each option is one ``uv pip install
--help`` lists (the judge: the installed uv itself), a value is one of its possible values
where uv names them, and every other word is a PEP 508 requirement (``packaging``) or a
placeholder the executor fills."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from toolkit.env.host import HostFacts, SystemRocm
from toolkit.plan.layout import Layout
from toolkit.plan.locks import LockRef, inputs_hash, lock_name
from toolkit.plan.model import Options, Plan
from toolkit.plan.planner import plan
from toolkit.plan.provision import sources_for
from toolkit.plan.recipes import load_matrix
from toolkit.plan.recipes.sample import demo_build

LAYOUT = Layout(Path("/w"), Path("/c"))
_OPTION = re.compile(r"^\s+(?:-(\w), )?--([a-z][a-z-]*)(?: <[A-Z_]+>)?")


def _uv() -> str:
    found = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    if not Path(found).exists():
        pytest.skip("uv is not installed (pip install -e '.[dev]')")
    return found


@cache
def uv_options() -> dict[str, tuple[bool, frozenset[str] | None]]:
    """``--name`` (and ``-x``) -> (takes a value, its possible values when uv lists them)."""
    res = subprocess.run([_uv(), "pip", "install", "--help"], capture_output=True, text=True,
                         timeout=60, check=True, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
    out: dict[str, tuple[bool, frozenset[str] | None]] = {}
    blocks: list[tuple[list[str], bool, str]] = []
    for line in res.stdout.splitlines():
        m = _OPTION.match(line)
        if m:
            names = [f"--{m[2]}", *([f"-{m[1]}"] if m[1] else [])]
            blocks.append((names, "<" in line.split("  ")[0] + line[:m.end()], line[m.end():]))
        elif blocks:
            blocks[-1] = (blocks[-1][0], blocks[-1][1], blocks[-1][2] + " " + line.strip())
    for names, takes, text in blocks:
        values = re.search(r"\[possible\s+values:\s*([^\]]+)\]", " ".join(text.split()))
        choices = frozenset(v.strip() for v in values[1].split(",")) if values else None
        for name in names:
            out[name] = (takes, choices)
    return out


def _judge(argv: tuple[str, ...], placeholders: set[str]) -> list[str]:
    """What uv would not take in ``argv`` (after ``uv pip install``)."""
    known = uv_options()
    wrong: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word.startswith("-"):
            name, _, value = word.partition("=")
            if name not in known:
                wrong.append(f"unknown option {word}")
            elif known[name][0]:
                if not value:
                    i += 1
                    value = argv[i] if i < len(argv) else ""
                choices = known[name][1]
                if choices is not None and value not in choices:
                    wrong.append(f"{name} {value}: not one of {sorted(choices)}")
            elif value:
                wrong.append(f"{name} takes no value")
        elif word not in placeholders:
            try:
                Requirement(word)
            except Exception as exc:  # packaging's InvalidRequirement
                wrong.append(f"not a requirement: {word} ({exc})")
        i += 1
    return wrong


def _plans() -> list[Plan]:
    m = load_matrix()
    host = HostFacts(cores=16, mem_available_gib=64.0, uv="/opt/uv/bin/uv",
                     system_rocm=SystemRocm("/opt/rocm", "6.4"))
    picked = {(b.package.name, b.rocm.version): b for b in m.builds if b.python == "3.12"}
    out = []
    for b in [*picked.values(), m.build("apex-1.8.0-cp312-rocm7.0")]:  # its torch: a find-links page
        out.append(plan(m, b, Options(rocm_sdk_test=True, find_links=("/tmp",)), host, LAYOUT))
        links = Options(find_links=("/tmp",))
        name = lock_name(m, b)
        ref = LockRef(name, f"/w/locks/{name}", inputs_hash(b, sources_for(m, b, links)))
        out.append(plan(m, b, Options(locks=(ref,), find_links=("/tmp",)), host, LAYOUT))
    out.append(plan(m, demo_build("3.12", ("/opt/rocm", "6.4")), Options(rocm_from="system", gfx=("gfx90a",)),
                    host, LAYOUT))
    return out


def test_the_help_is_read() -> None:
    known = uv_options()
    assert known["-r"] == known["--requirements"] and known["-r"][0]
    assert known["--index-strategy"] == (True, frozenset({"first-index", "unsafe-first-match",
                                                          "unsafe-best-match"}))
    assert known["--no-deps"] == (False, None) and "--nope" not in known
    wrong = _judge(("--prerelease=sometimes", "--no-deps=1", "--nope", "rocm[", "{WHEEL}"), {"{WHEEL}"})
    assert wrong[:3] == [
        "--prerelease sometimes: not one of ['allow', 'disallow', 'explicit', 'if-necessary', "
        "'if-necessary-or-explicit']", "--no-deps takes no value", "unknown option --nope"]
    assert len(wrong) == 4 and wrong[3].startswith("not a requirement: rocm[ (")


def test_every_install_of_every_plan_is_one_uv_takes() -> None:
    seen: set[str] = set()
    for p in _plans():
        for step in p.steps:
            argv = step.argv
            if argv[:3] != ("/opt/uv/bin/uv", "pip", "install"):
                continue
            seen.add(step.name)
            assert _judge(argv[3:], {"{WHEEL}"}) == [], (p.build.id, step.name, argv)
            if "--refresh-package" in argv:  # the SDK's own project is refreshed
                refreshed = argv[argv.index("--refresh-package") + 1]
                spec = sources_for(load_matrix(), p.build, p.options or Options()).sdk_spec
                assert spec is not None
                assert canonicalize_name(refreshed) == canonicalize_name(Requirement(spec).name)
    assert seen >= {"install-rocm-sdk", "install-torch", "pin-torch", "install-requirements",
                    "install-wheel", "provide-tbb"}
