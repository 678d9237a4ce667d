"""The index probe, once per run: two builds of one run (``toolkit.run.jobs.run_plans``, what a
nox build session of several packages runs) share their indexes' verdicts; the next run probes
again. Real HTTP on 127.0.0.1: a port nothing listens on, then a real index server on that
same port that counts the requests it gets.

Both builds stop right after the probe (their planned ``uv`` does not exist: ``create-env``
fails, exit 5), so nothing is installed or built.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.doubles.fixtures import write_data
from tests.fixtures.net import dead_port
from tests.fixtures.system_rocm import rocm_at
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix
from toolkit.run.jobs import run_plans

BUILDS = ("sample-0.9.0-cp311-rocm7.0", "sample-2.0.0-cp311-rocm7.0")  # one index, two envs
SDK_PAGE = "/v2/gfx94X-dcgpu/rocm/"  # the per-family SDK index's project page
TORCH_PAGE = "/v2/gfx94X-dcgpu/torch/"



class Counting(SimpleHTTPRequestHandler):
    seen: Counter[str]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.seen[self.path] += 1
        super().do_GET()


def serve(root: Path, port: int) -> tuple[ThreadingHTTPServer, Counter[str]]:
    for page in (SDK_PAGE, TORCH_PAGE):
        (root / page.strip("/")).mkdir(parents=True, exist_ok=True)
        (root / page.strip("/") / "index.html").write_text("<html><body></body></html>\n")
    seen: Counter[str] = Counter()
    handler = partial(type("Handler", (Counting,), {"seen": seen}), directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server, seen


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, Layout]]:
    port = dead_port()
    data = write_data(tmp_path / "data", f"http://127.0.0.1:{port}/")
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(data))
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path / "cache"))
    yield port, Layout(tmp_path / "work", tmp_path / "cache")


def plans(layout: Layout) -> list[Any]:
    m = load_matrix()
    host = HostFacts(cores=2, mem_available_gib=8.0, uv="/nonexistent/uv")
    return [plan(m, m.build(b), Options(), host, layout) for b in BUILDS]


def log(layout: Layout, build_id: str) -> str:
    return (layout.root / "artifacts" / build_id / "build.log").read_text()


def test_each_index_is_probed_once_per_run_and_again_in_the_next(
        world: tuple[int, Layout], tmp_path: Path) -> None:
    port, layout = world
    # run 1: nothing listens: the first build finds the SDK index unreachable, the second
    # is told the same without trying again
    first, second = run_plans(plans(layout), layout)
    assert (first.exit_code, second.exit_code) == (8, 8)
    assert first.failed_step == second.failed_step == "probe-indexes"
    where = f"http://127.0.0.1:{port}/v2/gfx94X-dcgpu/"
    for o in (first, second):
        assert f"cannot reach ROCm SDK index {where}" in (o.error or "")
    assert f"# probe ROCm SDK index {where}\n" in log(layout, BUILDS[0])
    assert (f"# probe ROCm SDK index {where}: unreachable (probed earlier in this run)"
            in log(layout, BUILDS[1]))

    # run 2, a new run: the index is up now: probed again (not the first run's verdict), and
    # once for both builds (each page requested once), which then go on past the probe
    server, seen = serve(tmp_path / "www", port)
    try:
        first, second = run_plans(plans(layout), layout)
    finally:
        server.shutdown()
        server.server_close()
    assert seen == Counter({SDK_PAGE: 1, TORCH_PAGE: 1})
    assert (first.exit_code, second.exit_code) == (5, 5)
    assert first.failed_step == second.failed_step == "create-env"  # the uv that is not there
    assert (f"# probe ROCm SDK index {where}: reachable (probed earlier in this run)"
            in log(layout, BUILDS[1]))

    # run 3: every run asks again
    server, seen = serve(tmp_path / "www", port)
    try:
        run_plans(plans(layout)[:1], layout)
    finally:
        server.shutdown()
        server.server_close()
    assert seen == Counter({SDK_PAGE: 1, TORCH_PAGE: 1})


# ----------------------------------------------------------------------------- the hint
@pytest.mark.parametrize(("what", "names", "not_names"), [
    # the variable is set, as the README's "CI may set `TOOLKIT_ROCM_INDEX_URL`" says
    ("ROCm SDK index", ["--index-url URL", "set TOOLKIT_ROCM_INDEX_URL"], ["--find-links"]),
    ("find-links location", ["--find-links PATH"], ["--index-url"]),
    ("torch index", ["toolkit/data/rocm.toml"], ["--index-url", "--find-links"]),
])
def test_the_hint_names_what_replaces_the_location(tmp_path: Path, what: str, names: list[str],
                                                   not_names: list[str]) -> None:
    from toolkit.run.provisioning import source_hint

    nothing = {"PATH": str(tmp_path / "empty")}  # no ROCm: no $ROCM_PATH, no hipcc, no /opt
    hint = source_hint(what, sdk=what != "torch index", environ=nothing, opt=str(tmp_path))
    assert all(n in hint for n in names) and not any(n in hint for n in not_names), hint
    assert "--rocm-from system" not in hint


def test_rocm_from_system_only_where_a_system_rocm_is_found(tmp_path: Path) -> None:
    from toolkit.run.provisioning import source_hint

    root = rocm_at(tmp_path / "rocm-6.4.1", "6.4.1-123")
    found = {"ROCM_PATH": str(root), "PATH": ""}
    hint = source_hint("ROCm SDK index", sdk=True, environ=found, opt=str(tmp_path / "none"))
    assert hint.endswith(f", or --rocm-from system (ROCm 6.4.1 is at {root})"), hint
    other = source_hint("ROCm SDK index", sdk=True, environ=found, opt=str(tmp_path / "none"),
                        want="7.0")
    assert other.endswith(f"(ROCm 6.4.1 is at {root}, not 7.0: add --allow-rocm-mismatch)")
    assert source_hint("ROCm SDK index", sdk=True, environ=found, opt=str(tmp_path / "none"),
                       want="6.4") == hint
    links = source_hint("find-links location", sdk=True, environ=found, opt=str(tmp_path))
    assert "--find-links PATH" in links and "--rocm-from system" in links
    # torch comes from its index whatever provides ROCm: --rocm-from system would not help
    assert "--rocm-from system" not in source_hint("torch index", sdk=False, environ=found)
    nothing = {"ROCM_PATH": str(tmp_path / "none"), "PATH": ""}
    assert "--rocm-from system" not in source_hint("ROCm SDK index", sdk=True, environ=nothing,
                                                   opt=str(tmp_path / "none"))
