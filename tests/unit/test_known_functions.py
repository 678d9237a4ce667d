"""``toolkit.data.known`` pinned whole (issue 19, part 8): what an entry selects (PEP 440
ranges, Pythons, targets, platform), its words (scope, line, explain), the loader's fields and
refusals, and the evidence grammar; the truths are PEP 440 (packaging's SpecifierSet) and
values worked out by hand from apex.toml, rocm.toml and gpus.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.core.errors import DataError, UsageError
from toolkit.data import known
from toolkit.data.known import KnownFailure, _in, for_build
from toolkit.data.matrix import load_matrix

M = load_matrix()
B = M.build("apex-1.7.0-cp312-rocm6.4")  # apex.toml: torch 2.7.0, ROCm 6.2.4/6.3/6.4


def entry(**kw: object) -> KnownFailure:
    fields: dict[str, object] = {"id": "e", "package": "apex", "fails": "build-wheel",
                                 "reason": "r", "evidence": "o/r#1"}
    fields.update(kw)
    return KnownFailure(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kw", "selects"), [
    ({}, True),
    ({"package": "fbgemm_gpu"}, False),
    ({"versions": ">=1.7"}, True), ({"versions": ">1.7"}, False), ({"versions": "==1.7.*"}, True),
    ({"versions": "<1.7.0"}, False),
    ({"rocm": "==6.4"}, True), ({"rocm": ">=6.4.1"}, False), ({"rocm": "~=6.3"}, True),
    ({"torch": "==2.7.0"}, True), ({"torch": "<2.7"}, False),
    ({"python": ("3.11", "3.12")}, True), ({"python": ("3.12t",)}, False),
    ({"platform": "windows"}, False),
])
def test_an_entry_selects_by_each_part_of_its_selector(kw: dict[str, object], selects: bool) -> None:
    assert entry(**kw).selects(B) is selects
    assert (for_build([entry(**kw)], B) == [entry(**kw)]) is selects


def test_a_version_that_is_not_pep_440_is_in_no_range_but_an_empty_range_holds_all() -> None:
    from toolkit.data.known import _in

    assert _in("", "not a version") is True
    assert _in(">=1", "not a version") is False
    assert _in(">=1", "1.0") is True


def test_targets_narrow_an_entry_to_builds_for_any_of_them() -> None:
    e = entry(families=("gfx90X-dcgpu",), targets=("gfx906", "gfx908", "gfx90a"))
    assert e.applies(B, ["gfx942", "gfx90a"]) and not e.applies(B, ["gfx942"])
    assert not e.applies(B, [])
    assert entry().applies(B, [])  # no targets: every target
    assert not entry(package="fbgemm_gpu").applies(B, ["gfx90a"])
    assert for_build([e], B) == [e]  # without targets: by the build alone
    assert for_build([e], B, ["gfx942"]) == []
    assert for_build([e], B, iter(["gfx90a"])) == [e]


def test_scope_line_and_explain_say_the_whole_entry() -> None:
    e = entry(id="x", versions=">=1.4,<1.7", rocm=">=7.10", torch="==2.9.*", python=("3.12", "3.13"),
              families=("gfx90X-dcgpu",), gfx=("gfx942",), targets=("gfx906", "gfx942"),
              fails="smoke", test="test_a.py::test_b", reason="it breaks", evidence="o/r#2",
              holds="a+")
    assert e.scope == ("apex >=1.4,<1.7, ROCm >=7.10, torch ==2.9.*, Python 3.12, 3.13, "
                       "targets gfx90X-dcgpu, gfx942")
    assert e.what == "smoke test test_a.py::test_b"
    assert e.line() == "known failure x: smoke test test_a.py::test_b fails: it breaks (evidence: o/r#2)"
    assert e.explain() == [
        ("selects", e.scope + " (linux)"), ("fails", e.what), ("reason", "it breaks"),
        ("evidence", "o/r#2"), ("holds", "a+"),
        ("re-try", "--include-known-failures (sessions, invoke plan; CI: workflow_dispatch, schedule)")]
    bare = entry()
    assert (bare.scope, bare.what) == ("apex", "step build-wheel")
    assert [f for f, _ in bare.explain()] == ["selects", "fails", "reason", "evidence", "re-try"]
    assert bare.as_json()["versions"] is None and bare.as_json()["holds"] is None


def test_the_retrying_triggers_alone_take_known_failures() -> None:
    for trigger in ("workflow_dispatch", "schedule"):
        known.check_trigger(trigger, True)
    known.check_trigger("push", False)
    with pytest.raises(UsageError) as err:
        known.check_trigger("pull_request", True)
    assert str(err.value) == ("--include-known-failures applies to the triggers workflow_dispatch, "
                              "schedule, not 'pull_request': CI selection stays positive on every "
                              "other trigger")


@pytest.mark.parametrize(("evidence", "ok"), [
    ("ROCm/apex#12", True), ("ROCm/apex@215398d0 setup.py", True),
    ("ROCm/apex#12; o/r@abcdef1 a b.py", True),
    ("ROCm/apex", False), ("ROCm/apex#", False), ("ROCm/apex@215398 setup.py", False),  # 6 hex
    ("ROCm/apex@215398d0", False), ("ROCm/apex@215398D0 f", False), ("apex#1", False),
    ("ROCm/apex#12;o/r#1", False), ("ROCm/apex#12 ", False),
])
def test_evidence_grammar(evidence: str, ok: bool) -> None:
    problem = known._evidence(evidence)
    if ok:
        assert problem is None
    else:
        bad = [p for p in evidence.split("; ") if not known._EVIDENCE.fullmatch(p)][0]
        assert problem == (f"has evidence {bad!r} that is not owner/repo#ISSUE or owner/repo@COMMIT "
                           "FILE (several: separated by '; ')")


def test_ranges_and_patterns_are_checked_as_pep_440_and_python_regexes() -> None:
    assert known._specifier(">=1.4,<1.7") is None and known._specifier("==7.0") is None
    assert known._specifier("1.4") == ("is not a version range like >=1.4,<1.7 or ==7.0 (PEP 440 "
                                       "specifiers)")
    assert known._pattern("a(b|c)+") is None
    assert (known._pattern("a(") or "").startswith("is not a regular expression (missing ), ")


ENTRY = """
[failures.demo]
package = "apex"
versions = "==1.7.0"
rocm = "==6.4"
torch = "<2.8"
python = ["3.12", "3.11"]
families = ["gfx90X-dcgpu"]
gfx = ["gfx942", "gfx90a"]
fails = "smoke"
test = "test_runtime.py::test_x"
reason = "a demo"
evidence = "ROCm/apex#1; ROCm/apex@215398d0 setup.py"
holds = "x"
"""


def test_the_loader_reads_every_field_and_expands_families_then_gfx_once(data_copy: Path) -> None:
    file = data_copy / "known_failures.toml"
    file.write_text(ENTRY)
    builds = M.builds
    (e,) = known.load(file, builds, list(M.packages), M.family_targets, M.known_targets)
    assert e == KnownFailure(
        id="demo", package="apex", fails="smoke", reason="a demo",
        evidence="ROCm/apex#1; ROCm/apex@215398d0 setup.py", versions="==1.7.0", rocm="==6.4",
        torch="<2.8", python=("3.12", "3.11"), families=("gfx90X-dcgpu",), gfx=("gfx942", "gfx90a"),
        targets=("gfx906", "gfx908", "gfx90a", "gfx942"), platform="linux",
        test="test_runtime.py::test_x", holds="x")
    assert known.load(data_copy / "none.toml", builds, [], {}, []) == ()  # no file: no entries
    file.write_text("")
    assert known.load(file, builds, list(M.packages), M.family_targets, M.known_targets) == ()
    file.write_text('[failures.b]\npackage = "apex"\nfails = "build-wheel"\nreason = "r"\n'
                    'evidence = "o/r#1"\n')
    (bare,) = known.load(file, builds, list(M.packages), M.family_targets, M.known_targets)
    assert bare == entry(id="b")


@pytest.mark.parametrize(("change", "message"), [
    (("holds = \"x\"\n", ""), 'failures."demo".holds: is missing: evidence owner/repo@COMMIT FILE needs '
     "`holds`, a regular expression of what FILE says (invoke upstream re-reads it)"),
    (('fails = "smoke"', 'fails = "build-wheel"'),
     'failures."demo".test: names a smoke test; valid only with fails = "smoke"'),
    (('fails = "smoke"', 'fails = "smoke"\nplatform = "windows"'),
     "failures.\"demo\".platform: 'windows' selects no build: the matrix builds linux wheels only "
     "(keep such an entry out of this file)"),
    (('torch = "<2.8"', 'torch = ">=2.8"'),
     'failures."demo": its selector (apex ==1.7.0, ROCm ==6.4, torch >=2.8, Python 3.12, 3.11, '
     "targets gfx90X-dcgpu, gfx942, gfx90a) matches no build of the matrix; `invoke matrix "
     "--format json` lists them"),
    (('gfx = ["gfx942", "gfx90a"]', 'gfx = ["gfx942", "gfx9999"]'),
     "failures.\"demo\".gfx: 'gfx9999' is not allowed; valid: "),
    # a pytest node id is FILE::NAME (pytest's docs); an entry id is a lower-case word
    (('test = "test_runtime.py::test_x"', 'test = "test_runtime.py test_x"'),
     "failures.\"demo\".test: 'test_runtime.py test_x' does not look like a smoke test id like "
     "test_runtime.py::"),
    (("[failures.demo]", "[failures.Demo]"),
     "failures.\"Demo\": 'Demo' does not look like an id like apex-hip-minor"),
])
def test_the_loader_refuses_each_inconsistent_entry(data_copy: Path, change: tuple[str, str],
                                                    message: str) -> None:
    file = data_copy / "known_failures.toml"
    assert change[0] in ENTRY
    file.write_text(ENTRY.replace(change[0], change[1], 1))
    with pytest.raises(DataError) as err:
        known.load(file, M.builds, list(M.packages), M.family_targets, M.known_targets)
    assert str(err.value).startswith(f"{file}: {message}"), str(err.value)


def test_upstream_refs_name_each_piece_of_evidence_in_order() -> None:
    e = entry(id="k", evidence="o/r@abcdef1 a/b c.py; x/y#7")
    assert known.upstream_refs([e, entry(id="j", evidence="p/q#3")]) == [
        ("k", "commit", "o/r", "abcdef1", "a/b c.py"), ("k", "issue", "x/y", "7", ""),
        ("j", "issue", "p/q", "3", "")]


SMOKE = entry(fails="smoke", test="test_runtime.py::test_x")
PLANNED = ["build-wheel", "check", "smoke"]


@pytest.mark.parametrize(("e", "planned", "step", "error", "outcome", "want"), [
    # a step-level entry: like pytest's strict xfail
    (entry(), PLANNED, None, None, None, known.XPASS),
    (entry(), ["check"], None, None, None, known.NOT_REACHED),
    (entry(), PLANNED, "check", "boom", None, known.FAILED),
    (entry(), PLANNED, "build-wheel", "boom", None, known.XFAIL),
    # a smoke test entry: its JUnit outcome first
    (SMOKE, PLANNED, None, None, "failed", known.XFAIL),
    (SMOKE, PLANNED, "smoke", "x", "error", known.XFAIL),
    (SMOKE, PLANNED, None, None, "passed", known.XPASS),
    (SMOKE, PLANNED, "smoke", "other failed", "passed", known.XPASS),
    (SMOKE, PLANNED, None, None, "skipped", known.NOT_REACHED),
    (SMOKE, PLANNED, "smoke", "smoke tests failed: test_runtime.py::test_x", "skipped", known.FAILED),
    (SMOKE, PLANNED, None, None, None, known.NOT_REACHED),
    # no JUnit: the smoke step's error names the test, or it failed elsewhere
    (SMOKE, PLANNED, "smoke", "smoke tests failed: test_runtime.py::test_x", None, known.XFAIL),
    (SMOKE, PLANNED, "smoke", "smoke tests failed: test_runtime.py::test_y", None, known.FAILED),
    (SMOKE, PLANNED, "check", "test_runtime.py::test_x", None, known.FAILED),
    # smoke not planned (--no-smoke): the test cannot be judged
    (SMOKE, ["build-wheel", "check"], None, None, None, known.NOT_REACHED),
    (SMOKE, ["build-wheel", "check"], "check", "boom", None, known.FAILED),
])
def test_verdict_truth_table(e: KnownFailure, planned: list[str], step: str | None, error: str | None,
                             outcome: str | None, want: str) -> None:
    assert known.verdict(e, planned, step, error, outcome) == want


def test_explain_names_the_platform_only_when_there_is_one() -> None:
    assert entry(platform="").explain()[0] == ("selects", "apex")
    assert entry(platform="windows").explain()[0] == ("selects", "apex (windows)")


def test_a_version_that_is_not_pep_440_is_in_no_range() -> None:
    assert _in(">=2.7", "2.7.1") and not _in(">=2.7", "2.6") and _in("", "anything")
    assert not _in(">=0", "not-a-version")


DEMO_FAILURE = """
[failures.apex-demo]
package = "apex"
versions = ">=1.8,<1.9"
rocm = "==7.0"
torch = ">=2.0"
python = ["3.12"]
families = ["gfx94X-dcgpu"]
gfx = ["gfx90a"]
platform = "linux"
fails = "build-wheel"
reason = "a demo entry for the tests"
evidence = "ROCm/TheRock#3413"
"""


def test_a_known_failure_as_json_keeps_the_data_files_field_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    import tomllib

    from toolkit.data.matrix import data_dir

    data = tmp_path / "data"
    shutil.copytree(data_dir(), data, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    with (data / "known_failures.toml").open("a") as fh:
        fh.write(DEMO_FAILURE)
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(data))
    raw = tomllib.loads(DEMO_FAILURE)["failures"]["apex-demo"]
    (e,) = [k for k in load_matrix().known_failures if k.id == "apex-demo"]
    out = e.as_json()
    # every field the TOML entry sets comes out under its own name, with its value
    assert {k: out[k] for k in raw} == raw
    # and the targets they select: gpus.toml's gfx94X-dcgpu is gfx942 alone, then the gfx ids
    assert out["targets"] == ["gfx942", "gfx90a"]
    rows = dict(e.explain())
    assert rows["re-try"].startswith("--include-known-failures") and rows["reason"] == raw["reason"]


def test_a_known_failures_json_names_every_field_as_the_toml_file_does() -> None:
    entry = KnownFailure(
        id="apex-smoke", package="apex", fails="smoke", reason="r", evidence="ROCm/apex@abc f",
        versions=">=1.4", rocm="", torch="", python=("3.12",), families=("gfx90X-dcgpu",),
        gfx=("gfx942",), targets=("gfx900", "gfx942"), test="test_runtime.py::test_x",
        holds="")
    assert entry.as_json() == {
        "id": "apex-smoke", "package": "apex", "versions": ">=1.4", "rocm": None, "torch": None,
        "python": ["3.12"], "families": ["gfx90X-dcgpu"], "gfx": ["gfx942"],
        "targets": ["gfx900", "gfx942"], "platform": entry.platform, "fails": "smoke",
        "test": "test_runtime.py::test_x", "reason": "r", "evidence": "ROCm/apex@abc f",
        "holds": None}
