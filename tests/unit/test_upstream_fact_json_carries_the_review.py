"""`invoke upstream --json`: each fact carries what its text line shows, each under its field's
name, including the recipe review a new version needs (README: "a new version's build flags
are a `review:` line with the commit range to read")."""

from __future__ import annotations

import dataclasses

from toolkit.verify.upstream.model import Fact


def test_the_json_of_a_fact_holds_its_review_and_every_shown_field() -> None:
    fact = Fact("drift", "apex 1.9.0 build flags", "none", "1.9.0", "ROCm/apex@abc1234 setup.py",
                review="ROCm/apex@abc1234..def5678 setup.py")
    got = fact.as_json()
    assert got["review"] == "ROCm/apex@abc1234..def5678 setup.py"
    assert "needs a recipe review: ROCm/apex@abc1234..def5678 setup.py" in fact.line()
    shown = {f.name for f in dataclasses.fields(Fact)} - {"edits"}
    assert set(got) == shown
    assert all(got[name] == getattr(fact, name) for name in shown)
