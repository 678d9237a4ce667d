"""What ``repro`` takes from a manifest besides its plan: where the sources are (``--source``,
the bundled sample, the recorded checkout), the index URLs with credentials from the
environment (``TOOLKIT_ROCM_INDEX_URL``, README: never recorded, masked as ``***@``), and the
full words of each variant's verdict (sha256 computed here with hashlib)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from toolkit.core.reporter import ListReporter
from toolkit.plan.recipes.sample import EXAMPLE
from toolkit.verify import repro
from toolkit.verify.variant_repro import variant_verdict


def test_the_sources_are_the_given_folder_the_bundled_sample_or_the_recorded_checkout(
        tmp_path: Path) -> None:
    checkout = tmp_path / "src"
    checkout.mkdir()
    recorded = {"recipe": "apex", "options": {"source": str(checkout)}}
    assert repro._source(recorded, str(checkout / ".." / "src")) == str(checkout.resolve())
    assert repro._source({"recipe": "sample", "options": {"source": "/gone"}}, None) == str(EXAMPLE)
    assert repro._source(recorded, None) == str(checkout)
    for nothing in ({"recipe": "apex"}, {"recipe": "apex", "options": None},
                    {"recipe": "apex", "options": {"source": ""}}, {"recipe": "nope"}):
        assert repro._source(nothing, None) is None


def test_index_urls_get_their_credentials_back_from_the_environment() -> None:
    data = {"options": {"index_url": "https://***@idx.example/simple/",
                        "find_links": ["https://***@links.example/", "https://open.example/"]}}
    secret = {"TOOLKIT_ROCM_INDEX_URL": "https://me:pw@idx.example/simple/"}
    options = repro._options(data, secret)
    assert options.index_url == "https://me:pw@idx.example/simple/"
    # another host's credentials are not the variable's: uv/pip find them in ~/.netrc
    assert options.find_links == ("https://links.example/", "https://open.example/")
    bare = repro._options(data, {})
    assert bare.index_url == "https://idx.example/simple/"
    assert repro._options({"options": None}, secret).index_url is None


def test_each_variant_is_identical_or_differs_in_full_words(tmp_path: Path) -> None:
    wheel = tmp_path / "p-1-py3-none-any-gfx90a.whl"
    wheel.write_bytes(b"variant")
    digest = hashlib.sha256(b"variant").hexdigest()
    values = {"VARIANT_WHEEL_gfx90a": str(wheel)}
    said = ListReporter()
    assert variant_verdict({"variants": {"gfx90a": {"sha256": digest}}}, values, True, said) == 0
    assert said.lines == [f"variant gfx90a: identical: {digest}"]
    said = ListReporter()
    assert variant_verdict({"variants": {"gfx90a": {"sha256": digest}}}, values, False, said) == 1
    assert said.lines == [f"variant gfx90a: differs: {digest} rebuilt ({wheel.name}), "
                          f"{digest} recorded"]
    said = ListReporter()
    assert variant_verdict({"variants": {"gfx90a": "not an object"}}, values, True, said) == 1
    assert said.lines == [f"variant gfx90a: differs: {digest} rebuilt ({wheel.name}), None recorded"]
    assert variant_verdict({"variants": None}, values, True, said) == 0
