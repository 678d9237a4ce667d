"""The words of an upstream fact (README: `toolkit upstream` exits 1 when a drift is left for a
maintainer; a note never fails) and the version arithmetic the rules use, by hand."""

from __future__ import annotations

import pytest

from toolkit.verify.upstream.model import KINDS, Fact, minor, review_range, source_review, versions_key


@pytest.mark.parametrize(("kind", "fails"), [("drift", True), ("review", True), ("note", False)])
def test_only_a_note_never_fails(kind: str, fails: bool) -> None:
    assert kind in KINDS
    assert Fact(kind, "w", "d", "u", "e").fails is fails


def test_a_facts_line_and_json() -> None:
    fact = Fact("drift", "apex 1.9.0 torch pair", "2.6", "2.7", "ROCm/apex@abc1234 setup.py")
    assert fact.line() == "drift: apex 1.9.0 torch pair: data 2.6; upstream 2.7 [ROCm/apex@abc1234 setup.py]"
    assert fact.as_json() == {"kind": "drift", "what": "apex 1.9.0 torch pair", "data": "2.6",
                              "upstream": "2.7", "evidence": "ROCm/apex@abc1234 setup.py", "review": ""}


@pytest.mark.parametrize(("version", "key"), [("6.2", (6, 2)), ("6.10.1", (6, 10, 1)), ("7", (7,))])
def test_versions_order_by_number_not_by_text(version: str, key: tuple[int, ...]) -> None:
    assert versions_key(version) == key
    assert versions_key("6.10") > versions_key("6.9")


@pytest.mark.parametrize(("version", "release"), [("6.4.1", "6.4"), ("7.0", "7.0"), ("7", "7")])
def test_minor_is_major_dot_minor(version: str, release: str) -> None:
    assert minor(version) == release


def test_a_source_review_is_a_note_while_the_version_waits() -> None:
    due = source_review("apex 1.9.0 sources", "abc1234", "def5678", "ROCm/apex@def5678",
                        False, "ROCm/apex@abc1234..def5678 setup.py")
    assert (due.kind, due.data, due.upstream) == ("review", "@abc1234", "@def5678")
    assert due.review == "ROCm/apex@abc1234..def5678 setup.py" and due.fails
    waiting = source_review("apex 1.9.0 sources", None, "def5678", "ROCm/apex@def5678",
                            True, "range")
    # no reviewed commit in the data: "none", as every fact says a value the data lacks
    assert (waiting.kind, waiting.data) == ("note", "none")
    assert waiting.upstream == "@def5678 (due before it builds: it waits)" and not waiting.fails
    assert "None" not in waiting.line()


def test_a_review_reads_the_range_since_the_reviewed_commit_or_the_whole_source() -> None:
    assert review_range("ROCm/apex", "abc1234", "def5678", "setup.py op_builder") == \
        "ROCm/apex@abc1234..def5678 setup.py op_builder"
    assert review_range("pytorch/FBGEMM", None, "def5678", "fbgemm_gpu/") == \
        "pytorch/FBGEMM@def5678 fbgemm_gpu/"
