"""Which entries of an offload bundle are GPU code a target can run: an ``amdgcn`` triple with
a processor in its id (clang's offload bundle id: ``<kind>-<triple>-<target id>``, LLVM
ClangOffloadBundler docs). The host entry, a SPIR-V entry (``hip-spirv64-amd-amdhsa--
amdgcnspirv``, what ``--offload-arch=amdgcnspirv`` bundles: compiled for the GPU at run time)
and an amdgcn entry naming no processor count for no target."""

from __future__ import annotations

from tests.fixtures.bundles import make_bundle
from toolkit.inspect.readers.gpuscan import CodeObject, _candidate
from toolkit.inspect.readers.offload import PLAIN_MAGIC, Stream


def test_only_amdgcn_entries_with_a_processor_count() -> None:
    bundle = make_bundle([("host-x86_64-unknown-linux-gnu-", b""),
                          ("hip-spirv64-amd-amdhsa--amdgcnspirv", b"\x03\x02\x23\x07" + bytes(60)),
                          ("hipv4-amdgcn-amd-amdhsa--", b"\x7fELF" + bytes(60)),
                          ("hipv4-amdgcn-amd-amdhsa--gfx942", b"\x7fELF" + bytes(124))], align=1)
    data = bundle + b"after"
    s = Stream([data[i : i + 7] for i in range(0, len(data), 7)])
    assert _candidate(s, PLAIN_MAGIC, len(data), ".hip_fatbin") == [
        CodeObject("gfx942", 128, ".hip_fatbin (bundle)")]
    assert s.pos == len(bundle)
