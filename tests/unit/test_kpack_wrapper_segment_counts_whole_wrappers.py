"""A ``.hipFatBinSegment`` holds whole 24-byte wrappers (``struct { u32 magic; u32 version;
void *binary; void *unused; }`` in the HIP runtime, 4 + 4 + 8 + 8 bytes on x86-64); a
trailing piece shorter than one wrapper is no wrapper, whatever its first bytes say. Counts
below written by hand from the bytes given."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from tests.fixtures import kpack as K
from toolkit.inspect.readers.kpack import elf_kpack


@dataclass(frozen=True)
class _Section:
    name: str
    size: int
    blob: bytes


def _ref(segment: bytes) -> tuple[int, int, bool]:
    marker = K.ref("lib/libx.so", ["x.kpack"])
    sections = [_Section(".rocm_kpack_ref", len(marker), marker),
                _Section(".hipFatBinSegment", len(segment), segment)]
    problems: list[str] = []
    ref, _ = elf_kpack(sections, lambda s: s.blob, problems)
    assert ref is not None and problems == []
    return ref.hipk, ref.hipf, ref.split


def test_whole_wrappers_are_counted_by_their_magic() -> None:
    assert _ref(K.wrappers([K.HIPK, K.HIPK])) == (2, 0, True)
    assert _ref(K.wrappers([K.HIPK, K.HIPF])) == (1, 1, False)


def test_a_trailing_piece_shorter_than_a_wrapper_is_not_one() -> None:
    tail = struct.pack("<II", K.HIPF, 1)  # 8 bytes: a HIPF magic, but no whole wrapper
    assert _ref(K.wrappers([K.HIPK]) + tail) == (1, 0, True)
    assert _ref(K.wrappers([K.HIPK]) + struct.pack("<I", K.HIPK) + bytes(19)) == (1, 0, True)  # 23 bytes
