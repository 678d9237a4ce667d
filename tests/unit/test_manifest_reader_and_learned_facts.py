"""The manifest's one reader (``toolkit.run.manifest.read``: one line naming what is wrong,
exit 2, README "malformed or tampered manifest"), the clean manifest kept beside its wheel
before a dirty build overwrites it, and what a run learns from real tools: an interpreter's
implementation, version and ABI (``sys`` and ``sysconfig`` of this interpreter as the truth),
the distributions installed (``importlib.metadata`` here), the hipcc of a ROCm ``bin`` folder
(run with ``HIP_PLATFORM=amd``, which Debian's hipcc needs to speak for AMD) and the clang
beside it."""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import stat
import sys
import sysconfig
import threading
from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.run import manifest

BUILD = {"id": "apex-1.8.0-cp312-rocm7.0", "package": "apex", "version": "1.8.0",
         "python": "3.12", "rocm": "7.0", "torch": None}


def refusal(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "m.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(UsageError) as caught:
        manifest.read(path)
    assert caught.value.exit_code == 2
    message = caught.value.message
    assert "\n" not in message
    return message.replace(str(path), "M")


def test_no_file_names_where_builds_write_manifests(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        manifest.read(tmp_path / "none.json")
    assert caught.value.message == (f"no manifest at {tmp_path / 'none.json'}; builds write "
                                    "artifacts/<build-id>/manifest.json")


@pytest.mark.parametrize("text, said", [
    ("[1]", "M: not a manifest (expected a JSON object): [1] is an array"),
    ('"x"', "M: not a manifest (expected a JSON object): 'x' is a string"),
    ('{"build": 5}', "M: manifest field build: 5 is an integer, expected an object"),
    ('{"build": null}', "M: manifest field build: null is null, expected an object"),
    ("{}", "M: not a build manifest (no 'build' object)"),
    ('{"build": {"id": 5, "package": "apex", "version": "1"}}',
     "M: manifest field build.id: 5 is an integer, expected a string"),
    ('{"build": {"id": "a", "package": ["apex"], "version": "1"}}',
     'M: manifest field build.package: ["apex"] is an array, expected a string'),
    ('{"build": {"id": "a", "package": "apex", "version": 1.5}}',
     "M: manifest field build.version: 1.5 is a number, expected a string"),
    ('{"build": {"package": "apex"}}',
     "M: not a build manifest (its 'build' object lacks id, version)"),
    ('{"build": {"id": "", "package": "apex", "version": "1"}}',
     "M: not a build manifest (its 'build' object lacks id)"),
])
def test_a_manifest_that_is_no_build_manifest_is_one_line(tmp_path: Path, text: str,
                                                          said: str) -> None:
    assert refusal(tmp_path, text) == said


def test_bytes_that_are_no_json_are_said_not_readable(tmp_path: Path) -> None:
    assert refusal(tmp_path, b"{\xff").startswith("M: not a readable manifest (")
    assert refusal(tmp_path, "{").startswith("M: not a readable manifest (")


def test_a_build_manifest_is_read_and_its_values_still_checked(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"build": BUILD, "outcome": "running"}))
    assert manifest.read(path)["outcome"] == "running"
    path.write_text(json.dumps({"build": BUILD, "workdir": "relative/work"}))
    with pytest.raises(UsageError) as caught:
        manifest.read(path)
    assert "manifest field workdir: 'relative/work' is not an absolute path" in \
        caught.value.message


# ---------------------------------------------------------------- keeping a clean manifest
def earlier(tmp_path: Path, **fields: object) -> Path:
    path = tmp_path / "artifacts" / "b" / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"outcome": "ok", "wheel": "/w/dist/b/apex-1.8.0-cp312-cp312-linux_x86_64.whl",
            "source": {"sha": "a" * 40}, **fields}
    path.write_text(json.dumps(data))
    return path


def test_an_ok_clean_manifest_is_kept_beside_its_wheel_byte_for_byte(tmp_path: Path) -> None:
    path = earlier(tmp_path)
    kept = manifest.keep_clean(path)
    assert kept == path.with_name("apex-1.8.0-cp312-cp312-linux_x86_64.whl.manifest.json")
    assert kept.read_bytes() == path.read_bytes()
    assert manifest.keep_clean(path) is None  # kept once: never overwritten


@pytest.mark.parametrize("fields", [
    {"outcome": "failed"}, {"outcome": "running"}, {"wheel": None}, {"wheel": 5},
    {"source": {"sha": "a" * 40, "diff": "b" * 64}},
])
def test_a_failed_dirty_or_wheelless_manifest_is_not_kept(tmp_path: Path,
                                                          fields: dict[str, object]) -> None:
    path = earlier(tmp_path, **fields)
    assert manifest.keep_clean(path) is None
    assert os.listdir(path.parent) == ["manifest.json"]


def test_nothing_or_something_unreadable_there_keeps_nothing(tmp_path: Path) -> None:
    assert manifest.keep_clean(tmp_path / "manifest.json") is None
    (tmp_path / "manifest.json").write_text("{")
    assert manifest.keep_clean(tmp_path / "manifest.json") is None
    (tmp_path / "manifest.json").write_text("[]")
    assert manifest.keep_clean(tmp_path / "manifest.json") is None
    assert os.listdir(tmp_path) == ["manifest.json"]


def test_a_manifest_already_named_for_its_wheel_is_not_copied_onto_itself(
        tmp_path: Path) -> None:
    path = earlier(tmp_path / "x", wheel="/w/x")
    path.rename(path.with_name("x.manifest.json"))
    assert manifest.keep_clean(path.with_name("x.manifest.json")) is None


# ------------------------------------------------------------------- learned from real tools
def test_this_interpreters_identity_is_what_it_says_of_itself() -> None:
    assert manifest.interpreter_identity(sys.executable) == {
        "implementation": sys.implementation.name,
        "version": f"{sys.version_info[0]}.{sys.version_info[1]}",
        "abi": sysconfig.get_config_var("SOABI") or ""}


@pytest.mark.parametrize("not_python", ["/bin/false", "/bin/true", "/no/such/python"])
def test_what_is_no_interpreter_has_no_identity(not_python: str) -> None:
    assert manifest.interpreter_identity(not_python) == {
        "implementation": None, "version": None, "abi": None}


def test_the_installed_distributions_are_this_environments() -> None:
    got = manifest.installed(sys.executable)
    here = sorted({(d.metadata["Name"], d.version) for d in importlib.metadata.distributions()
                   if d.metadata["Name"]})
    assert got == [{"name": n, "version": v} for n, v in here]
    assert manifest.installed("/bin/false") == [] == manifest.installed("/bin/true")


def script(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_a_rocm_bin_folders_hipcc_and_clang_are_asked(tmp_path: Path) -> None:
    rocm_bin = tmp_path / "rocm" / "bin"
    # what a hipcc prints: banner lines, then the version line the manifest keeps
    script(rocm_bin / "hipcc", 'echo "platform $HIP_PLATFORM"\necho "HIP version: 9.9.1-x "\n')
    script(tmp_path / "rocm" / "llvm" / "bin" / "clang", 'echo\necho "  AMD clang 19.0.0  "\n')
    got = manifest.tool_versions(sys.executable, str(rocm_bin))
    assert got["hipcc"] == "HIP version: 9.9.1-x"
    assert got["clang"] == "AMD clang 19.0.0"  # its first line that is not blank
    assert got["python"] == f"Python {sys.version.split()[0]}"
    (rocm_bin / "hipcc").write_text('#!/bin/sh\necho "platform $HIP_PLATFORM"\n')
    assert manifest.tool_versions(sys.executable, str(rocm_bin))["hipcc"] is None
    script(rocm_bin / "hipcc", 'echo "HIP version: $HIP_PLATFORM"\n')
    assert manifest.tool_versions(sys.executable, str(rocm_bin))["hipcc"] == "HIP version: amd"


def test_a_file_that_cannot_be_read_has_no_sha256(tmp_path: Path) -> None:
    assert manifest.file_sha256(tmp_path / "missing") is None
    (tmp_path / "f").write_bytes(b"abc")
    assert manifest.file_sha256(tmp_path / "f") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")  # FIPS 180-2


def test_a_probed_tool_that_hangs_has_no_version_and_is_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hipcc that prints its version line, then never exits: past the probe's time limit
    (made small here) it has no version (None, as for a tool that could not start), and its
    process is gone (POSIX: a reaped child's pid answers ESRCH). Should the probe wait for it
    forever, a safety net kills the sleeper after 20 s: the line it printed would then come
    back instead of None."""
    rocm_bin = tmp_path / "rocm" / "bin"
    pid_file = tmp_path / "pid"
    script(rocm_bin / "hipcc", f'echo $$ > {pid_file}\necho "HIP version: 9.9.1"\nexec sleep 1000\n')
    monkeypatch.setattr(manifest, "PROBE_TIMEOUT_S", 0.5)
    net = threading.Timer(20, lambda: os.kill(int(pid_file.read_text()), signal.SIGKILL))
    net.start()
    try:
        got = manifest._first_line([str(rocm_bin / "hipcc"), "--version"], r"HIP version: \S+")
    finally:
        net.cancel()
    assert got is None
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_the_hosts_available_memory_is_kept_to_one_decimal_of_a_gib(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest's host memory is GiB to one decimal: 7,800,000 KiB of MemAvailable is
    7.4387 GiB (KiB / 2**20, by hand), kept as 7.4. The kernel's /proc/meminfo is the boundary
    played (its value moves while the test runs); GPUs come from an empty KFD folder."""
    from toolkit.env import host

    monkeypatch.setattr(host, "_mem_available_gib", lambda: 7_800_000 / 2**20)
    monkeypatch.setenv("TOOLKIT_KFD_ROOT", str(tmp_path))
    facts = manifest.host_facts()
    assert facts["mem_available_gib"] == 7.4
    assert facts["gpus"] == []
