"""A build's identity apart from its host (toolkit.run.identity) and repro's comparison of
them (toolkit.verify.repro.plan_differences, _verdict, with_credentials)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zipfile
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from toolkit.core.errors import UsageError
from toolkit.core.reporter import ListReporter as Lines
from toolkit.data.matrix import load_matrix
from toolkit.env.host import HostFacts, SystemRocm
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan
from toolkit.plan.planner import plan
from toolkit.plan.recipes.sample import demo_build
from toolkit.run.identity import (
    host_paths,
    identity_differences,
    normal_steps,
    plan_sha256,
    planned_identity,
    tokenize,
)
from toolkit.verify import repro

BUILD = "apex-1.8.0-cp312-rocm7.0"


def matrix_plan(layout: Layout, *, uv: str, gfx: tuple[str, ...] = ("gfx942",),
                cores: int = 16, toolkit_python: str = "/usr/bin/python3") -> Plan:
    m = load_matrix()
    host = HostFacts(cores=cores, mem_available_gib=64.0, uv=uv, ccache="/usr/bin/ccache")
    return plan(m, m.build(BUILD), Options(gfx=gfx), host, layout, toolkit_python=toolkit_python)


def demo_plan(layout: Layout, interpreter: str, source: str) -> Plan:
    build = demo_build("3.11", ("/usr", "5.2"))
    host = HostFacts(interpreters=MappingProxyType({"3.11": interpreter}), uv="/x/uv",
                     system_rocm=SystemRocm("/usr", "5.2"))
    return plan(load_matrix(), build, Options(gfx=("gfx90a", "gfx908"), rocm_from="system",
                                              source=source), host, layout,
                toolkit_python=interpreter)


# ----------------------------------------------------------------------------- tokenize
@pytest.mark.parametrize("text, expected", [
    ("/ci/w/build/x", "<workdir>/build/x"),
    ("-ffile-prefix-map=/ci/w/build=/build", "-ffile-prefix-map=<workdir>/build=/build"),
    ("/ci/wx/build", "/ci/wx/build"),  # another folder that starts alike: kept
    ("/ci/w.old", "/ci/w.old"),
    ("/ci/w/c/envs/3.12", "<cache>/envs/3.12"),  # the longer path wins
    ("/opt/py/bin/python -m x", "<python> -m x"),
])
def test_tokenize_replaces_whole_paths_longest_first(text: str, expected: str) -> None:
    paths = {"workdir": "/ci/w", "cache": "/ci/w/c", "interpreter": "/opt/py/bin/python"}
    assert tokenize(text, paths) == expected


def test_both_pythons_share_one_token() -> None:
    """Whether the build interpreter is the toolkit's own is a host fact, not identity."""
    one = tokenize("a=/p/python b=/p/python", {"interpreter": "/p/python",
                                               "toolkit_python": "/p/python"})
    two = tokenize("a=/p/python b=/q/python", {"interpreter": "/p/python",
                                               "toolkit_python": "/q/python"})
    assert one == two == "a=<python> b=<python>"


# ----------------------------------------------------------------------------- identity
def test_identity_ignores_every_host_path_and_job_count() -> None:
    a = matrix_plan(Layout(Path("/__w/toolkit"), Path("/github/home/.cache/t")), uv="/usr/bin/uv")
    b = matrix_plan(Layout(Path("/home/me/src/tk"), Path("/home/me/.cache/rocm-wheel-toolkit")),
                    uv="/home/me/.local/bin/uv", cores=2, toolkit_python="/home/me/venv/bin/python")
    la = Layout(Path("/__w/toolkit"), Path("/github/home/.cache/t"))
    lb = Layout(Path("/home/me/src/tk"), Path("/home/me/.cache/rocm-wheel-toolkit"))
    assert json.dumps(a.as_json()) != json.dumps(b.as_json())  # the raw plans do differ
    assert planned_identity(a, la) == planned_identity(b, lb)


def test_demo_identity_across_interpreters_sources_and_folders() -> None:
    la, lb = Layout(Path("/tmp/a"), Path("/tmp/a-cache")), Layout(Path("/t/bb"), Path("/t/c"))
    a = demo_plan(la, "/tmp/x/opt/python/cp311-cp311/bin/python", "/tmp/a/tk/examples/hip")
    b = demo_plan(lb, "/home/u/.pyenv/versions/3.11.7/bin/python3.11", "/t/clone-b/examples/hip")
    assert planned_identity(a, la) == planned_identity(b, lb)
    assert host_paths(a, la)["interpreter"] == "/tmp/x/opt/python/cp311-cp311/bin/python"
    assert host_paths(b, lb)["source"] == "/t/clone-b/examples/hip"


def test_identity_differs_where_the_wheel_would() -> None:
    layout = Layout(Path("/w"), Path("/c"))
    one = planned_identity(matrix_plan(layout, uv="/uv"), layout)
    two = planned_identity(matrix_plan(layout, uv="/uv", gfx=("gfx942", "gfx90a")), layout)
    diffs = identity_differences(one, two)
    assert [d.split(" ")[0] for d in diffs] == ["targets", "plan_sha256"]
    assert '["gfx942"] recorded, ["gfx942", "gfx90a"] here' in diffs[0]


def test_normal_steps_drop_host_env_and_credentials() -> None:
    steps = [{"name": "s", "env": {"MAX_JOBS": "16", "CMAKE_CXX_COMPILER_LAUNCHER": "/ccache",
                                   "ROCM_PATH": "/w/r"},
              "argv": ["uv", "--index-url", "https://***@host/simple/"], "description": "x"}]
    assert normal_steps(steps, {"workdir": "/w"}) == [
        {"name": "s", "env": {"ROCM_PATH": "<workdir>/r"},
         "argv": ["uv", "--index-url", "https://host/simple/"]}]


# ----------------------------------------------------------------------------- repro
def recorded(p: Plan, layout: Layout) -> dict[str, Any]:
    """What a manifest holds about a plan (the fields plan_differences reads)."""
    return {"identity": planned_identity(p, layout), "host": {"paths": host_paths(p, layout)},
            "plan": json.loads(p.to_json())}


def test_repro_accepts_the_same_build_from_another_host() -> None:
    la, lb = Layout(Path("/__w/a"), Path("/ca")), Layout(Path("/home/u/b"), Path("/home/u/c"))
    data = recorded(matrix_plan(la, uv="/usr/bin/uv"), la)
    again = matrix_plan(lb, uv="/home/u/bin/uv", cores=3)
    assert repro.plan_differences(data, again, lb) == []


def test_repro_names_a_tampered_step() -> None:
    layout = Layout(Path("/w"), Path("/c"))
    p = matrix_plan(layout, uv="/uv")
    data = recorded(p, layout)
    for step in data["plan"]["steps"]:
        if step["name"] == "build-wheel":
            step["action"]["build"]["argv"] = ["touch", "/tmp/pwned"]
    assert repro.plan_differences(data, p, layout) == [
        "the manifest's identity is not the digest of its own plan",
        "step build-wheel: action differ"]


def test_repro_names_other_targets_first() -> None:
    layout = Layout(Path("/w"), Path("/c"))
    data = recorded(matrix_plan(layout, uv="/uv", gfx=("gfx90a",)), layout)
    diffs = repro.plan_differences(data, matrix_plan(layout, uv="/uv"), layout)
    assert diffs[0].startswith('targets ["gfx90a"] recorded, ["gfx942"] here')


def wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_verdict_identical_and_differs(tmp_path: Path) -> None:
    original = wheel(tmp_path / "a.whl", {"m/__init__.py": b"x = 1\n"})
    again = wheel(tmp_path / "b.whl", {"m/__init__.py": b"x = 2\n"})
    digest = hashlib.sha256(original.read_bytes()).hexdigest()
    data = {"wheel_sha256": digest, "wheel": str(original), "outcome": "ok"}
    out = Lines()
    assert repro._verdict(data, str(original), True, out) == 0
    assert out.lines == [f"identical: {digest}"]
    out = Lines()
    assert repro._verdict(data, str(again), True, out) == 1
    assert out.lines[0].startswith("differs: ") and out.lines[1] == "  m/__init__.py: contents"
    out = Lines()
    assert repro._verdict(data, str(original), False, out) == 1  # another tree: never identical
    assert "(--force)" in out.lines[1]


def test_with_credentials_only_from_a_matching_variable() -> None:
    url = "https://***@idx.example/simple/"
    assert repro.with_credentials(url, {"TOOLKIT_ROCM_INDEX_URL": "https://u:p@idx.example/simple/"}
                                  ) == "https://u:p@idx.example/simple/"
    assert repro.with_credentials(url, {"TOOLKIT_ROCM_INDEX_URL": "https://u:p@other/simple/"}
                                  ) == "https://idx.example/simple/"
    assert repro.with_credentials("https://plain/", {}) == "https://plain/"


def test_a_missing_recorded_source_is_one_line(tmp_path: Path) -> None:
    data = {"recipe": "generic", "options": {"source": str(tmp_path / "gone")}}
    with pytest.raises(UsageError, match="is not here; pass --source PATH"):
        repro._source(data, None)
    assert repro._source(data, str(tmp_path)) == str(tmp_path.resolve())


def test_plan_differences_reads_old_step_lists_as_different() -> None:
    layout = Layout(Path("/w"), Path("/c"))
    p = matrix_plan(layout, uv="/uv")
    data = recorded(p, layout)
    data["plan"]["steps"] = data["plan"]["steps"][:-1]
    data["identity"] = {**data["identity"], "plan_sha256": plan_sha256(data["plan"]["steps"],
                                                                        data["host"]["paths"])}
    (diff,) = repro.plan_differences(data, dataclasses.replace(p), layout)
    assert diff.startswith("steps ") and "publish recorded" not in diff and "planned here" in diff


def test_credentials_are_no_part_of_the_identity() -> None:
    layout = Layout(Path("/w"), Path("/c"))
    m = load_matrix()
    build = m.build(BUILD)

    def ident(url: str) -> dict[str, Any]:
        p = plan(m, build, Options(gfx=("gfx942",), index_url=url), HostFacts(uv="/uv"), layout)
        return planned_identity(p, layout)

    with_creds = ident("https://user:secret@idx.example/v2/")
    assert ident("https://idx.example/v2/") == with_creds
    assert with_creds["options"]["index_url"] == "https://idx.example/v2/"
    assert "secret" not in json.dumps(with_creds)
