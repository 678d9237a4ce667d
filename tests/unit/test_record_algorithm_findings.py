"""One ``record`` error per hash algorithm RECORD uses that the wheel spec forbids ("sha256
or better; specifically, md5 and sha1 are not permitted"), in whole: how many members, the
algorithm quoted, the allowed ones (hashlib's guaranteed algorithms of 256 bits or more), the
first member by name (control characters escaped), grouped under one cause; entries without
a hash are another finding's."""

from __future__ import annotations

from toolkit.inspect.report import Finding
from toolkit.inspect.rules.record import Entry, algorithm_findings

ALLOWED = "blake2b, blake2s, sha256, sha384, sha3_256, sha3_384, sha3_512, sha512"


def _finding(n: int, algo: str, first: str) -> Finding:
    return Finding("record", "error", None,
                   f"RECORD hashes {n} member{'s' * (n != 1)} with {algo} (the wheel spec allows sha256 "
                   f"or stronger: {ALLOWED}), e.g. {first}", cause="RECORD hash algorithm not allowed")


def test_one_error_per_forbidden_algorithm() -> None:
    entries = {
        "p/b.py": Entry("sha1", "sha1=AAAA", 1), "p/a\x1b.py": Entry("sha1", "sha1=BBBB", 2),
        "p/c.py": Entry("md5", "md5=CCCC", 3), "p/d.py": Entry("sha256", "sha256=DDDD", 4),
        "p/e.py": Entry("", "=EEEE", 5), "p/f.py": Entry(None, None, None),
        "p/g.py": Entry("sha512", "sha512=GGGG", None),
    }
    assert algorithm_findings(entries) == [
        _finding(1, "''", "p/e.py"), _finding(1, "'md5'", "p/c.py"), _finding(2, "'sha1'", "p/a\\x1b.py")]
    assert algorithm_findings({"p/d.py": Entry("sha256", "sha256=DDDD", 4)}) == []
