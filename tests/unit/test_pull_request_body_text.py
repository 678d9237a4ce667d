"""The pull request body ``toolkit upstream --pr-body FILE`` writes, rendered from facts built
here, compared with the markdown written out by hand: its marker, headings, counts, the fenced
blocks (three backticks, or one more than the longest run a line holds), the files written,
the maintainer's instruction, the notes folded away; a fact line is cut only past 4000
characters (the reader sees all of an evidence line) and its credentials are masked."""

from __future__ import annotations

from toolkit.cli import pr_body
from toolkit.verify.upstream.model import Fact

DRIFT = Fact("drift", "ROCm 6.1 torch 2.6", "none", "2.6.0", "pytorch/test-infra@abc1234 f.py")
REVIEW = Fact("review", "apex 1.2.0", "1.2.0", "1.2.1", "ROCm/apex@def5678 setup.py",
              review="ROCm/apex@def5678..9abcdef0")
NOTE = Fact("note", "fbgemm_gpu 1.0.1", "v1.0.0", "v1.0.0", "pytorch/FBGEMM@0123456 README")


def test_a_body_with_every_part() -> None:
    body = pr_body.render([DRIFT, REVIEW, NOTE], {id(DRIFT)}, ["rocm.toml", "apex.toml"],
                          "https://user:s3cret@mirror.example/up")
    assert body == (
        "<!-- toolkit upstream --pr-body -->\n"
        "## Upstream changed\n"
        "\n"
        "`toolkit upstream --write` against https://***@mirror.example/up: "
        "1 fact(s) written, 1 left for a maintainer.\n"
        "\n"
        "### Written by `--write` (this pull request's change)\n"
        "\n"
        "```text\n"
        "drift: ROCm 6.1 torch 2.6: data none; upstream 2.6.0 [pytorch/test-infra@abc1234 f.py]\n"
        "```\n"
        "\n"
        "Files: `toolkit/data/rocm.toml`, `toolkit/data/apex.toml`\n"
        "\n"
        "### Needs a maintainer (`review:` and unsettled `drift:`)\n"
        "\n"
        "```text\n"
        "review: apex 1.2.0: data 1.2.0; upstream 1.2.1 [ROCm/apex@def5678 setup.py]; "
        "needs a recipe review: ROCm/apex@def5678..9abcdef0\n"
        "```\n"
        "\n"
        "Settle each one in the data (a recipe review, a known failure, or a `review:` entry), "
        "then `invoke upstream` exits 0.\n"
        "\n"
        "<details><summary>1 note(s), never a failure</summary>\n"
        "\n"
        "```text\n"
        "note: fbgemm_gpu 1.0.1: data v1.0.0; upstream v1.0.0 [pytorch/FBGEMM@0123456 README]\n"
        "```\n"
        "\n"
        "</details>\n")


def test_nothing_to_say_is_none_in_both_sections() -> None:
    body = pr_body.render([], set(), [], "/work/.mirror")
    assert body == (
        "<!-- toolkit upstream --pr-body -->\n## Upstream changed\n\n"
        "`toolkit upstream --write` against /work/.mirror: 0 fact(s) written, 0 left for a "
        "maintainer.\n\n### Written by `--write` (this pull request's change)\n\nNone.\n\n"
        "### Needs a maintainer (`review:` and unsettled `drift:`)\n\nNone.\n")


def test_an_unsettled_drift_is_left_and_the_fence_outgrows_the_backticks() -> None:
    odd = Fact("drift", "apex ```` 1.0", "a", "b", "ROCm/apex@1 x")
    body = pr_body.render([odd], set(), [], "here")
    assert "0 fact(s) written, 1 left for a maintainer." in body
    lines = body.splitlines()
    at = lines.index("`````text")  # the longest run is 4 backticks: a fence of 5
    assert lines[at + 1] == odd.line() and lines[at + 2] == "`````"
    assert "Settle each one in the data" in body and "<details>" not in body


def test_a_fact_line_is_kept_whole_up_to_4000_characters() -> None:
    assert pr_body.safe_line("x" * 4000) == "x" * 4000
    cut = pr_body.safe_line("y" * 4001)
    assert cut.startswith("y" * 4000 + "…") and "y" * 4001 not in cut
    assert pr_body.safe_line("a\x1b[2Jb https://u:pw@h.example/p") == "a\\x1b[2Jb https://***@h.example/p"
