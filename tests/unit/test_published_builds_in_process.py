"""`--changed-since SOURCE` read in process (the CLI tests run it in a child): a folder of
manifests, a file:// URL and a real HTTP index on 127.0.0.1 (PEP 503: project pages found
by normalised name; the README's convention: ``<wheel>.manifest.json`` beside each wheel,
its link's ``#sha256=`` the wheel's digest). Exit codes per README: 2 bad input, 8 an index
that cannot be reached."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.manifests import for_entry
from toolkit.core.errors import SourceUnreachable, UsageError
from toolkit.data.ci import github_matrix, load_ci
from toolkit.plan.recipes import load_matrix
from toolkit.verify import published


@pytest.fixture(scope="module")
def two() -> list[dict[str, Any]]:
    """Two fbgemm_gpu builds' manifests as CI writes them."""
    m = load_matrix()
    entries = github_matrix(m, load_ci(m), "workflow_dispatch", builds=m.select(packages=["fbgemm_gpu"]))
    return [for_entry(m, e) for e in entries[:2]]


@pytest.mark.parametrize(("name", "normal"), [
    ("FBGEMM_gpu.Rocm", "fbgemm-gpu-rocm"), ("a--b__c..d", "a-b-c-d"), ("apex", "apex"),
])
def test_project_names_in_pep_503_normal_form(name: str, normal: str) -> None:
    assert published._normal(name) == normal


def test_a_links_file_name_is_unquoted_and_manifests_named_by_convention() -> None:
    assert published._file_name("https://h/simple/p/a%2Bb-1-py3-none-any.whl#sha256=00") == \
        "a+b-1-py3-none-any.whl"
    assert published._is_manifest("manifest.json")
    assert published._is_manifest("x-1-py3-none-any.whl.manifest.json")
    assert not published._is_manifest("manifest.json.bak") and not published._is_manifest("x.json")


def test_a_manifest_must_be_the_one_of_the_wheel_beside_it(two: list[dict[str, Any]]) -> None:
    data = two[0]
    digest = data["wheel_sha256"]
    published._same_wheel(data, f"sha256={digest}", "w")
    published._same_wheel(data, f"sha256={digest.upper()}", "w")  # hex digits in either case
    published._same_wheel(data, "", "w")
    published._same_wheel(data, "md5=" + "0" * 32, "w")
    published._same_wheel({**data, "outcome": "failed"}, "sha256=" + "f" * 64, "w")
    with pytest.raises(UsageError) as err:
        published._same_wheel(data, "sha256=" + "f" * 64, "https://h/w.whl.manifest.json")
    assert "https://h/w.whl.manifest.json" in err.value.message and "#sha256=" in err.value.message


def test_a_manifest_that_is_not_json_names_where_it_was(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        published._parse(b"{torn", "https://h/x.manifest.json")
    assert err.value.message.startswith("https://h/x.manifest.json: not a readable manifest")
    assert published._parse(b'{"a": 1}', "w") == {"a": 1}


def test_a_folder_counts_finished_builds_and_says_why_others_are_left_out(
        tmp_path: Path, two: list[dict[str, Any]]) -> None:
    ok, other = two
    (tmp_path / "a" / "deep").mkdir(parents=True)
    (tmp_path / "a" / "deep" / "manifest.json").write_text(json.dumps(ok))
    (tmp_path / "b-1.whl.manifest.json").write_text(json.dumps({**other, "outcome": "failed"}))
    (tmp_path / "unrelated.json").write_text("{torn")
    found = published.read_published(str(tmp_path))
    assert found.digests == frozenset({ok["identity"]["digest"]})
    assert found.read == 2
    (left,) = found.left_out
    assert left.endswith("b-1.whl.manifest.json: build failed")
    again = published.read_published(tmp_path.as_uri())  # file:// is the folder
    assert again.digests == found.digests and again.read == 2


def test_an_ok_manifest_without_a_digest_is_left_out_saying_so(tmp_path: Path,
                                                                two: list[dict[str, Any]]) -> None:
    data = json.loads(json.dumps(two[0]))
    del data["identity"]["digest"]
    (tmp_path / "manifest.json").write_text(json.dumps(data))
    found = published.read_published(str(tmp_path))
    assert found.digests == frozenset() and found.read == 1
    assert found.left_out[0].endswith("manifest.json: records no identity digest")


@pytest.fixture
def index(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", tmp_path
    finally:
        server.shutdown()
        server.server_close()


def test_a_pep_503_index_is_read_for_the_wanted_projects_only(index: tuple[str, Path],
                                                             two: list[dict[str, Any]]) -> None:
    url, root = index
    page = root / "simple" / "fbgemm-gpu-rocm"
    page.mkdir(parents=True)
    (root / "simple" / "other").mkdir()
    (root / "simple" / "other" / "index.html").write_text('<a href="o-1-py3-none-any.whl">o</a>')
    (root / "simple" / "index.html").write_text('<a href="other/">other</a><a>no href</a>'
                                                '<a href="fbgemm-gpu-rocm/">fbgemm-gpu-rocm</a>')
    links = []
    for i, data in enumerate(two):
        wheel = f"f-{i}-py3-none-any.whl"
        (page / f"{wheel}.manifest.json").write_text(json.dumps(data))
        links.append(f'<a href="{wheel}#sha256={data["wheel_sha256"]}">{wheel}</a>')
    links.append('<a href="f-9-py3-none-any.whl">no manifest beside it</a>')
    (page / "index.html").write_text("\n".join(links))
    found = published.read_published(f"{url}/simple/", projects=["FBGEMM_GPU.rocm"])
    assert found.digests == frozenset(d["identity"]["digest"] for d in two)
    assert found.read == 2
    assert found.left_out == (f"{url}/simple/fbgemm-gpu-rocm/f-9-py3-none-any.whl: no manifest",)
    nothing = published.read_published(f"{url}/simple/", projects=["apex"])
    assert (nothing.read, nothing.digests, nothing.left_out) == (0, frozenset(), ())
    # a find-links page: its wheels directly
    flat = published.read_published(f"{url}/simple/fbgemm-gpu-rocm/")
    assert flat.read == 2


def test_an_index_that_answers_an_error_is_unreachable_exit_8(index: tuple[str, Path]) -> None:
    url, _ = index
    with pytest.raises(SourceUnreachable) as err:
        published.read_published(f"{url}/nope/")
    assert err.value.exit_code == 8
    assert "answered HTTP 404" in err.value.message and f"{url}/nope/" in err.value.message
    with pytest.raises(SourceUnreachable) as err:
        published.read_published("http://127.0.0.1:9/simple/", timeout=5)
    assert "cannot reach the --changed-since index" in err.value.message


def test_plain_http_elsewhere_than_loopback_is_refused() -> None:
    with pytest.raises(UsageError) as err:
        published.read_published("http://example.invalid/simple/")
    assert err.value.exit_code == 2
    assert "http://example.invalid/simple/" in err.value.message and "https://" in err.value.message


@pytest.mark.parametrize(("fmt", "empty"), [("github", {"include": []}), ("github-shards", [])])
def test_nothing_changed_is_an_empty_matrix_in_the_formats_own_shape(
        fmt: str, empty: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """README: ``--format github`` is one matrix (nothing changed: ``{"include": []}``);
    ``github-shards`` is "the same entries as a list of matrices", so with nothing changed
    it is the empty list (no shard), not a matrix: the workflow loops over the shards."""
    from tests.fixtures.manifests import write_folder
    from toolkit.cli.main import main

    m = load_matrix()
    builds = m.select(packages=["fbgemm_gpu"])
    entries = github_matrix(m, load_ci(m), "workflow_dispatch", builds=builds)
    folder = write_folder(tmp_path / "published", m, entries)  # every one built already
    capsys.readouterr()
    assert main(["matrix", "--format", fmt, "--package", "fbgemm_gpu",
                 "--changed-since", str(folder)]) == 0
    assert json.loads(capsys.readouterr().out) == empty
