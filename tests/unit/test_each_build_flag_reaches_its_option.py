"""Each on/off flag of a build (``--no-smoke``, ``--allow-insecure-index``, ...) reaches the
one option it names, and only that one: parsed by the front ends' real parser
(``add_build_options``), read by ``given_options``. The table below is written by hand from
the flags' help texts (README "## Options": "--no-smoke skips the smoke step")."""

from __future__ import annotations

import argparse

import pytest

from toolkit.cli.commands.plan import add_build_options
from toolkit.plan.request import given_options

# flag -> (the attribute of Options it sets, the value it sets; absent: the other one)
FLAGS = {
    "--no-smoke": ("smoke", False),
    "--no-lock": ("no_lock", True),
    "--allow-insecure-index": ("allow_insecure_index", True),
    "--allow-rocm-mismatch": ("allow_rocm_mismatch", True),
    "--rocm-sdk-test": ("rocm_sdk_test", True),
    "--rebuild": ("rebuild", True),
    "--allow-dirty": ("allow_dirty", True),
    "--variants": ("variants", True),
}


def _options(*argv: str) -> object:
    p = argparse.ArgumentParser()
    add_build_options(p)
    return given_options(p.parse_args(list(argv)), {})


def test_no_flag_gives_every_default() -> None:
    opts = _options()
    for attr, value in FLAGS.values():
        assert getattr(opts, attr) is (not value), attr


@pytest.mark.parametrize("flag", sorted(FLAGS))
def test_a_flag_sets_its_option_and_no_other(flag: str) -> None:
    opts = _options(flag)
    for other, (attr, value) in FLAGS.items():
        want = value if other == flag else (not value)
        assert getattr(opts, attr) is want, (flag, attr)


def test_every_flag_at_once() -> None:
    opts = _options(*FLAGS)
    assert all(getattr(opts, attr) is value for attr, value in FLAGS.values())
