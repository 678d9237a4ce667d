"""What a start of the CLI imports: no HTTP stack (``urllib.request`` pulls in http.client,
email and ssl, ~50 ms) until a command opens a URL. The unit suite starts the CLI hundreds of
times, and a contributor runs it for every matrix listing and plan.

The truth is the interpreter's own ``sys.modules`` in a fresh child (pytest itself has imported
them here); and the same child, opening a URL, shows the check can fail.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("urllib.request", "http.client", "ssl")
CHILD = """
import sys
from toolkit.cli.main import build_parser
build_parser()
print(",".join(m for m in {heavy!r} if m in sys.modules))
if sys.argv[1:] == ["open"]:
    from toolkit.core.urls import open_url
    try:
        open_url("http://127.0.0.1:9/", what="a dead port", timeout=1)
    except Exception:
        pass
    print(",".join(m for m in {heavy!r} if m in sys.modules))
"""


def test_the_cli_starts_without_the_http_stack_and_loads_it_to_open_a_url() -> None:
    res = subprocess.run([sys.executable, "-c", CHILD.format(heavy=HEAVY), "open"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    at_start, after_open = res.stdout.splitlines()
    assert at_start == "", f"imported at start: {at_start}"
    assert after_open.split(",") == list(HEAVY)  # the check sees them once they are imported
