"""Each check ``--changed-since`` makes of a published manifest, one alteration at a time,
and the one line each gives (README "Exit codes": 2, a malformed or tampered manifest);
and the hints of an index that cannot be read (exit 8), against a real HTTP server on
127.0.0.1. The manifests are CI's, as ``tests/fixtures/manifests.py`` writes them."""

from __future__ import annotations

import copy
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
from toolkit.run.identity import identity_digest
from toolkit.verify import published

WHERE = "ci/manifest.json"
ALTERED = "(altered?); valid: a manifest as its build wrote it"


@pytest.fixture(scope="module")
def ok() -> dict[str, Any]:
    m = load_matrix()
    entries = github_matrix(m, load_ci(m), "workflow_dispatch", builds=m.select(packages=["apex"]))
    return for_entry(m, entries[0])


def _refused(data: dict[str, Any]) -> str:
    with pytest.raises(UsageError) as err:
        published.manifest_digest(data, WHERE)
    assert err.value.exit_code == 2
    return err.value.message


def test_a_manifest_as_written_gives_its_digest_and_an_unfinished_one_none(ok: dict[str, Any]) -> None:
    assert published.manifest_digest(ok, WHERE) == ok["identity"]["digest"]
    assert published.manifest_digest({**ok, "outcome": "failed"}, WHERE) is None
    old = copy.deepcopy(ok)
    del old["identity"]["digest"]
    assert published.manifest_digest(old, WHERE) is None


def _reordered(value: Any) -> Any:
    """``value`` with every JSON object's keys in reverse order: the same JSON value."""
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


def test_a_manifest_rewritten_with_its_keys_in_another_order_keeps_its_digest(
        ok: dict[str, Any]) -> None:
    """A JSON object's members are unordered (RFC 8259 section 4): a manifest another tool
    rewrote (jq, a JSON library) with every object's keys reversed is the same manifest, and
    gives the digest its build recorded."""
    data = json.loads(json.dumps(_reordered(ok)))
    assert list(data["identity"]["build"]) == list(reversed(ok["identity"]["build"]))
    assert data == ok
    assert published.manifest_digest(data, WHERE) == ok["identity"]["digest"]


def test_a_digest_that_is_not_64_lowercase_hex_digits_is_named(ok: dict[str, Any]) -> None:
    data = copy.deepcopy(ok)
    data["identity"]["digest"] = ok["identity"]["digest"].upper()
    assert _refused(data) == (f"{WHERE}: manifest field identity.digest: expected 64 "
                              "hexadecimal digits (sha256)")


def test_an_identity_edited_after_its_digest_is_named(ok: dict[str, Any]) -> None:
    data = copy.deepcopy(ok)
    data["identity"]["digest"] = "0" * 64
    assert _refused(data) == (f"{WHERE}: identity.digest is not the digest of the identity the "
                              f"manifest records {ALTERED}")


def test_a_plan_edited_after_its_digest_is_named(ok: dict[str, Any]) -> None:
    data = copy.deepcopy(ok)
    data["plan"]["steps"] = data["plan"]["steps"][:-1]
    assert _refused(data) == (f"{WHERE}: identity.plan_sha256 is not the digest of the plan the "
                              f"manifest records {ALTERED}")


def test_host_paths_that_are_not_strings_are_named(ok: dict[str, Any]) -> None:
    for paths in ({"workdir": 3}, None):
        data = copy.deepcopy(ok)
        data["host"]["paths"] = paths
        message = _refused(data)
        assert message.startswith(WHERE) and "host.paths" in message
    # none recorded (the schema lets host leave it out, the identity needs it): the manifest,
    # the field, then the kind it must be (names to strings)
    data = copy.deepcopy(ok)
    del data["host"]["paths"]
    assert _refused(data) == f"{WHERE}: manifest field host.paths: expected an object of strings"


def test_an_identity_of_another_build_is_named(ok: dict[str, Any]) -> None:
    data = copy.deepcopy(ok)
    data["identity"]["build"] = {**data["identity"]["build"], "id": "other-1"}
    data["identity"]["digest"] = identity_digest(data["identity"])
    assert _refused(data) == (f"{WHERE}: identity.build is not the manifest's build "
                              f"{ok['build']['id']} (altered?)")


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


def test_an_index_that_cannot_be_read_says_what_to_check(index: tuple[str, Path]) -> None:
    url, _ = index
    with pytest.raises(SourceUnreachable) as err:
        published.read_published(f"{url}/nope/")
    assert err.value.message == f"--changed-since index: {url}/nope/ answered HTTP 404"
    assert err.value.hint == "check the URL and its credentials"
    with pytest.raises(SourceUnreachable) as err:
        published.read_published("http://127.0.0.1:9/simple/", timeout=5)
    assert err.value.message.startswith("cannot reach the --changed-since index "
                                        "http://127.0.0.1:9/simple/: ")
    assert "Connection refused" in err.value.message
    assert err.value.hint == "check the URL and the network"


def test_a_wheel_without_its_manifest_is_left_out_and_a_wrong_one_refused(
        index: tuple[str, Path], ok: dict[str, Any]) -> None:
    url, root = index
    (root / "a-1-py3-none-any.whl.manifest.json").write_text(json.dumps(ok))
    (root / "index.html").write_text(
        f'<a href="a-1-py3-none-any.whl#sha256={"f" * 64}">a</a>')
    with pytest.raises(UsageError) as err:
        published.read_published(f"{url}/")
    assert err.value.message == (f"{url}/a-1-py3-none-any.whl.manifest.json: wheel_sha256 is not "
                                 "the sha256 of the wheel beside it (its link's #sha256=); valid: "
                                 "the manifest of that wheel's build")
    (root / "index.html").write_text(
        f'<a href="a-1-py3-none-any.whl#sha256={ok["wheel_sha256"]}">a</a>'
        '<a href="b-1-py3-none-any.whl">b</a>')
    found = published.read_published(f"{url}/")
    assert (found.digests, found.read) == (frozenset({ok["identity"]["digest"]}), 1)
    assert found.left_out == (f"{url}/b-1-py3-none-any.whl: no manifest",)
