"""A child's output is read as UTF-8 (what gcc, hipcc, pip and git write) whatever the
toolkit's own locale: under the POSIX locale with Python's UTF-8 mode and locale coercion off
(PEP 538/540), the locale's encoding is ASCII, and ``café`` must not come back as ``caf??``.
Bytes that are no UTF-8 still become U+FFFD, never an exception."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
from toolkit.core.proc import run
print(ascii(run(["printf", r"caf\\303\\251 \\377"]).stdout))
"""


def test_utf8_output_under_an_ascii_locale() -> None:
    env = {**os.environ, "LC_ALL": "POSIX", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    res = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, check=True)
    assert res.stdout.strip() == ascii("café \ufffd")
