"""How ``variant_order`` reads the child Python that asks variantlib for the order: each
variants document goes to the child on stdin, the GPU in ``ROCM_BOOTSTRAP_FORCE_GFX_ARCH``
(rocm-bootstrap's documented override), the labels come back as the JSON list on its last
line, and only a child that exited 0 is believed. The child here is a real process (a
shell script standing in for the interpreter) whose answers are written by hand."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from toolkit.core.errors import EnvironmentProblem, UsageError
from toolkit.verify import variant_pick


def _child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    script = tmp_path / "child.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(sys, "executable", str(script))  # the module's own sys


def test_the_labels_are_the_json_list_on_the_childs_last_line_in_first_seen_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the child answers with the document it was given on stdin, as a JSON list
    _child(tmp_path, monkeypatch, 'read doc\necho "progress"\necho "[$doc]"\n')
    docs = {"a": '"x", "y"', "b": '"y", 7, "z", null'}
    assert variant_pick.variant_order(docs, None) == ("x", "y", "z")


def test_the_gpu_is_given_in_the_force_variable_and_left_unset_for_the_detected_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(variant_pick.FORCE_ENV, raising=False)
    _child(tmp_path, monkeypatch, f'echo "[\\"${{{variant_pick.FORCE_ENV}:-unset}}\\"]"\n')
    assert variant_pick.FORCE_ENV == "ROCM_BOOTSTRAP_FORCE_GFX_ARCH"
    assert variant_pick.variant_order({"a": "{}"}, "gfx942") == ("gfx942",)
    assert variant_pick.variant_order({"a": "{}"}, None) == ("unset",)
    assert variant_pick.FORCE_ENV not in os.environ  # the child's environment only


def test_a_child_that_failed_is_not_believed_even_when_it_printed_a_list(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _child(tmp_path, monkeypatch, 'echo \'["x"]\'\necho "plugin crashed" >&2\nexit 1\n')
    with pytest.raises(EnvironmentProblem) as err:
        variant_pick.variant_order({"a": "{}"}, None)
    assert err.value.message == "variantlib could not order the variants (plugin crashed)"
    assert err.value.hint == "install variantlib and rocm-bootstrap"
    assert err.value.exit_code == 4


@pytest.mark.parametrize("stdout", ["", "not json", '{"a": 1}'])
def test_no_list_from_a_child_that_exited_0_is_an_environment_problem(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stdout: str) -> None:
    _child(tmp_path, monkeypatch, f"echo '{stdout}'\n")
    with pytest.raises(EnvironmentProblem) as err:
        variant_pick.variant_order({"a": "{}"}, "gfx90a")
    assert err.value.message.startswith("variantlib could not order the variants (")


def test_an_unknown_gpu_named_by_rocm_bootstrap_is_bad_input_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _child(tmp_path, monkeypatch, 'echo "ValueError: Unknown GFX target: gfx5" >&2\nexit 1\n')
    with pytest.raises(UsageError) as err:
        variant_pick.variant_order({"a": "{}"}, "gfx5")
    assert err.value.message == ("--gfx gfx5: rocm-bootstrap knows no such GPU "
                                 "(ValueError: Unknown GFX target: gfx5)")
    assert err.value.exit_code == 2
    # the detected GPU is nothing the user named: the environment's problem
    with pytest.raises(EnvironmentProblem):
        variant_pick.variant_order({"a": "{}"}, None)
