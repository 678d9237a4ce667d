"""Variant wheels (issue 31): written as ``variantlib`` 0.2.2 reads them, labelled with the owner
``rocm-bootstrap`` 0.3.0 names for the target (both asked here, as the independent truth)."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from toolkit.core import variants
from toolkit.core.errors import UsageError
from toolkit.run.variant_wheels import make_variant, write_index_documents

rocm_meta = pytest.importorskip("rocm_bootstrap.package_metadata")
pytest.importorskip("variantlib")

VARIANTLIB = [str(Path(sys.executable).parent / "variantlib")]  # the real CLI
TARGETS = ["gfx90a", "gfx908", "gfx90a:xnack-", "gfx942:sramecc+:xnack-", "gfx1100",
           "gfx1250-strict", "gfx1250", "gfx906-xnack+"]


def _plain(tmp: Path, name: str = "hip_sample", version: str = "1.0+rocm6.4gitabcdef12") -> Path:
    return make_wheel(tmp / "in", name, version, "cp312-cp312-linux_x86_64",
                      {f"{name}/__init__.py": "x = 1\n", f"{name}/_C.so": b"\x7fELF fake"})


def _variantlib(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*VARIANTLIB, *args], capture_output=True, text=True, timeout=120,
                          check=False)


@pytest.mark.parametrize("target", TARGETS)
def test_label_is_rocm_bootstraps_owner(target: str) -> None:
    (owner,) = rocm_meta.group_package_targets([target])
    assert variants.package_owner(target) == owner
    assert variants.label_for(target) == owner


def test_owner_order_and_dedup_match_group_package_targets() -> None:
    targets = ["gfx90a:xnack-", "gfx908", "gfx90a:xnack+", "gfx1250-strict", "gfx1250"]
    assert variants.owners(targets) == list(rocm_meta.group_package_targets(targets))


def test_variant_wheel_accepted_by_variantlib(tmp_path: Path) -> None:
    src = _plain(tmp_path)
    out = make_variant(src, tmp_path / "out", "gfx90a:xnack-")
    assert out.name == "hip_sample-1.0+rocm6.4gitabcdef12-cp312-cp312-linux_x86_64-gfx90a.whl"
    res = _variantlib("analyze-wheel", "-i", str(out))
    assert res.returncode == 0, res.stderr
    assert "Variant: `gfx90a`" in res.stdout and "amd :: gfx_arch :: gfx90a" in res.stdout
    with zipfile.ZipFile(out) as zf, zipfile.ZipFile(src) as orig:
        assert zf.testzip() is None
        dist = "hip_sample-1.0+rocm6.4gitabcdef12.dist-info"
        rows = list(csv.reader(io.StringIO(zf.read(f"{dist}/RECORD").decode())))
        for path, digest, size in rows:
            if path.endswith("RECORD"):
                continue
            data = zf.read(path)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + expected.decode() and int(size) == len(data)
        assert {r[0] for r in rows} == set(zf.namelist())
        for name in orig.namelist():  # every other member is the same bytes
            if not name.endswith("RECORD"):
                assert zf.read(name) == orig.read(name)
        doc = json.loads(zf.read(f"{dist}/variant.json"))
    assert doc["variants"] == {"gfx90a": {"amd": {"gfx_arch": ["gfx90a"]}}}
    assert doc["providers"]["amd"]["plugin-api"] == (
        "rocm_bootstrap.variant_provider:AMDVariantPlugin")


def test_variantlib_rejects_a_label_the_json_does_not_name(tmp_path: Path) -> None:
    """The failing path of the oracle: a wheel renamed to another label is refused."""
    out = make_variant(_plain(tmp_path), tmp_path / "out", "gfx908")
    lying = out.with_name(out.name.replace("-gfx908.whl", "-gfx90a.whl"))
    shutil.copy(out, lying)
    res = _variantlib("analyze-wheel", "-i", str(lying))
    assert res.returncode != 0 and "expected gfx90a" in res.stderr


def test_rewriting_replaces_an_earlier_variant_json(tmp_path: Path) -> None:
    first = make_variant(_plain(tmp_path), tmp_path / "a", "gfx908")
    plain = tmp_path / "b" / first.name.replace("-gfx908.whl", ".whl")
    plain.parent.mkdir()
    shutil.copy(first, plain)
    again = make_variant(plain, tmp_path / "c", "gfx90a")
    with zipfile.ZipFile(again) as zf:
        names = zf.namelist()
        record = zf.read(next(n for n in names if n.endswith("RECORD"))).decode()
    assert sum(n.endswith("/variant.json") for n in names) == 1
    assert record.count("variant.json") == 1
    assert _variantlib("analyze-wheel", "-i", str(again)).returncode == 0


@pytest.mark.parametrize("bad", ["not-a-wheel.zip.whl", "x-1.0-py3-none-any-gfx90a.whl"])
def test_bad_input_is_one_usage_error(tmp_path: Path, bad: str) -> None:
    src = tmp_path / bad
    src.write_bytes(b"not a zip")
    with pytest.raises(UsageError) as caught:
        make_variant(src, tmp_path / "out", "gfx90a")
    # a plain wheel file name has five dash-separated fields (PEP 427), no variant label
    assert str(caught.value).startswith(f"{bad}: not a plain wheel file name")
    assert str(caught.value).endswith("(<name>-<ver>-<py>-<abi>-<plat>.whl)")
    out = tmp_path / "out"
    assert not out.exists() or not any(out.iterdir())  # nothing half-written


def test_index_json_equals_variantlibs(tmp_path: Path) -> None:
    folder = tmp_path / "dist"
    src = _plain(tmp_path)
    for target in ("gfx90a", "gfx908", "gfx1100"):
        make_variant(src, folder, target)
    shutil.copy(src, folder / src.name)  # the fat wheel beside them: not in the JSON
    theirs = tmp_path / "theirs"
    shutil.copytree(folder, theirs)
    res = _variantlib("generate-index-json", "-d", str(theirs))
    assert res.returncode == 0, res.stderr
    written, warnings = write_index_documents(folder)
    assert warnings == []
    assert [p.name for p in written] == ["hip_sample-1.0+rocm6.4gitabcdef12-variants.json"]
    expected = (theirs / written[0].name).read_text()
    assert written[0].read_text() == expected
    assert set(json.loads(expected)["variants"]) == {"gfx90a", "gfx908", "gfx1100"}


@pytest.mark.parametrize(("target", "owner"), [("GFX90A", "GFX90A"), ("gfx-90a:xnack+", "gfx-90a"),
                                                ("null", "null")])
def test_a_target_whose_owner_is_no_label_is_named_with_the_valid_characters(target: str, owner: str) -> None:
    # a wheel variant label is lower-case letters, digits, '.' and '_' (variantlib's
    # VALIDATION_VARIANT_LABEL_REGEX); "null" is the label of the null variant, so no owner's
    with pytest.raises(UsageError) as err:
        variants.label_for(target)
    assert err.value.message.startswith(f"{target}: its owner '{owner}' is no valid variant label")
    assert err.value.message.endswith(" (valid: lower-case letters, digits, '.' and '_')")
