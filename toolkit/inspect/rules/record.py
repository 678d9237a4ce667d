"""The ``record`` rule: RECORD's hashes and sizes against the members as they were inflated.

Every member must be listed with a hash and its size (except RECORD itself and its
signatures), the hash must match (PEP 376/627: ``algorithm=urlsafe-base64`` without
padding), in an algorithm the wheel spec allows ("sha256 or better", never md5 or sha1:
:data:`ALLOWED`; any other is one finding, and its entries are not compared), and RECORD
must list nothing that is not there.
"""

from __future__ import annotations

import csv
import hashlib
import io
import posixpath
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass

from toolkit.core.errors import MemberError
from toolkit.core.text import escape, quoted
from toolkit.inspect.readers.wheelzip import WheelZip
from toolkit.inspect.report import Finding

UNSIGNED = (".dist-info/RECORD", ".dist-info/RECORD.jws", ".dist-info/RECORD.p7s")


@dataclass(frozen=True)
class Entry:
    algo: str | None
    digest: str | None  # "algo=value" as written
    size: int | None


def record_member(wz: WheelZip) -> zipfile.ZipInfo | None:
    found = [i for i in wz.members if i.filename.endswith(".dist-info/RECORD") and i.filename.count("/") == 1]
    return found[0] if len(found) == 1 else None


def read_record(wz: WheelZip) -> tuple[dict[str, Entry] | None, list[Finding]]:
    """RECORD's entries by path, or None with the finding that says why it cannot be used."""
    info = record_member(wz)
    if info is None:
        return None, [Finding("record", "error", None, "the wheel has no (single) .dist-info/RECORD: "
                              "its members cannot be verified", cause="no RECORD")]
    try:
        text = wz.read_small(info).decode("utf-8")
        rows = list(csv.reader(io.StringIO(text)))
    except (MemberError, UnicodeDecodeError, csv.Error) as err:
        msg = f"{info.filename} cannot be read: {err}"
        return None, [Finding("record", "error", info.filename, msg, cause="RECORD unreadable")]
    out: dict[str, Entry] = {}
    bad: list[Finding] = []
    for n, row in enumerate(rows, 1):
        if not row:
            continue
        if len(row) != 3:
            msg = f"{info.filename} line {n}: expected path,hash,size, got {len(row)} fields"
            bad.append(Finding("record", "error", None, msg, cause="malformed RECORD line"))
            continue
        path, digest, size = row
        algo = digest.partition("=")[0] if digest else None
        try:
            out[posixpath.normpath(path)] = Entry(algo, digest or None, int(size) if size else None)
        except ValueError:
            msg = f"{info.filename} line {n}: size {size!r} is not a number"
            bad.append(Finding("record", "error", path, msg, cause="malformed RECORD line"))
    return out, bad + algorithm_findings(out)


def _allowed() -> tuple[str, ...]:
    """The wheel spec's "sha256 or better" (never md5 or sha1): the guaranteed hashlib
    algorithms with a digest of 256 bits or more; ``shake_*`` have no fixed length."""
    return tuple(sorted(a for a in hashlib.algorithms_guaranteed
                        if not a.startswith("shake_") and hashlib.new(a).digest_size >= 32))


ALLOWED = _allowed()  # blake2b, blake2s, sha256, sha384, sha3_256, sha3_384, sha3_512, sha512


def algorithm(entry: Entry | None) -> str:
    """The hashlib algorithm to hash a member with (sha256 when RECORD names none allowed)."""
    if entry is not None and entry.algo in ALLOWED:
        return entry.algo
    return "sha256"


def algorithm_findings(entries: Mapping[str, Entry]) -> list[Finding]:
    """One error per hash algorithm RECORD uses that the wheel spec does not allow."""
    bad: dict[str, list[str]] = {}
    for path, e in entries.items():
        if e.digest is not None and e.algo not in ALLOWED:
            bad.setdefault(e.algo or "", []).append(path)
    out = []
    for algo, paths in sorted(bad.items()):
        n = len(paths)
        msg = (f"RECORD hashes {n} member{'s' if n != 1 else ''} with {quoted(algo, 40)} (the wheel "
               f"spec allows sha256 or stronger: {', '.join(ALLOWED)}), e.g. {escape(min(paths))}")
        out.append(Finding("record", "error", None, msg, cause="RECORD hash algorithm not allowed"))
    return out


def record_findings(
    entries: Mapping[str, Entry], seen: Mapping[str, tuple[str | None, int]], unread: set[str]
) -> list[Finding]:
    """Compare RECORD with the members read: ``seen`` maps each to (digest, size); members in
    ``unread`` could not be inflated (already reported) and are only checked for presence."""
    out: list[Finding] = []
    for name, (digest, size) in seen.items():
        if name.endswith(UNSIGNED):
            continue
        e = entries.get(name)
        if e is None:
            out.append(Finding("record", "error", name, f"{name} is not listed in RECORD",
                               cause="member not in RECORD"))
            continue
        if name in unread:
            continue
        if e.digest is None:
            out.append(Finding("record", "error", name, f"RECORD lists {name} without a hash",
                               cause="RECORD entry without a hash"))
        elif e.algo not in ALLOWED:
            pass  # named once for all its entries (``algorithm_findings``), never hashed with it
        elif e.digest != digest:
            msg = f"{name}: RECORD says {e.digest}, its content hashes to {digest}"
            out.append(Finding("record", "error", name, msg, cause="hash differs from RECORD"))
        if e.size is not None and e.size != size:
            msg = f"{name}: RECORD says {e.size} bytes, the member has {size}"
            out.append(Finding("record", "error", name, msg, cause="size differs from RECORD"))
    for name in sorted(set(entries) - set(seen)):
        if not name.endswith(UNSIGNED):
            out.append(Finding("record", "error", name, f"RECORD lists {name}, which the wheel lacks",
                               cause="RECORD lists a missing file"))
    return out
