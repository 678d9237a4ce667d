"""The ``smoke`` facts the runner adds to the manifest for each recipe, hand-written from the
recipes' documented expectations: fbgemm_gpu records the torch of each release in
``_fbgemm_torch_compat_table`` under its ``X.Y`` key; apex's prebuilt JIT ops (``apex.<op>``
modules) run the ``apex_jit`` tests and record their torch in ``git_version_info.torch_info``
(``0.0``: none)."""

from __future__ import annotations

from toolkit.verify.smoke import smoke_facts


def test_fbgemm_gpu_reads_the_torch_of_its_release_line_from_its_table() -> None:
    facts = smoke_facts({"recipe": "fbgemm_gpu",
                         "build": {"package": "fbgemm_gpu", "version": "1.2.0", "rocm": "6.4",
                                   "torch": "2.7.1"}})
    assert facts == {"needs_torch": True, "carries_gpu_code": True, "rocm": "6.4", "hip": "6.4",
                     "torch": "2.7.1", "markers": [],
                     "recorded_torch": [{"module": "fbgemm_gpu",
                                         "attribute": "_fbgemm_torch_compat_table",
                                         "key": "1.2"}]}
    unversioned = smoke_facts({"recipe": "fbgemm_gpu",
                               "build": {"package": "fbgemm_gpu", "rocm": "6.4"}})
    assert unversioned["recorded_torch"][0]["key"] == ""
    assert unversioned["torch"] is None


def test_apex_runs_its_jit_tests_only_with_prebuilt_ops() -> None:
    ops = smoke_facts({"recipe": "apex", "expected_modules": ["apex", "apex.fused_dense"],
                       "build": {"package": "apex", "version": "1.8.0", "rocm": "7.0",
                                 "torch": "2.8.0"}})
    assert ops["markers"] == ["apex_jit"]
    assert ops["recorded_torch"] == [{"module": "apex.git_version_info", "attribute": "torch_info",
                                      "key": "version", "ignore": ["0.0"]}]
    plain = smoke_facts({"recipe": "apex", "expected_modules": ["apex"],
                         "build": {"package": "apex", "version": "1.8.0", "rocm": "7.0"}})
    assert (plain["markers"], plain["recorded_torch"]) == ([], [])
    # no recipe recorded: the package's
    assert smoke_facts({"build": {"package": "apex", "version": "1.8.0", "rocm": "7.0"},
                        "expected_modules": ["apex.x"]})["markers"] == ["apex_jit"]
