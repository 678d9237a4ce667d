"""One options object, resolved once (``toolkit.plan.request``): the CLI, nox posargs and
invoke give the same ``Options`` for the same words; ``resolve`` checks and completes them;
``prepare`` is the one way from a request to its plan, layout and host."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Literal

import pytest

from tests.fixtures.system_rocm import rocm_at
from toolkit.cli.main import build_parser
from toolkit.cli.sessions import session_parser
from toolkit.core.errors import UsageError
from toolkit.env.host import SystemRocm
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.recipes import load_matrix
from toolkit.plan.request import Request, given_options, host_for, prepare, prepare_all, resolve

WORDS = ["--gfx", "gfx90a,gfx908", "--no-smoke", "--channel", "nightly", "--find-links",
         "http://127.0.0.1:9/x/", "--naming", "upstream", "--rebuild", "--no-lock"]
BUILD = "apex-1.8.0-cp312-rocm7.0"


def test_cli_and_nox_words_give_the_same_options() -> None:
    cli = build_parser().parse_args(["plan", BUILD, *WORDS])
    nox = session_parser("build-3.12-rocm7.0").parse_args(WORDS)
    assert given_options(cli, {}) == given_options(nox, {})
    # what the words say, read by hand
    assert given_options(cli, {}) == Options(
        gfx=("gfx90a,gfx908",), channel="nightly", find_links=("http://127.0.0.1:9/x/",),
        naming="upstream", smoke=False, rebuild=True, no_lock=True)


def test_a_flag_wins_over_the_ci_variable_which_fills_in_otherwise() -> None:
    env = {"TOOLKIT_ROCM_FROM": "pip", "TOOLKIT_ROCM_CHANNEL": "dev",
           "TOOLKIT_ROCM_FAMILY": "gfx94X-dcgpu", "TOOLKIT_ROCM_INDEX_URL": "https://i.test/"}
    args = build_parser().parse_args(["plan", BUILD, "--channel", "nightly"])
    got = given_options(args, env)
    assert (got.channel, got.rocm_from, got.family, got.index_url) == \
        ("nightly", "pip", "gfx94X-dcgpu", "https://i.test/")
    assert given_options(args, {}).rocm_from is None


@pytest.mark.parametrize(("field", "what", "value", "valid"), [
    ("naming", "naming", "pep", "toolkit, upstream"),  # --naming toolkit|upstream
    ("rocm_from", "ROCm SDK provider", "conda", "pip, system"),
    ("channel", "channel", "beta", "stable")])
def test_resolve_refuses_in_one_line_naming_what_is_valid(field: str, what: str, value: str,
                                                          valid: str, tmp_path: Path) -> None:
    bad = dataclasses.replace(Options(), **{field: value})
    with pytest.raises(UsageError) as err:
        resolve(bad, load_matrix(), Layout(tmp_path, tmp_path / "cache"))
    assert value in str(err.value) and valid in str(err.value)
    assert err.value.message.startswith(f"unknown {what} {value!r}; valid: "), err.value.message
    assert "\n" not in str(err.value)


def test_resolve_expands_gfx_and_reads_locks_unless_no_lock(tmp_path: Path) -> None:
    layout = Layout(tmp_path, tmp_path / "cache")
    (tmp_path / "locks").mkdir()
    (tmp_path / "locks" / "3.12-rocm7.0.txt").write_text("torch==2.8.0\n", encoding="utf-8")
    got = resolve(Options(gfx=("gfx90a,gfx908", "gfx90a")), load_matrix(), layout)
    assert got.gfx == ("gfx90a", "gfx908")  # comma lists split, duplicates dropped, in order
    assert [Path(ref.path).name for ref in got.locks] == ["3.12-rocm7.0.txt"]
    assert resolve(Options(no_lock=True), load_matrix(), layout).locks == ()


def test_prepare_plans_the_requested_build_on_the_host_it_was_given(tmp_path: Path) -> None:
    matrix = load_matrix()
    build = matrix.build(BUILD)
    layout = Layout(tmp_path, tmp_path / "cache")
    rocm = SystemRocm("/opt/rocm-test", "7.0.2")
    plan, got_layout, host = prepare(Request(
        matrix, (build,), Options(gfx=("gfx942",)), layout,
        interpreters={"3.12": "/opt/py/bin/python3.12"}, rocm="given", system_rocm=rocm))
    assert plan.build == build and plan.targets == ("gfx942",) and got_layout is layout
    assert host.system_rocm == rocm and host.interpreters["3.12"] == "/opt/py/bin/python3.12"
    assert "/opt/py/bin/python3.12" in plan.to_json()  # the plan uses that interpreter


def test_prepare_is_for_one_build_prepare_all_for_several(tmp_path: Path) -> None:
    matrix = load_matrix()
    builds = tuple(matrix.pair_builds("3.12", "7.0"))[:2]
    request = Request(matrix, builds, Options(), Layout(tmp_path, tmp_path / "cache"),
                      rocm="given")
    with pytest.raises(ValueError) as err:
        prepare(request)
    # how many it was given, and the call that takes several
    assert str(err.value).startswith(f"prepare plans one build; got {len(builds)}: "), str(err.value)
    assert str(err.value).endswith(": use prepare_all"), str(err.value)
    plans, _, _ = prepare_all(request)
    assert [p.build.id for p in plans] == [b.id for b in builds]


@pytest.mark.parametrize("how", ["find", "require"])
def test_a_pip_release_built_on_the_system_rocm_looks_for_its_own_version(
        how: Literal["find", "require"], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ROCm 7.13 is a pip release (rocm.toml: no SDK version of its own); with --rocm-from
    system the install looked for is one of ROCm 7.13, preferred over an earlier-listed 6.4
    ($ROCM_PATH is looked at before $ROCM_HOME, toolkit.env.rocm.system_roots)."""
    old = rocm_at(tmp_path / "rocm-6.4.1", "6.4.1")
    new = rocm_at(tmp_path / "rocm-7.13.0", "7.13.0")
    monkeypatch.setenv("ROCM_PATH", str(old))
    monkeypatch.setenv("ROCM_HOME", str(new))
    monkeypatch.delenv("HIP_PATH", raising=False)
    matrix = load_matrix()
    build = matrix.build("apex-1.9.0-cp310-rocm7.13")
    assert build.rocm.sdk.provider == "pip" and build.rocm.sdk.version is None
    host = host_for(Request(matrix, (build,), Options(rocm_from="system"),
                            Layout(tmp_path, tmp_path / "cache"), rocm=how))
    assert host.system_rocm == SystemRocm(str(new), "7.13.0")
