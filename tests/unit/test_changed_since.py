"""Rebuild what changed (issue 28 part 7): a build whose identity digest a published manifest
has is not rebuilt; ``matrix --format github --changed-since SOURCE`` gives the others.

The truths are independent of the digest code: the builds a new apex commit affects are the
matrix's builds of that version (``Matrix.select``); the published manifests are those a
build on another host writes (``tests/fixtures/manifests.py``: its own interpreter, uv,
folders, cores, ccache); the refusals are the README's and the CLI help's words.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import clones
from tests.fixtures.manifests import write_folder
from toolkit.core.errors import UsageError
from toolkit.data.ci import CiEntry, github_matrix, load_ci
from toolkit.data.matrix import Matrix
from toolkit.plan.recipes import load_matrix
from toolkit.plan.recipes.fbgemm_gpu import tbb_source
from toolkit.verify.changed import changed
from toolkit.verify.published import Published, _folder_manifests, read_published

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "toolkit" / "data"
TRIGGER = "push"  # every build once (the nightly is the same builds for more families: 5x the planning)


def entries(matrix: Matrix) -> list[CiEntry]:
    return github_matrix(matrix, load_ci(matrix), TRIGGER)


@pytest.fixture(scope="module")
def last_night(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Manifests of every entry (TRIGGER) of today's data, as a build on another host wrote them."""
    m = load_matrix()
    return write_folder(tmp_path_factory.mktemp("published"), m, entries(m))


@pytest.fixture(scope="module")
def published(last_night: Path) -> Published:
    """What ``read_published`` makes of ``last_night`` (read and checked once per module)."""
    return read_published(str(last_night))


def new_branch_commit(data: Path, version: str, commit: str) -> None:
    """What ``invoke upstream --write`` writes for a new commit on apex's release/<version>:
    the head the data read that branch at (``ROCm/apex@<head> (release/<version>)``)."""
    toml = data / "apex.toml"
    text = toml.read_text()
    new, n = re.subn(rf"ROCm/apex@[0-9a-f]+ \(release/{re.escape(version)}\)",
                     f"ROCm/apex@{commit} (release/{version})", text)
    assert n == 1, version
    toml.write_text(new)


def apex_versions() -> list[str]:
    m = load_matrix()
    return sorted({b.version for b in m.builds if b.package.name == "apex"})


def test_nothing_changed_nothing_rebuilt(published: Published) -> None:
    m = load_matrix()
    every = entries(m)
    assert published.read == len(every) and not published.left_out
    assert changed(m, every, published.digests) == []
    assert changed(m, every[:5], ()) == every[:5]  # nothing published: everything


def test_a_new_apex_commit_rebuilds_exactly_that_versions_builds(
        published: Published, data_copy: Path) -> None:
    version = apex_versions()[-1]
    new_branch_commit(data_copy, version, "0123456789a")
    m = load_matrix(data_copy)
    expected = {b.id for b in m.select(packages=["apex"], versions=[version])}
    got = changed(m, entries(m), published.digests)
    assert {e.build.id for e in got} == expected
    assert len(got) == len([e for e in entries(m) if e.build.id in expected]) > 0


def test_another_tbb_pin_rebuilds_its_builds_only(published: Published,
                                                 data_copy: Path) -> None:
    """A change of an input the plan holds (not the evidence): fbgemm_gpu's TBB pin."""
    toml = data_copy / "fbgemm_gpu.toml"
    text = toml.read_text()
    pins = re.findall(r'spec = "tbb-devel==([0-9.]+)"', text)
    if not pins:
        pytest.skip("no TBB pin in fbgemm_gpu.toml")
    toml.write_text(text.replace(f"tbb-devel=={pins[0]}", "tbb-devel==1999.1.1"))
    m = load_matrix(data_copy)
    expected = {b.id for b in m.builds
                if tbb_source(b.pkg_version) and tbb_source(b.pkg_version).spec == "tbb-devel==1999.1.1"}
    got = changed(m, entries(m), published.digests)
    assert expected and {e.build.id for e in got} == expected


def test_a_moved_channel_rebuilds_that_releases_builds_only(published: Published,
                                                           data_copy: Path) -> None:
    """A ROCm-side change (the newest released TheRock line's default channel moves, as
    `upstream --write` writes it): every build on that release, and no other, is rebuilt."""
    import tomllib

    raw = tomllib.loads((data_copy / "rocm.toml").read_text())["releases"]
    released = [v for v, r in raw.items() if r.get("line", {}).get("status") == "released"]
    if not released:
        pytest.skip("no released TheRock line in rocm.toml")
    rocm = max(released, key=lambda v: tuple(int(x) for x in v.split(".")))
    old = raw[rocm]["channels"]["stable"]
    toml = data_copy / "rocm.toml"
    text = toml.read_text()
    assert text.count(f'stable = "{old}"') >= 1
    head, sep, rest = text.partition(f'[releases."{rocm}"]')
    body, nxt, tail = rest.partition("\n[releases.")
    toml.write_text(head + sep + body.replace(old, "https://moved.example.amd.com/whl/", 1)
                    + nxt + tail)
    m = load_matrix(data_copy)
    expected = {b.id for b in m.select(rocm=[rocm])}
    got = changed(m, entries(m), published.digests)
    assert expected and {e.build.id for e in got} == expected


DIGESTS = """
import hashlib, json, os, sys, dataclasses
from pathlib import Path
from types import MappingProxyType
from toolkit.data.ci import github_matrix, load_ci
from toolkit.env.host import discover
from toolkit.plan.layout import Layout
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix
from toolkit.run.identity import plan_digest
from toolkit.verify.changed import entry_digest, entry_options
from toolkit.plan.recipes.fbgemm_gpu import tbb_source
m = load_matrix()
layout = Layout.default()  # this clone's folder, this run's TOOLKIT_CACHE_DIR
canonical, here = [], []
for e in github_matrix(m, load_ci(m), "schedule")[::7]:  # every release, package, Python
    canonical.append([e.artifact, entry_digest(m, e)])
    host = dataclasses.replace(discover(), interpreters=MappingProxyType(
        {e.build.python: sys.executable}))
    p = plan(m, e.build, entry_options(m, e), host, layout, toolkit_python=sys.executable)
    here.append([e.artifact, plan_digest(p, layout)])
h = lambda x: hashlib.sha256(json.dumps(x).encode()).hexdigest()
print(h(canonical), h(here), len(canonical), layout.root, layout.cache)
"""


def test_digests_are_the_same_on_any_host_seed_and_clone(tmp_path: Path) -> None:
    """Two clones at other paths, each with its own interpreter, cache and hash seed: the
    same digests, whether planned on the canonical host or on the one at hand."""
    a = clones.clone_a(tmp_path / "a" / "toolkit")
    b = clones.clone_b(a, tmp_path / "elsewhere" / "b")
    runs = []
    procs = {}  # the two interpreters run side by side
    for clone, seed in ((a, "0"), (b, "1")):
        python = clones.interpreter(tmp_path / f"py-{seed}")
        env = {**clones.env_for(clone, tmp_path / f"cache-{seed}", python),
               "PYTHONHASHSEED": seed}
        procs[clone, seed] = subprocess.Popen([str(python), "-c", DIGESTS], cwd=clone, env=env,
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for (clone, seed), proc in procs.items():
            stdout, stderr = proc.communicate(timeout=300)
            assert proc.returncode == 0, stderr[-3000:]
            canonical, here, count, root, cache = stdout.split()
            assert canonical == here and int(count) > 0
            assert (Path(root), Path(cache)) == (clone.resolve(), (tmp_path / f"cache-{seed}").resolve())
            runs.append(canonical)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert len(set(runs)) == 1, runs


# ----------------------------------------------------------------------------- the real CLI
def toolkit(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) \
        -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolkit", "matrix", "--format", "github",
                           *args], cwd=cwd, env={**os.environ, **(env or {})},
                          capture_output=True, text=True, timeout=120)


def refused(res: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert res.returncode == code, (res.returncode, res.stdout[-500:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr and res.stdout == ""
    lines = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, res.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_the_cli_gives_only_the_changed_builds(last_night: Path, data_copy: Path) -> None:
    version = apex_versions()[0]
    new_branch_commit(data_copy, version, "fedcba9876")
    res = toolkit("--trigger", TRIGGER, "--changed-since", str(last_night),
                  env={"TOOLKIT_DATA_DIR": str(data_copy)})
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)["include"]
    m = load_matrix(data_copy)
    expected = {b.id for b in m.select(packages=["apex"], versions=[version])}
    assert {e["id"] for e in out} == expected
    # one entry per build and family: every family of those builds, no other entry
    every = entries(m)
    assert len(out) == sum(1 for e in every if e.build.id in expected)
    assert f"{len(out)} of {len(every)} builds" in res.stderr


def test_a_missing_folder_a_fifo_and_a_file_are_refused(tmp_path: Path) -> None:
    refused(toolkit("--changed-since", str(tmp_path / "nope")), 2, "no such folder",
            "valid: a folder of manifests or an index URL")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    refused(toolkit("--changed-since", str(fifo)), 2, "a FIFO, not a folder",
            "valid: a folder of manifests or an index URL")
    (tmp_path / "f.json").write_text("{}")
    refused(toolkit("--changed-since", str(tmp_path / "f.json")), 2, "not a folder",
            "valid: a folder of manifests or an index URL")


def test_a_malformed_manifest_is_refused_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "m" / "wheels-x" / "manifest.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{not json")
    refused(toolkit("--changed-since", str(tmp_path / "m")), 2, str(bad), "not a readable manifest")
    bad.write_text(json.dumps({"build": {"id": "x", "package": "x", "version": "1"}}))
    refused(toolkit("--changed-since", str(tmp_path / "m")), 2, str(bad), "manifest")


@pytest.mark.parametrize("edit", ["identity", "plan", "digest"])
def test_an_altered_manifest_is_refused(last_night: Path, tmp_path: Path, edit: str) -> None:
    folder = tmp_path / "m"  # one build's artifact folder of last night's
    first = sorted(last_night.iterdir())[0]
    shutil.copytree(first, folder / first.name)
    target = sorted(folder.rglob("manifest.json"))[0]
    data = json.loads(target.read_text())
    if edit == "identity":  # another Python claimed, the digest kept
        data["identity"]["python"] = "3.99"
    elif edit == "plan":  # a step's command changed, its digests kept
        data["plan"]["steps"][-1]["name"] = "something-else"
    else:
        data["identity"]["digest"] = "0" * 64
    target.write_text(json.dumps(data))
    refused(toolkit("--changed-since", str(folder)), 2, str(target), "altered?")


def test_insecure_and_unreachable_indexes(tmp_path: Path) -> None:
    res = toolkit("--changed-since", "http://ci:s3cret@example.com/simple/")
    refused(res, 2, "refusing insecure", "http://***@example.com/simple/",
            "--allow-insecure-index")
    assert "s3cret" not in res.stderr
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = toolkit("--changed-since", f"http://ci:s3cret@127.0.0.1:{port}/simple/")
    refused(res, 8, "cannot reach the --changed-since index", f"127.0.0.1:{port}")
    assert "s3cret" not in res.stderr


def test_only_with_the_github_formats(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "toolkit", "matrix", "--changed-since",
                          str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    refused(res, 2, "--changed-since", "apply to --format github")


def test_invoke_passes_it_through(tmp_path: Path) -> None:
    invoke = shutil.which("invoke", path=str(Path(sys.executable).parent)) or "invoke"
    res = subprocess.run([invoke, "matrix", "--format", "github", "--changed-since",
                          str(tmp_path / "nope")], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    refused(res, 2, "no such folder")
    (tmp_path / "none").mkdir()  # nothing published: every entry of the filter
    res = subprocess.run([invoke, "matrix", "--format", "github", "--package", "fbgemm_gpu",
                          "--changed-since", str(tmp_path / "none")], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    m = load_matrix()
    assert [e["id"] for e in json.loads(res.stdout)["include"]] == \
        [e.build.id for e in github_matrix(m, load_ci(m), "workflow_dispatch",
                                           builds=m.select(packages=["fbgemm_gpu"]))]


# ----------------------------------------------------------------------------- an index
def serve(folder: Path) -> tuple[str, object]:
    import threading
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}", server


def test_an_index_with_manifests_beside_its_wheels(tmp_path: Path) -> None:
    """A PEP 503 root whose project page links wheels; ``<wheel>.manifest.json`` beside each
    (the README's convention). Published: the first three fbgemm_gpu entries; the fourth's
    wheel has no manifest (left out); the others are not on the index."""
    from tests.fixtures.manifests import for_entry

    m = load_matrix()
    fbgemm = github_matrix(m, load_ci(m), "workflow_dispatch",
                           builds=m.select(packages=["fbgemm_gpu"]))
    root = tmp_path / "index"
    page = root / "simple" / "fbgemm-gpu-rocm"  # the project of the wheels' distribution
    page.mkdir(parents=True)
    (root / "simple" / "index.html").write_text(
        '<a href="other/">other</a><a href="fbgemm-gpu-rocm/">fbgemm-gpu-rocm</a>')
    links = []
    for i, e in enumerate(fbgemm[:4]):
        wheel = f"fbgemm_gpu-{i}-py3-none-any.whl"
        data = for_entry(m, e)
        (page / wheel).write_bytes(b"")
        if i < 3:
            (page / f"{wheel}.manifest.json").write_text(json.dumps(data))
        links.append(f'<a href="{wheel}#sha256={data["wheel_sha256"]}">{wheel}</a>')
    (page / "index.html").write_text("\n".join(links))
    url, server = serve(root)
    try:
        res = toolkit("--package", "fbgemm_gpu", "--changed-since", f"{url}/simple/")
        assert res.returncode == 0, res.stderr
        ids = [e["id"] for e in json.loads(res.stdout)["include"]]
        assert ids == [e.build.id for e in fbgemm[3:]], res.stderr
        assert "3 manifests read" in res.stderr and "no manifest" in res.stderr
        # a manifest beside another wheel than its own (the link's #sha256=): refused
        (page / "index.html").write_text("\n".join(
            [links[0].split("#")[0] + "#sha256=" + "f" * 64 + '">x</a>', *links[1:]]))
        refused(toolkit("--package", "fbgemm_gpu", "--changed-since", f"{url}/simple/"), 2,
                "wheel_sha256 is not the sha256 of the wheel beside it")
    finally:
        server.shutdown()  # type: ignore[attr-defined]


def test_a_folder_gone_while_the_manifests_are_read_is_refused_naming_the_source(
        tmp_path: Path, last_night: Path) -> None:
    """The folders are listed as they are read: one removed meanwhile (a CI job pruning old
    runs) cannot be listed, and that is one refusal naming the source and the system's
    reason (os.strerror(ENOENT)), never a run that quietly judged fewer builds."""
    source = tmp_path / "published"
    shutil.copytree(last_night, source / "z")
    first = sorted(last_night.rglob("manifest.json"))[0]
    shutil.copy2(first, source / "manifest.json")  # read first, in the top folder
    found = _folder_manifests(source)
    where, _data = next(found)
    assert where == str(source / "manifest.json")
    shutil.rmtree(source / "z")
    with pytest.raises(UsageError) as err:
        next(found)
    assert str(source) in err.value.message and "cannot be read" in err.value.message
    assert os.strerror(errno.ENOENT) in err.value.message
