"""Lock names, headers, inputs hashes and the pip-compile input (no network)."""

from __future__ import annotations

from pathlib import Path

from toolkit.data.matrix import load_matrix
from toolkit.plan.locks import header, inputs_hash, lock_name, read_locks, requirements_in
from toolkit.plan.model import Options
from toolkit.plan.provision import sources_for

MATRIX = load_matrix()


def test_one_lock_per_pair_or_per_torch() -> None:
    # Python 3.8 on ROCm 6.0 builds apex 1.4 (torch 2.4) only: one lock for the pair
    assert lock_name(MATRIX, MATRIX.build("apex-1.4.0-cp38-rocm6.0")) == "3.8-rocm6.0.txt"
    # apex 1.7 (torch 2.7) and apex 1.8 (torch 2.8) share 3.12/rocm6.4: one lock per torch
    assert lock_name(MATRIX, MATRIX.build("apex-1.7.0-cp312-rocm6.4")) == "3.12-rocm6.4-torch2.7.txt"
    assert lock_name(MATRIX, MATRIX.build("apex-1.8.0-cp312-rocm6.4")) == "3.12-rocm6.4-torch2.8.txt"


def test_inputs_hash_follows_matrix_and_options() -> None:
    b = MATRIX.build("apex-1.8.0-cp312-rocm7.0")
    base = inputs_hash(b, sources_for(MATRIX, b, Options(channel="nightly")))
    assert base == inputs_hash(b, sources_for(MATRIX, b, Options(channel="nightly")))
    # another GPU family (gfx1100 is served by gfx110X-dgpu, not the default gfx94X-dcgpu)
    assert base != inputs_hash(b, sources_for(MATRIX, b, Options(gfx=("gfx1100",), channel="nightly")))
    mirror = Options(index_url="https://mirror.example/v2/", channel="nightly")
    assert base != inputs_hash(b, sources_for(MATRIX, b, mirror))
    other = MATRIX.build("apex-1.8.0-cp311-rocm7.0")
    assert base != inputs_hash(other, sources_for(MATRIX, other, Options(channel="nightly")))


def test_requirements_in_records_indexes() -> None:
    b = MATRIX.build("apex-1.8.0-cp312-rocm7.0")
    text = requirements_in(sources_for(MATRIX, b, Options(channel="nightly")))
    # 7.0's nightly channel: TheRock's per-family SDK index; torch 2.8 for ROCm 7.0 from AMD's
    # rocm-rel-7.0 page
    assert text.splitlines() == [
        "--index-url https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/",
        "--find-links https://repo.radeon.com/rocm/manylinux/rocm-rel-7.0/",
        "rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1",
        "torch>=2.8,<2.9",
    ]
    amd = MATRIX.build("apex-1.7.0-cp312-rocm6.4")
    text = requirements_in(sources_for(MATRIX, amd, Options()))
    assert "--find-links https://repo.radeon.com/rocm/manylinux/rocm-rel-6.4/" in text


def test_header_masks_credentials_and_is_read_back(tmp_path: Path) -> None:
    b = MATRIX.build("apex-1.8.0-cp312-rocm7.0")
    src = sources_for(MATRIX, b, Options(index_url="https://user:s3cret@mirror.example/v2/",
                                       channel="nightly"))
    digest = inputs_hash(b, src)
    text = header(b, src, "3.12-rocm7.0.txt", digest)
    assert "s3cret" not in text and "https://***@mirror.example/v2/gfx94X-dcgpu/" in text
    (tmp_path / "3.12-rocm7.0.txt").write_text(text + "torch==2.8.0\n")
    (tmp_path / "3.11-rocm7.0.txt").write_text("torch==2.8.0\n")
    refs = {r.name: r for r in read_locks(tmp_path)}
    assert refs["3.12-rocm7.0.txt"].inputs == digest
    assert refs["3.11-rocm7.0.txt"].inputs is None
    assert read_locks(tmp_path / "missing") == ()
