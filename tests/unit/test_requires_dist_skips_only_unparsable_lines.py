"""The wheel's Requires-Dist names: an unparsable line is left out, and every valid line after
it is still read (PEP 508 requirements; names in PEP 503 normal form, by hand)."""

from __future__ import annotations

from toolkit.inspect.rules.metadata import _requires


def test_lines_after_an_unparsable_one_are_still_read() -> None:
    lines = ["numpy>=1.20", "this is not ( a requirement", "Torch_Vision ; python_version>'3'",
             "PyYAML"]
    assert _requires(lines) == ["numpy", "pyyaml", "torch-vision"]


def test_an_unparsable_first_line_hides_nothing() -> None:
    assert _requires(["!!!", "ninja"]) == ["ninja"]
