"""A real PEP 503 package index on 127.0.0.1 serving the SDK/torch TEST DOUBLES.

Layout served (both of TheRock's layouts in one tree)::

    /v2/<family>/<project>/      per-family (legacy): rocm, rocm-sdk-core, rocm-sdk-devel,
                                 rocm-sdk-libraries-<family>, torch
    /multi/<project>/            multi-arch: rocm, rocm-sdk-core, rocm-sdk-devel,
                                 rocm-sdk-libraries, rocm-sdk-device-<gfx>, torch (split:
                                 host wheel + amd-torch-device-<gfx>)
    /files/<file>                the artifacts (links carry #sha256=...)

Per-family: 7.0.0a20260101 for gfx94X-dcgpu and gfx90a (no other family: a request for one
is a 404, like TheRock's index for a family it does not build). Multi-arch: 7.1.0a20260101 for
gfx942 and gfx90a. Torch doubles: 2.8.0+rocm7.0 (hip 7.0), 2.7.0+rocm6.4 (hip 6.4 -> mismatch
on 7.0), 2.8.0+rocm7.1 (hip 7.1, split into a host wheel and device packages); the real CPU
torch wheel from /opt/wheels when present.
"""

from __future__ import annotations

import hashlib
import html
import os
import shutil
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.doubles import sdk

PER_FAMILY_VERSION = "7.0.0a20260101"
MULTI_ARCH_VERSION = "7.1.0a20260101"
FAMILIES = {"gfx94X-dcgpu": ["gfx942"], "gfx90a": ["gfx90a"]}
DEVICES = ["gfx90a", "gfx942"]
CPU_TORCH = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")

_SHA_CACHE: dict[tuple[str, int, int], str] = {}


def sha256(path: Path) -> str:
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _SHA_CACHE:
        h = hashlib.sha256()
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        _SHA_CACHE[key] = h.hexdigest()
    return _SHA_CACHE[key]


def project_of(filename: str) -> str:
    if filename.endswith(".tar.gz"):
        return sdk.normalize(filename[: -len(".tar.gz")].rsplit("-", 1)[0])
    return sdk.normalize(filename.split("-")[0])


def write_project_pages(root: Path, prefix: str, files: list[Path]) -> None:
    """``root/<prefix>/<project>/index.html`` for ``files`` (links to /files/...)."""
    by_project: dict[str, list[Path]] = {}
    for f in files:
        by_project.setdefault(project_of(f.name), []).append(f)
    base = root / prefix if prefix else root
    base.mkdir(parents=True, exist_ok=True)
    links = "".join(f'<a href="{html.escape(p)}/">{html.escape(p)}</a><br>\n'
                    for p in sorted(by_project))
    (base / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
    for project, pfiles in by_project.items():
        d = base / project
        d.mkdir(parents=True, exist_ok=True)
        anchors = "".join(
            f'<a href="/files/{html.escape(f.name)}#sha256={sha256(f)}">{html.escape(f.name)}</a><br>\n'
            for f in sorted(pfiles))
        (d / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{anchors}</body></html>\n")


def build_tree(root: Path, *, real_torch: bool = True) -> dict[str, list[Path]]:
    """Write every double into ``root/files`` and the index pages of both layouts."""
    files = root / "files"
    files.mkdir(parents=True, exist_ok=True)
    per_family = sdk.write_sdk(files, PER_FAMILY_VERSION, layout="per-family",
                               default_family="gfx94X-dcgpu", families=FAMILIES)
    multi = sdk.write_sdk(files, MULTI_ARCH_VERSION, layout="multi-arch",
                          default_family="gfx94X-dcgpu", families=FAMILIES, devices=DEVICES)
    placeholder = sdk.write_placeholder(files)
    torch70 = [sdk.write_torch(files, "2.8.0+rocm7.0", "7.0.51830"),
               sdk.write_torch(files, "2.7.0+rocm6.4", "6.4.43482"),
               sdk.write_torch(files, "2.8.0+rocm5.2", "5.2.21153")]
    if real_torch and CPU_TORCH.is_file():
        link = files / CPU_TORCH.name
        if not link.exists():
            try:
                os.link(CPU_TORCH, link)
            except OSError:
                link.symlink_to(CPU_TORCH)
        torch70.append(link)
    torch71 = sdk.write_split_torch(files, "2.8.0+rocm7.1", "7.1.25010", devices=DEVICES,
                                    sdk_version=MULTI_ARCH_VERSION)
    layout: dict[str, list[Path]] = {}
    for fam in FAMILIES:
        own = [f for f in per_family
               if not project_of(f.name).startswith("rocm-sdk-libraries-")
               or project_of(f.name) == sdk.normalize(f"rocm-sdk-libraries-{fam}")]
        layout[f"v2/{fam}"] = [*own, placeholder, *torch70]
    layout["multi"] = [*multi, placeholder, *torch71]
    for prefix, pfiles in layout.items():
        write_project_pages(root, prefix, pfiles)
    (root / "v2").mkdir(exist_ok=True)
    (root / "v2" / "index.html").write_text(
        "".join(f'<a href="{f}/">{f}</a><br>\n' for f in FAMILIES))
    return layout


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclass
class LocalIndex:
    root: Path
    url: str  # http://127.0.0.1:PORT/
    server: ThreadingHTTPServer

    @property
    def per_family(self) -> str:
        return self.url + "v2/"

    @property
    def multi_arch(self) -> str:
        return self.url + "multi/"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve(root: Path) -> LocalIndex:
    handler = partial(_Quiet, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return LocalIndex(root, f"http://127.0.0.1:{server.server_address[1]}/", server)


@dataclass
class Started:
    index: LocalIndex
    layout: Mapping[str, list[Path]]


def start(root: Path, *, real_torch: bool = True) -> Iterator[Started]:
    """Build and serve (a generator for pytest fixtures: yields, then shuts down)."""
    if root.exists():
        shutil.rmtree(root)
    layout = build_tree(root, real_torch=real_torch)
    index = serve(root)
    try:
        yield Started(index, layout)
    finally:
        index.close()
