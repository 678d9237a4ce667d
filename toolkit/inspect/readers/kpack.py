"""kpack: device code split out of host binaries into per-target archives (our own reader).

The format, as upstream states it (each fact with where it is read):

* A ``.kpack`` archive starts with a 16-byte header: the magic ``KPAK``, a little-endian u32
  format version (1) and a little-endian u64 offset of its table of contents; the blob data
  follows, aligned to 64 bytes; the table of contents is one MessagePack map at the end of
  the file (ROCm/TheRock@4877cc8 docs/rfcs/RFC0008-Multi-Arch-Packaging.md "Kpack Archive
  Format"; stellaraccident/rocm-kpack@694d7e5 python/rocm_kpack/kpack.py, the repository
  RFC0008 names as rocm-kpack before its move to ROCm/rocm-systems shared/kpack).
* The map's keys: ``compression_scheme`` (``"none"`` or ``"zstd-per-kernel"``),
  ``gfx_arches`` (a list of target names) and ``toc``: binary key -> target ->
  ``{"type", "ordinal", "original_size"}``; for ``none`` a ``blobs`` list of ``{"offset",
  "size"}`` (absolute file offsets) indexed by ordinal; for ``zstd-per-kernel`` a
  ``zstd_offset`` and ``zstd_size`` (ROCm/rocm-systems@0bf5857
  shared/kpack/runtime/src/toc_parser.cpp; stellaraccident/rocm-kpack@694d7e5
  python/rocm_kpack/kpack.py).
* The zstd blob: a little-endian u32 kernel count, then per kernel (in ordinal order) a u32
  frame size and one zstd frame of that size (stellaraccident/rocm-kpack@018a354
  python/rocm_kpack/compression.py).
* The binary keys are ``<kernel_name>#<index>``: the runtime looks a host binary's code
  object up as its marker's ``kernel_name``, ``#`` and the wrapper's index
  (ROCm/rocm-systems@1ddbe7e shared/kpack/runtime/src/loader.cpp).
* A split host binary carries a ``.rocm_kpack_ref`` section: a MessagePack map with
  ``kernel_name`` (a string) and ``kpack_search_paths`` (a non-empty list of strings, paths
  relative to the binary, where ``@GFXARCH@`` stands for the GPU's target)
  (ROCm/rocm-systems@1ddbe7e shared/kpack/runtime/src/loader.cpp ``parse_hipk_metadata``;
  ROCm/rocm-systems@7944dba shared/kpack/python/rocm_kpack/elf/kpack_transform.py).
* Its ``.hipFatBinSegment`` holds 24-byte fat-binary wrappers whose first u32 (little-endian)
  is 0x48495046 (``HIPF``: code in ``.hip_fatbin``) or, once split, 0x4B504948 (``HIPK``:
  code in kpack archives; ``.hip_fatbin`` is then zero-paged and no longer read)
  (ROCm/rocm-systems@7944dba shared/kpack/python/rocm_kpack/elf/kpack_transform.py).

Every offset and size read from an archive is checked against the file before it is used;
a count never sizes an allocation; only the first bytes of each code object are inflated
(its ELF header names its target). Anything that does not hold together raises
:class:`~toolkit.core.errors.KpackError`.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import zstandard

from toolkit.core.errors import KpackError
from toolkit.inspect.readers.amdgpu import ELF64_HEADER
from toolkit.inspect.readers.msgpack import unpack
from toolkit.inspect.readers.offload import code_target

MAGIC = b"KPAK"
VERSION = 1
HEADER = 16
SCHEMES = ("none", "zstd-per-kernel")
MAX_TOC = 64 << 20  # bytes of table of contents read at most
REF_SECTION, WRAPPER_SECTION, FATBIN = ".rocm_kpack_ref", ".hipFatBinSegment", ".hip_fatbin"
MAX_SECTION = 1 << 20  # a marker or wrapper section larger than this is not read
HIPF, HIPK, WRAPPER = 0x48495046, 0x4B504948, 24
FRAME_PEEK = (128 << 10) + 32  # compressed bytes enough for a zstd frame's first block
GFXARCH = "@GFXARCH@"


@dataclass(frozen=True)
class KpackRef:
    """What a split host binary says about its device code."""

    kernel_name: str
    search_paths: tuple[str, ...]
    hipk: int = 0  # wrappers marked HIPK
    hipf: int = 0  # wrappers still HIPF

    @property
    def split(self) -> bool:
        """Its code objects are all in kpack archives (no wrapper reads ``.hip_fatbin``)."""
        return self.hipk > 0 and self.hipf == 0


@dataclass(frozen=True)
class Kernel:
    binary: str  # the table of contents key: "<kernel_name>#<index>"
    target: str
    stored: int  # bytes it takes in the archive (its zstd frame, or its blob)
    size: int  # bytes of the code object (original_size)


@dataclass
class Archive:
    path: str
    scheme: str
    arches: tuple[str, ...]
    kernels: list[Kernel] = field(default_factory=list)

    def holds(self, kernel_name: str) -> list[Kernel]:
        """The code objects of one host binary (its marker's ``kernel_name``)."""
        prefix = kernel_name + "#"
        return [k for k in self.kernels if k.binary.startswith(prefix) and k.binary[len(prefix):].isdigit()]

    def per_target(self) -> dict[str, tuple[int, int]]:
        """Target -> (code objects, stored bytes)."""
        out: dict[str, tuple[int, int]] = {}
        for k in self.kernels:
            n, b = out.get(k.target, (0, 0))
            out[k.target] = (n + 1, b + k.stored)
        return out


class ReadAt(Protocol):
    def __call__(self, offset: int, n: int) -> bytes: ...


def read_archive(read: ReadAt, size: int, path: str) -> Archive:
    """An archive of ``size`` bytes, read through ``read(offset, n)`` (fewer bytes at the end)."""
    if size < HEADER:
        raise KpackError(f"{path}: truncated kpack archive ({size} bytes; its header alone is {HEADER})")
    head = read(0, HEADER)
    if len(head) < HEADER or head[:4] != MAGIC:
        raise KpackError(f"{path}: not a kpack archive (magic {bytes(head[:4])!r}, expected {MAGIC!r})")
    version, toc_at = struct.unpack_from("<IQ", head, 4)
    if version != VERSION:
        raise KpackError(f"{path}: kpack format version {version} (this reader knows {VERSION})")
    if not HEADER <= toc_at < size:
        raise KpackError(f"{path}: its table of contents offset {toc_at} lies outside the archive "
                         f"({HEADER}..{size - 1})")
    if size - toc_at > MAX_TOC:
        raise KpackError(f"{path}: a table of contents of {size - toc_at} bytes (over {MAX_TOC})")
    raw = read(toc_at, size - toc_at)
    if len(raw) != size - toc_at:
        raise KpackError(f"{path}: truncated kpack archive (its table of contents is cut short)")
    toc, _ = unpack(raw, f"{path}: table of contents")
    if not isinstance(toc, dict):
        raise KpackError(f"{path}: its table of contents is a {type(toc).__name__}, not a map")
    scheme = toc.get("compression_scheme", "none")
    if scheme not in SCHEMES:
        raise KpackError(f"{path}: compression scheme {scheme!r} is not one of {', '.join(SCHEMES)}")
    arches = _strings(toc.get("gfx_arches"), f"{path}: gfx_arches")
    zstd = scheme == "zstd-per-kernel"
    spans = _zstd_spans(read, toc, toc_at, path) if zstd else _blob_spans(toc, toc_at, path)
    archive = Archive(path, scheme, arches)
    entries = sorted(_entries(toc, arches, len(spans), path), key=lambda e: e[2])  # (reads go forwards)
    for binary, target, ordinal, original in entries:
        span = spans[ordinal]
        _check_code(read, span, original, target, f"{path}: {binary} for {target}")
        archive.kernels.append(Kernel(binary, target, span.stored, original))
    return archive


@dataclass(frozen=True)
class _Span:
    at: int
    stored: int
    head: bytes | None = None  # a zstd frame's first inflated bytes (None: read them at ``at``)
    declared: int = -1  # a zstd frame's content size (-1: not in its header)


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise KpackError(f"{what} is not a list of strings")
    return tuple(value)


def _uint(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise KpackError(f"{what} is not an unsigned integer ({value!r})")
    return value


def _within(at: int, n: int, end: int, what: str) -> None:
    if at < HEADER or at + n > end:
        raise KpackError(f"{what} ({at}..{at + n}) lies outside the archive's data ({HEADER}..{end})")


def _blob_spans(toc: dict[str, Any], end: int, path: str) -> list[_Span]:
    blobs = toc.get("blobs")
    if not isinstance(blobs, list):
        raise KpackError(f"{path}: an uncompressed archive without a blobs list")
    spans = []
    for i, b in enumerate(blobs):
        if not isinstance(b, dict):
            raise KpackError(f"{path}: blob {i} is not a map")
        at = _uint(b.get("offset"), f"{path}: blob {i} offset")
        n = _uint(b.get("size"), f"{path}: blob {i} size")
        _within(at, n, end, f"{path}: blob {i}")
        spans.append(_Span(at, n))
    return spans


def _zstd_spans(read: ReadAt, toc: dict[str, Any], end: int, path: str) -> list[_Span]:
    """Each zstd frame (from the blob's own size prefixes) with its first inflated bytes."""
    at = _uint(toc.get("zstd_offset"), f"{path}: zstd_offset")
    size = _uint(toc.get("zstd_size"), f"{path}: zstd_size")
    _within(at, size, end, f"{path}: the zstd blob")
    stop = at + size
    count = _u32(read, at, stop, f"{path}: the zstd blob's kernel count")
    if 4 + 4 * count > size:
        raise KpackError(f"{path}: the zstd blob declares {count} kernels in {size} bytes")
    pos, spans = at + 4, []
    for i in range(count):
        n = _u32(read, pos, stop, f"{path}: the size of zstd frame {i}")
        _within(pos + 4, n, stop, f"{path}: zstd frame {i} of {n} bytes")
        spans.append(_frame(read(pos + 4, min(n, FRAME_PEEK)), pos + 4, n, f"{path}: zstd frame {i}"))
        pos += 4 + n
    if pos != stop:
        raise KpackError(f"{path}: the zstd blob's {count} frames end at {pos}, its size says {stop}")
    return spans


def _u32(read: ReadAt, at: int, stop: int, what: str) -> int:
    raw = read(at, 4) if at + 4 <= stop else b""
    if len(raw) != 4:
        raise KpackError(f"{what} at offset {at} lies past the data")
    return int.from_bytes(raw, "little")


def _entries(toc: dict[str, Any], arches: tuple[str, ...], count: int,
             path: str) -> Iterable[tuple[str, str, int, int]]:
    """(binary key, target, ordinal, original size) of every table of contents entry."""
    table = toc.get("toc")
    if not isinstance(table, dict):
        raise KpackError(f"{path}: no toc map in its table of contents")
    for binary, per in table.items():
        if not isinstance(per, dict):
            raise KpackError(f"{path}: toc entry {binary!r} is not a map of targets")
        for target, meta in per.items():
            what = f"{path}: {binary} for {target}"
            if target not in arches:
                raise KpackError(f"{what}: its gfx_arches ({', '.join(arches)}) do not name {target}")
            if not isinstance(meta, dict):
                raise KpackError(f"{what} is not a map")
            ordinal = _uint(meta.get("ordinal"), f"{what}: ordinal")
            if ordinal >= count:
                raise KpackError(f"{what}: ordinal {ordinal} points outside the {count} stored code objects")
            yield binary, target, ordinal, _uint(meta.get("original_size"), f"{what}: original_size")


def _frame(frame: bytes, at: int, n: int, what: str) -> _Span:
    """A zstd frame's span, its content size and first bytes (only those are inflated)."""
    try:
        declared = zstandard.frame_content_size(frame)
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(frame)) as r:
            head = r.read(ELF64_HEADER)
    except zstandard.ZstdError as err:
        raise KpackError(f"{what}: not a readable zstd frame ({err})") from err
    return _Span(at, n, head, declared)


def _check_code(read: ReadAt, span: _Span, original: int, target: str, what: str) -> None:
    """The stored code object's size and ELF header agree with its entry."""
    if span.head is None:
        if span.stored != original:
            raise KpackError(f"{what}: its blob holds {span.stored} bytes, its entry says {original}")
        head = read(span.at, min(span.stored, ELF64_HEADER))
    else:
        if span.declared >= 0 and span.declared != original:
            raise KpackError(f"{what}: its zstd frame holds {span.declared} bytes, its entry says {original}")
        head = span.head
    got = code_target(head, original) if len(head) == ELF64_HEADER else None
    if got is None:
        raise KpackError(f"{what}: not an AMDGPU code object (its first bytes are no valid ELF header)")
    if got.split(":")[0] != target.split(":")[0]:
        raise KpackError(f"{what}: the code object's ELF header says {got}")


class _Section(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def size(self) -> int: ...


def wanted(sections: Iterable[Any]) -> list[Any]:
    """The kpack sections a host binary's reader must hold (small enough to read)."""
    return [s for s in sections if s.name in (REF_SECTION, WRAPPER_SECTION) and 0 < s.size <= MAX_SECTION]


def elf_kpack(sections: Iterable[Any], data: Callable[[Any], bytes],
              problems: list[str]) -> tuple[KpackRef | None, frozenset[str]]:
    """A host binary's kpack marker (None: not split) and the sections no longer to scan for
    GPU code (``.hip_fatbin`` once every wrapper is HIPK). Unreadable: a line in ``problems``."""
    by_name = {s.name: s for s in sections}
    marker = by_name.get(REF_SECTION)
    if marker is None:
        return None, frozenset()
    hipk = hipf = 0
    wrappers = by_name.get(WRAPPER_SECTION)
    if wrappers is not None and 0 < wrappers.size <= MAX_SECTION:
        raw = data(wrappers)
        magics = [int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw) - WRAPPER + 1, WRAPPER)]
        hipk, hipf = magics.count(HIPK), magics.count(HIPF)
    try:
        if not 0 < marker.size <= MAX_SECTION:
            raise KpackError(f"{REF_SECTION} has {marker.size} bytes (1..{MAX_SECTION} are read)")
        name, paths = read_ref(data(marker))
    except KpackError as err:
        problems.append(f"{REF_SECTION} is unreadable: {err}")
        name, paths = "", ()
    ref = KpackRef(name, paths, hipk, hipf)
    return ref, frozenset({FATBIN}) if ref.split else frozenset()


def read_ref(raw: bytes) -> tuple[str, tuple[str, ...]]:
    """(kernel name, search paths) of a ``.rocm_kpack_ref`` marker."""
    value, _ = unpack(raw, REF_SECTION, whole=False)  # (the section may be padded after it)
    if not isinstance(value, dict):
        raise KpackError(f"{REF_SECTION} holds a {type(value).__name__}, not a map")
    name = value.get("kernel_name")
    if not isinstance(name, str) or not name:
        raise KpackError(f"{REF_SECTION} has no kernel_name string")
    paths = _strings(value.get("kpack_search_paths"), f"{REF_SECTION}: kpack_search_paths")
    if not paths:
        raise KpackError(f"{REF_SECTION}: kpack_search_paths is empty")
    return name, paths
