"""``toolkit check`` on kpack-split wheels (issue 31, part 6): a split host library is
"device code in kpack archives (search paths ...)", not "no GPU code"; a device wheel's
archives list targets, code objects and bytes; ``--with`` a device wheel satisfies the host
wheel's targets; a bad archive fails closed (a gpu-code error in the checked wheel, exit 1;
bad input from ``--with``, exit 2: README "Exit codes")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import toolkit.inspect
from tests.fixtures import kpack as K
from tests.fixtures.wheels import make_wheel
from toolkit.core.gfx import parse_target
from toolkit.inspect.checks import Report, check_paths

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((Path(toolkit.inspect.__file__).parent / "check.schema.json").read_text())
TAG = "cp311-cp311-manylinux_2_28_x86_64"
NAME = "torch/lib/libx.so"  # the marker's kernel name: the archives' keys are NAME#<index>
SEARCH = ["../../.kpack/torch_lib_@GFXARCH@.kpack"]


def _code(target: str, n: int) -> list[tuple[str, str, bytes]]:
    return [(f"{NAME}#{i}", target, K.code_object(target, 6000 + 1000 * i, bytes([i + 1]))) for i in range(n)]


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("kpack")
    split = K.host_library(tmp / "s", "libx.so", marker=K.ref(NAME, SEARCH))
    fat_less = K.host_library(tmp / "n", "libx.so", marker=None, magics=(K.HIPF,), fatbin=b"")
    arcs = {"gfx90a": K.archive(_code("gfx90a", 2)), "gfx942": K.archive(_code("gfx942", 1))}
    bad = bytearray(arcs["gfx90a"])
    bad[8:16] = (len(bad) + 5).to_bytes(8, "little")  # the table of contents past the end
    return {
        "host": make_wheel(tmp, "hostpkg", "1.0", TAG, {"hostpkg/libx.so": split}),
        "plain": make_wheel(tmp / "p", "hostpkg", "1.0", TAG, {"hostpkg/libx.so": fat_less}),
        "device": make_wheel(tmp, "hostpkg-device", "1.0", "py3-none-any",
                             {f".kpack/torch_lib_{t}.kpack": d for t, d in arcs.items()}),
        "bad": make_wheel(tmp / "b", "hostpkg-device", "1.0", "py3-none-any",
                          {".kpack/torch_lib_gfx90a.kpack": bytes(bad)}),
        **{f"raw_{t}": _write(tmp / f"torch_lib_{t}.kpack", d) for t, d in arcs.items()},
    }


def _write(p: Path, data: bytes) -> Path:
    p.write_bytes(data)
    return p


def _errors(report: Report, check: str = "gpu-targets") -> list[str]:
    return [f.message for f in report.findings if f.severity == "error" and f.check == check]


def test_split_host_library_is_kpack_code_not_cpu_only(wheels: dict[str, Path]) -> None:
    r = check_paths([wheels["host"]])
    w = r.wheels[0]
    assert r.ok
    shown = "device code in kpack archives (search paths ../../.kpack/torch_lib_@GFXARCH@.kpack)"
    assert w.to_json()["gpu_libraries"] == {"hostpkg/libx.so": [shown]}
    assert w.cpu_only == []
    assert w.libraries[0].kpack == {"kernel_name": NAME, "search_paths": SEARCH, "hipk": 1, "hipf": 0,
                                    "archives": []}
    jsonschema.validate(r.to_json(), SCHEMA)
    # the failing path: --gfx with no archive given cannot pass, and it says why
    gated = check_paths([wheels["host"]], targets=[parse_target("gfx90a")])
    assert not gated.ok and _errors(gated) == [
        f"hostpkg/libx.so keeps its device code in kpack archives (search paths {SEARCH[0]}) and no "
        "archive given holds code for it, so gfx90a cannot be checked: give its device wheel (--with)"]
    # the same library without the marker: no GPU code at all, as before
    plain = check_paths([wheels["plain"]], targets=[parse_target("gfx90a")])
    assert any(m.startswith("no GPU code for gfx90a in this wheel") for m in _errors(plain))
    assert [lib.path for lib in plain.wheels[0].cpu_only] == ["hostpkg/libx.so"]


def test_device_wheel_lists_targets_objects_and_bytes(wheels: dict[str, Path]) -> None:
    r = check_paths([wheels["device"]])
    w = r.wheels[0]
    assert r.ok
    jsonschema.validate(r.to_json(), SCHEMA)
    # the oracle: the frame sizes msgpack and struct read from each archive
    want = {f".kpack/torch_lib_{t}.kpack": {t: {"code_objects": len(K.frame_sizes(d)),
                                                 "bytes": sum(K.frame_sizes(d))}}
            for t, d in (("gfx90a", wheels["raw_gfx90a"].read_bytes()),
                         ("gfx942", wheels["raw_gfx942"].read_bytes()))}
    assert w.to_json()["kpack_archives"] == want
    assert {t: (tc.code_objects, tc.bytes) for t, tc in w.gpu.items()} == {
        t: (v[t]["code_objects"], v[t]["bytes"]) for v in want.values() for t in v}
    assert want[".kpack/torch_lib_gfx90a.kpack"]["gfx90a"]["code_objects"] == 2
    gated = check_paths([wheels["device"]], targets=[parse_target("gfx1100"), parse_target("gfx90a")])
    assert _errors(gated) == [
        "no code object for gfx1100 in this wheel's kpack archives (they hold gfx90a, gfx942)"]


def test_with_a_device_wheel_satisfies_the_host_targets(wheels: dict[str, Path]) -> None:
    targets = [parse_target("gfx90a"), parse_target("gfx942")]
    r = check_paths([wheels["host"]], with_paths=[wheels["device"]], targets=targets)
    assert r.ok, _errors(r)
    lib = r.wheels[0].libraries[0]
    assert {t: tc.code_objects for t, tc in lib.gpu_code.items()} == {"gfx90a": 2, "gfx942": 1}
    assert lib.gpu_targets == ["gfx90a", "gfx942"]
    assert lib.kpack is not None and len(lib.kpack["archives"]) == 2
    # a target the device wheel lacks is the usual missing-target error; a folder of archives works too
    short = check_paths([wheels["host"]], with_paths=[wheels["raw_gfx90a"]], targets=targets)
    assert _errors(short) == ["hostpkg/libx.so has no code object for gfx942 (carries gfx90a); it would "
                              "fail with hipErrorNoBinaryForGpu on that GPU"]


def _cli(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "toolkit", "check", *map(str, argv)], env=env,
                          capture_output=True, text=True, timeout=120)


def test_bad_archives_fail_closed_through_the_cli(wheels: dict[str, Path]) -> None:
    inside = _cli(wheels["bad"], "--json")
    assert inside.returncode == 1, inside.stderr  # a finding of the check, as a bad bundle is
    doc = json.loads(inside.stdout)
    jsonschema.validate(doc, SCHEMA)
    [f] = [f for f in doc["wheels"][0]["findings"] if f["severity"] == "error"]
    assert f["check"] == "gpu-code" and "unreadable kpack archive" in f["message"]
    assert "table of contents offset" in f["message"]
    given = _cli(wheels["host"], "--gfx", "gfx90a", "--with", wheels["bad"])
    assert given.returncode == 2  # README "Exit codes": bad input
    assert "Traceback" not in given.stderr and len(given.stderr.strip().splitlines()) == 1
    assert "--with" in given.stderr and "unreadable kpack archive" in given.stderr
