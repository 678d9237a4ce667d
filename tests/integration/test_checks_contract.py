"""The report of `toolkit check`: the JSON contract (schema shipped in the package, validated
against real outputs), the undefined-symbol flood, and code objects v2."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from tests.fixtures.handmade_elf import code_object_v2, isa_name_note, isa_version_note
from tests.fixtures.native import compile_shared, llvm_tool
from tests.fixtures.wheels import make_wheel
from toolkit.core.proc import run
from toolkit.inspect.checks import check_paths
from toolkit.inspect.report import SCHEMA_VERSION

pytestmark = pytest.mark.integration
TAG = "cp311-cp311-manylinux_2_28_x86_64"
HSA = Path("/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1").resolve()  # Debian's libhsa-runtime64-1


def schema() -> dict[str, object]:
    text = resources.files("toolkit.inspect").joinpath("check.schema.json").read_text("utf-8")
    data: dict[str, object] = json.loads(text)
    return data


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolkit", "check", *args], capture_output=True, text=True,
                          check=False)


def flood_library(dest: Path, n: int) -> Path:
    """A library calling ``n`` functions nobody defines (as a triton built against another
    LLVM does): one root cause."""
    decls = "".join(f'namespace llvm {{ void f{i}(int); }}\n' for i in range(n))
    calls = "".join(f"llvm::f{i}(x);" for i in range(n))
    return compile_shared(dest, "libflood.so", decls + f'extern "C" void all(int x) {{ {calls} }}\n')


@pytest.fixture(scope="module")
def flood_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("flood")
    return make_wheel(d / "w", "triton", "1.0", TAG, {"triton/_C/libflood.so": flood_library(d, 846)})


def test_the_flood_is_grouped_under_150_lines_and_complete_in_verbose_and_json(flood_wheel: Path) -> None:
    text = cli(str(flood_wheel))
    assert text.returncode == 1
    out = text.stdout.splitlines()
    assert len(out) < 150, len(out)
    (line,) = [x for x in out if "[undefined-symbol]" in x]
    # libflood.so exports no PyInit_ (nm -D) and nothing imports it: loading it fails
    assert "loading triton/_C/libflood.so would fail: 846 undefined symbols" in line
    assert "and 841 more" in line
    assert out[-2].startswith("  FAILED: undefined-symbol 1  policy: ")  # the last line, then a blank
    verbose = cli(str(flood_wheel), "--verbose").stdout
    assert sum(x.startswith("      llvm::f") and "(_ZN4llvm" in x for x in verbose.splitlines()) == 846
    data = json.loads(cli(str(flood_wheel), "--json").stdout)
    (f,) = [x for x in data["wheels"][0]["findings"] if x["check"] == "undefined-symbol"]
    assert len(f["symbols"]) == 846 and len(data["wheels"][0]["libraries"][0]["unresolved"]) == 846
    # nm agrees on what is undefined
    nm = run(["nm", "-D", "--undefined-only", str(flood_wheel.parent.parent / "libflood.so")]).stdout
    assert sum("_ZN4llvm" in x for x in nm.splitlines()) == 846


def test_real_outputs_validate_against_the_shipped_schema(flood_wheel: Path, tmp_path: Path) -> None:
    sch = schema()
    jsonschema.Draft202012Validator.check_schema(sch)
    gpu = tmp_path / "v2.co"
    gpu.write_bytes(code_object_v2(isa_version_note(9, 0, 6)))
    plain = compile_shared(tmp_path, "libp.so", '#include <stdio.h>\nint p() { return puts("p"); }\n',
                           lang="c")
    for args in ([str(flood_wheel)], [str(gpu), "--gfx", "gfx942"], [str(plain)], [str(tmp_path)]):
        data = json.loads(cli(*args, "--json").stdout)
        jsonschema.validate(data, sch)
        const = sch["$defs"]["report"]["properties"]["schema_version"]["const"]
        assert data["schema_version"] == SCHEMA_VERSION == const
    data = json.loads(cli(str(plain), "--json").stdout)
    lib = data["wheels"][0]["libraries"][0]
    assert lib["max_versions"]["GLIBC"] == "2.2.5"  # puts@GLIBC_2.2.5 (objdump -T shows the same)
    assert lib["max_symbol_versions"] == {k: f"{k}_{v}" for k, v in lib["max_versions"].items()}
    broken = json.loads(json.dumps(data))
    del broken["schema_version"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, sch)


def test_code_object_v2_targets_come_from_the_isa_notes(tmp_path: Path) -> None:
    cases = {"v906.co": (code_object_v2(isa_version_note(9, 0, 6)), "gfx906"),
             "v90c.co": (code_object_v2(isa_version_note(9, 0, 12)), "gfx90c"),
             "vname.co": (code_object_v2(isa_name_note("amdgcn-amd-amdhsa--gfx803+xnack")), "gfx803:xnack+")}
    for name, (blob, want) in cases.items():
        (tmp_path / name).write_bytes(blob)
        notes = run([llvm_tool("llvm-readobj"), "--notes", str(tmp_path / name)]).stdout
        assert "NT_AMD_HSA_ISA" in notes  # LLVM reads the same note
        (w,) = check_paths([tmp_path / name]).wheels
        assert list(w.gpu) == [want], name
    bad = code_object_v2(isa_version_note(9, 0, 6))[:-40]  # section table cut short
    (tmp_path / "bad.co").write_bytes(bad)
    (w,) = check_paths([tmp_path / "bad.co"]).wheels
    assert not any(t.startswith("gfx9") for t in w.gpu)


def test_the_hsa_runtimes_embedded_kernels_are_named(tmp_path: Path) -> None:
    if not HSA.exists():
        pytest.skip("Debian's libhsa-runtime64-1 is not installed (apt-get install libhsa-runtime64-1)")
    (w,) = check_paths([HSA], targets=[]).wheels
    assert not [t for t in w.gpu if t.startswith("unknown")], list(w.gpu)
    assert {"gfx700", "gfx800", "gfx900"} <= set(w.gpu)
    assert any("HSA runtime's own embedded kernels" in x for x in w.libraries[0].gpu_where)
    from toolkit.cli.commands.check import expand_targets

    r = check_paths([HSA], targets=expand_targets(["gfx942"]))
    (f,) = [x for x in r.findings if x.check == "gpu-targets"]
    assert "HSA runtime's own embedded kernels" in f.message and "hipErrorNoBinaryForGpu" not in f.message
