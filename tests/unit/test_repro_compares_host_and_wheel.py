"""What repro compares between the recording host and this one, and how it judges the rebuilt
wheel: each against hand-written manifests and hand-computed values (hashlib for digests,
ROCm's "major.minor" release naming, the README's exit codes)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path
from typing import Any

import pytest

from toolkit.core.errors import UsageError
from toolkit.core.reporter import ListReporter
from toolkit.verify import repro
from toolkit.verify.failures import Failure


@pytest.mark.parametrize(("version", "release"), [
    ("6.2.4", "6.2"), ("6.2", "6.2"), ("7.0.1.post2", "7.0"), ("6", "6"), ("", None), (None, None),
])
def test_a_rocm_release_is_its_major_and_minor(version: str | None, release: str | None) -> None:
    assert repro._major_minor(version) == release


def test_credentials_come_back_once_and_only_for_the_masked_url() -> None:
    env = {"TOOLKIT_ROCM_INDEX_URL": "https://u:p@idx.example/simple/"}
    assert repro.with_credentials(None, env) is None
    assert repro.with_credentials("https://idx.example/simple/", env) == "https://idx.example/simple/"
    # no variable: the masked part goes, ~/.netrc supplies the credentials
    assert repro.with_credentials("https://***@idx.example/***@/", {}) == "https://idx.example/***@/"
    assert repro.with_credentials("https://***@idx.example/simple/", {"TOOLKIT_ROCM_INDEX_URL": ""}) \
        == "https://idx.example/simple/"


def test_a_dirty_build_is_never_matched_by_another_tree() -> None:
    recorded, here = "a" * 12 + "b" * 52, "c" * 12 + "d" * 52
    assert repro._dirty_difference(None, None) == []
    assert repro._dirty_difference(recorded, recorded) == []
    (clean_build,) = repro._dirty_difference(None, here)
    assert "this checkout has uncommitted changes" in clean_build and "c" * 12 in clean_build
    assert "d" not in clean_build.split("diff ")[1].split(")")[0]  # 12 characters of the digest
    assert "recorded build had none" in clean_build
    (clean_here,) = repro._dirty_difference(recorded, None)
    assert "a" * 12 in clean_here and "b" not in clean_here.split("diff ")[1].split(")")[0]
    assert "this checkout has none" in clean_here and "uncommitted changes" in clean_here
    (other,) = repro._dirty_difference(recorded, here)
    assert other == f"other uncommitted changes: diff {'c' * 12}, recorded {'a' * 12}"


def test_step_differences_name_the_steps_then_the_fields() -> None:
    old = [{"name": "sources", "cmd": ["git"]}, {"name": "build", "cmd": ["a"], "env": {"X": "1"}}]
    assert repro._step_differences(old, [dict(s) for s in old]) == []
    (names,) = repro._step_differences(old, [{"name": "sources"}, {"name": "check"}])
    assert "sources, build recorded" in names and "sources, check planned here" in names
    new = [{"name": "sources", "cmd": ["git"]}, {"name": "build", "cmd": ["b"], "cwd": "/w"}]
    assert repro._step_differences(old, new) == ["step build: cmd, cwd, env differ"]
    assert repro._fields_differing({"a": 1, "b": 2}, {"b": 3, "c": None}) == ["a", "b"]  # c: None either way
    assert repro._fields_differing({"z": 1, "a": 1}, {}) == ["a", "z"]


def test_host_paths_compared_by_role_only_where_recorded() -> None:
    recorded = {"work_dir": "/ci/w", "cache_dir": "/c", "interpreter": "/usr/bin/python3.12"}
    here = {"work_dir": "/home/me/w", "cache_dir": "/c", "uv": "/x/uv", "interpreter": "/opt/py"}
    diffs = repro._path_differences(recorded, here)
    assert [(d.what, d.manifest, d.here, d.fatal) for d in diffs] == [
        ("work dir", "/ci/w", "/home/me/w", False),
        ("interpreter", "/usr/bin/python3.12", "/opt/py", False)]


def test_gpus_compared_as_a_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolkit.env import gpus

    class _G:
        def __init__(self, gfx: str) -> None:
            self.gfx = gfx

    class _Found:
        gpus = [_G("gfx942"), _G("gfx90a")]

    monkeypatch.setattr(gpus, "detect", lambda: _Found())
    assert repro._gpu_differences({"gpus": ["gfx90a", "gfx942"]}) == []
    (d,) = repro._gpu_differences({"gpus": ["gfx1100"]})
    assert (d.what, d.manifest, d.here, d.fatal) == ("GPUs", "gfx1100", "gfx942, gfx90a", False)
    (none,) = repro._gpu_differences({})
    assert (none.manifest, none.here) == ("none", "gfx942, gfx90a")
    monkeypatch.setattr(gpus, "detect", lambda: type("F", (), {"gpus": []})())
    (gone,) = repro._gpu_differences({"gpus": ["gfx942"]})
    assert gone.here == "none"


def test_only_recorded_host_facts_that_differ_are_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolkit.run import manifest

    monkeypatch.setattr(manifest, "host_facts", lambda: {"glibc": "2.39", "os": "Debian 13", "cores": 2})
    host = {"glibc": "2.28", "os": "Debian 13", "cores": 64, "arch": "x86_64"}
    assert [(d.what, d.manifest, d.here, d.fatal) for d in repro._host_fact_differences(host)] == [
        ("glibc", "2.28", "2.39", False), ("cores", "64", "2", False)]
    assert repro._host_fact_differences({"glibc": "", "cores": 0}) == []


def test_tools_compared_with_the_recorded_rocm_bin(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolkit.run import manifest

    seen: list[str | None] = []

    def versions(python: str, rocm_bin: str | None) -> dict[str, str | None]:
        seen.append(rocm_bin)
        return {"hipcc": "6.2.1", "clang": None, "gcc": "14.2.0"}

    monkeypatch.setattr(manifest, "tool_versions", versions)
    data: dict[str, Any] = {"sdk": {"root": "/opt/rocm-6.2.1"},
                            "tools": {"hipcc": "6.2.1", "clang": "18.0", "gcc": "12.2.0"}}
    diffs = repro._tool_differences(data)
    assert seen == ["/opt/rocm-6.2.1/bin"]
    assert [(d.what, d.manifest, d.here, d.fatal) for d in diffs] == [
        ("clang", "18.0", "none", False), ("gcc", "12.2.0", "14.2.0", False)]
    (hipcc,) = repro._tool_differences({"sdk": {"root": None}, "tools": {"clang": None, "gcc": "14.2.0"}})
    assert (hipcc.what, hipcc.manifest, hipcc.here) == ("hipcc", "none", "6.2.1")
    assert seen[-1] is None


def test_the_step_to_stop_at(monkeypatch: pytest.MonkeyPatch) -> None:
    names = ["sources", "build", "check", "smoke"]
    assert repro._last_step(names, None, None) == "smoke"
    assert repro._last_step(names, "build", Failure("smoke", 3, ())) == "build"
    assert repro._last_step(names, None, Failure("check", 3, ())) == "check"
    with pytest.raises(UsageError) as err:
        repro._last_step(names, "bild", None)
    assert "'bild'" in err.value.message and "sources, build, check, smoke" in err.value.message
    assert err.value.exit_code == 2
    with pytest.raises(UsageError) as err:
        repro._last_step(names, None, Failure("publish", 3, ()))
    # repro never publishes (README): a failure recorded at publish is refused, naming that step
    # as the manifest's and the steps repro can run instead
    assert err.value.message.startswith("the manifest's failed step 'publish' is not one repro runs; ")
    assert err.value.message.endswith("; this build's steps: sources, build, check, smoke")


def _wheel(path: Path, body: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("m/__init__.py", body)
    return path


def test_the_wheel_verdict_in_every_case(tmp_path: Path) -> None:
    rebuilt = _wheel(tmp_path / "m-1-py3-none-any.whl", b"x = 1\n")
    digest = hashlib.sha256(rebuilt.read_bytes()).hexdigest()
    out = ListReporter()
    assert repro._verdict({"wheel_sha256": digest}, None, True, out) == 1
    assert out.lines == ["differs: the rebuild made no wheel"]
    out = ListReporter()
    assert repro._verdict({"wheel_sha256": None, "outcome": "failed"}, str(rebuilt), True, out) == 1
    (line,) = out.lines
    # the recorded outcome given as the reason there is no wheel, then what the rebuild made
    assert line.startswith("differs: the manifest records no wheel (outcome failed); ")
    assert line.endswith(f"the rebuild made {rebuilt.name} ({digest})")
    # a recorded wheel that is not here: the digests differ and the members cannot be compared
    out = ListReporter()
    other = "0" * 64
    data = {"wheel_sha256": other, "wheel": str(tmp_path / "gone.whl")}
    assert repro._verdict(data, str(rebuilt), True, out) == 1
    assert out.lines[0] == f"differs: {digest} rebuilt, {other} recorded"
    assert out.lines[1].startswith(f"  (the recorded wheel {tmp_path / 'gone.whl'} is not here")
    assert out.lines[1].endswith("gone.whl is not here to compare members)")
    # the same bits from another tree (--force): never identical, and nothing to compare
    out = ListReporter()
    assert repro._verdict({"wheel_sha256": digest, "wheel": str(rebuilt)}, str(rebuilt), False, out) == 1
    assert out.lines == [f"differs: {digest} rebuilt, {digest} recorded",
                         "  from another source tree (--force)"]
