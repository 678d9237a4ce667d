"""Lock names, headers, inputs hashes and the pip-compile input (no network)."""

from __future__ import annotations

import shlex
from pathlib import Path

from pip._internal.req.req_file import build_parser as pip_req_parser

from toolkit.data.matrix import load_matrix
from toolkit.plan.layout import Layout
from toolkit.plan.locks import header, inputs_hash, lock_name, read_locks, requirements_in
from toolkit.plan.model import Options
from toolkit.plan.provision import sources_for
from toolkit.plan.sources import Sources

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


def test_requirements_in_means_to_pip_what_the_sources_say() -> None:
    src = Sources("pip", "per-family", "gfx94X-dcgpu", "https://sdk.example/v2/gfx94X-dcgpu/",
                  "rocm[libraries,devel]>1.0", ("/links",), "torch==2.7.1",
                  ("--index-url", "https://torch.example/whl/", "--find-links", "/more"))
    text = requirements_in(src)
    parser = pip_req_parser()
    default_index = parser.parse_args([])[0].index_url  # pip's own default (PyPI)
    index: str | None = None
    extra: list[str] = []
    links: list[str] = []
    reqs: list[str] = []
    for line in text.splitlines():
        if line.startswith("-"):
            opts, _ = pip_req_parser().parse_args(shlex.split(line))  # fresh: its lists accumulate
            index = opts.index_url if opts.index_url != default_index else index
            extra += opts.extra_index_urls or []
            links += opts.find_links or []
        else:
            reqs.append(line)
    # pip reads one --index-url (the SDK's) and adds the torch index as an extra one
    assert index == "https://sdk.example/v2/gfx94X-dcgpu/"
    assert extra == ["https://torch.example/whl/"] and links == ["/links", "/more"]
    assert reqs == ["rocm[libraries,devel]>1.0", "torch==2.7.1"]


def test_a_lock_header_names_the_pair_the_torch_and_the_family() -> None:
    m = load_matrix()
    build = m.build("apex-1.8.0-cp312-rocm7.0")
    src = Sources("pip", "per-family", "gfx94X-dcgpu", "https://sdk.example/", "rocm>1", (), "torch", ())
    first = header(build, src, "3.12-rocm7.0-gfx94X-dcgpu.txt", "abc").splitlines()[0]
    assert first == f"# toolkit-lock: 3.12-rocm7.0 torch {build.pkg_version.torch_minor} family gfx94X-dcgpu"
    system = Sources("system", None, None, None, None, (), "torch", ())
    lines = header(build, system, "x.txt", "abc").splitlines()
    assert lines[2] == "# sdk: system ROCm"  # no index: nothing after it


def test_a_lock_is_read_whatever_bytes_follow_its_header(tmp_path: Path) -> None:
    digest = "ab" * 32
    (tmp_path / "3.12-rocm7.0.txt").write_bytes(
        f"# toolkit-lock-inputs: {digest}\n".encode() + b"# \xff\xfe not UTF-8\ntorch==2.7\n")
    (tmp_path / "old.txt").write_text("torch==2.6\n")
    refs = read_locks(tmp_path)
    assert [(r.name, r.path, r.inputs) for r in refs] == [
        ("3.12-rocm7.0.txt", str((tmp_path / "3.12-rocm7.0.txt").resolve()), digest),
        ("old.txt", str((tmp_path / "old.txt").resolve()), None)]
    assert Layout(Path("/w"), Path("/c")).locks() == Path("/w/locks")  # README: locks/<pair>.txt


def test_sources_as_json_carries_every_input_of_the_lock() -> None:
    src = Sources("system", None, None, None, None, ("/fl",), "torch==2.5.1",
                  ("--index-url", "https://i"), system_version="6.4")
    assert src.as_json() == {
        "provider": "system", "layout": None, "family": None, "sdk_index": None,
        "sdk_spec": None, "find_links": ["/fl"], "torch_spec": "torch==2.5.1",
        "torch_args": ["--index-url", "https://i"], "system_version": "6.4"}
    pinned = Sources("pip", "multi-arch", None, "https://sdk", "rocm[devel]", (), "torch", (),
                     torch_pins=("rocm==7.0.0",))
    assert pinned.as_json()["torch_pins"] == ["rocm==7.0.0"]
    assert pinned.as_json()["system_version"] is None
