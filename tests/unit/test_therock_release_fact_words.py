"""The facts ``toolkit upstream`` states about one TheRock release of rocm.toml
(toolkit/verify/upstream/therock_releases.py): the release line, the GPU era, the channels and
the torch sources, each as drift naming the data's value ("none" when it lacks one), upstream's
value and the edits ``--write`` makes (file, key path, value).

The data is ``upstream_fakes.make_data`` (its 7.0 release: nightly-only at the fake TheRock's
7.0 commit, era ``fake`` = gfx90a, gfx942, channels stable and nightly); every expected
fact is written by hand from that file and the ``Line``/``Stated`` values the tests give."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest

from tests.unit.upstream_fakes import CMAKE, World
from toolkit.data.gpus import GpuEra
from toolkit.plan.recipes import load_matrix
from toolkit.verify.upstream import therock_releases as tr
from toolkit.verify.upstream.model import Context, Edit, Fact
from toolkit.verify.upstream.repos import Repo
from toolkit.verify.upstream.therock_lines import Line, Stated

SLUG = "ROCm/TheRock"
STABLE = "https://rocm.example.amd.com/whl-multi-arch/"
NIGHTLY = "https://nightly.example.amd.com/whl-multi-arch/"


def own(world: World) -> Context:
    """The context of a world a test changes (its own copy)."""
    repos = {SLUG: Repo(SLUG, world.root / "ROCm+TheRock" / "repo" / ".git")}
    return Context(load_matrix(world.data), world.data, repos)


@pytest.fixture
def tpl(world_template: World) -> World:
    """The shared world, for the tests that only read it."""
    return world_template


@pytest.fixture
def ctx(tpl: World) -> Context:
    return own(tpl)


def _line(world: World, status: str = "released", ref: str = "therock-7.0",
          version: str | None = "7.0.0") -> Line:
    c = world.c["rock70"]
    return Line("7.0", status, ref, c, version, f"{SLUG}@{c[:9]} version.json")


def test_a_line_that_moved_is_drift_naming_both_and_its_edit(ctx: Context, tpl: World) -> None:
    c = tpl.c["rock70"][:9]
    line = _line(tpl)
    rel = ctx.matrix.rocm["7.0"]
    assert tr._line_fact(ctx.repos[SLUG], "7.0", rel, line) == [Fact(
        "drift", "ROCm 7.0 release line", f"nightly-only {c} 7.0.0", "released therock-7.0 7.0.0",
        f"{SLUG}@{c} version.json",
        (Edit("rocm.toml", ("releases", "7.0", "line"),
              {"status": "released", "ref": "therock-7.0", "version": "7.0.0",
               "evidence": f"{SLUG}@{c} version.json"}),))]


def test_a_release_without_a_line_is_data_none(ctx: Context, tpl: World) -> None:
    line = _line(tpl, version=None)
    (fact,) = tr._line_fact(ctx.repos[SLUG], "6.1", ctx.matrix.rocm["6.1"], line)
    assert (fact.kind, fact.what, fact.data, fact.upstream) == (
        "drift", "ROCm 6.1 release line", "none", "released therock-7.0 ")
    assert fact.edits[0].value["version"] == ""
    assert fact.edits[0].path == ("releases", "6.1", "line")


def test_the_same_line_at_its_cited_commit_is_quiet(ctx: Context, tpl: World) -> None:
    c = tpl.c["rock70"][:9]
    same = _line(tpl, "nightly-only", c)
    rel = ctx.matrix.rocm["7.0"]
    assert tr._line_fact(ctx.repos[SLUG], "7.0", rel, same) == []
    # a nightly-only line moves with main while its version stays: still quiet
    assert tr._line_fact(ctx.repos[SLUG], "7.0", rel,
                         _line(tpl, "nightly-only", "abcdef123")) == []
    # another version, or evidence citing no commit of the line: drift
    assert tr._line_fact(ctx.repos[SLUG], "7.0", rel, _line(tpl, "nightly-only", c, "7.0.1"))
    assert rel.line is not None
    cites_nothing = dataclasses.replace(rel, line=dataclasses.replace(rel.line, evidence="x"))
    assert tr._line_fact(ctx.repos[SLUG], "7.0", cites_nothing, same)[0].what == \
        "ROCm 7.0 release line"


def test_other_gpu_targets_make_a_new_era_and_point_the_release_at_it(
        ctx: Context, tpl: World) -> None:
    ev = f"{SLUG}@abc1234 {CMAKE}"
    listed = Stated(("gfx90a", "gfx942", "gfx1100"), ev)
    assert tr._era_fact(ctx, "7.0", ctx.matrix.rocm["7.0"], listed) == [Fact(
        "drift", "ROCm 7.0 GPU targets", "fake: gfx90a, gfx942",
        "therock-7.0: gfx90a, gfx942, gfx1100", ev,
        (Edit("gpus.toml", ("eras", "therock-7.0", "evidence"), ev),
         Edit("gpus.toml", ("eras", "therock-7.0", "targets"), ["gfx90a", "gfx942", "gfx1100"]),
         Edit("rocm.toml", ("releases", "7.0", "gpus"), "therock-7.0")))]


def test_targets_an_era_already_has_point_at_that_era(ctx: Context) -> None:
    rel = dataclasses.replace(ctx.matrix.rocm["7.0"], era=None)
    listed = Stated(("gfx942", "gfx90a"), "ev")
    assert tr._era_fact(ctx, "7.0", rel, listed) == [Fact(
        "drift", "ROCm 7.0 GPU targets", "none: -", "fake: gfx942, gfx90a", "ev",
        (Edit("rocm.toml", ("releases", "7.0", "gpus"), "fake"),))]
    assert tr._era_fact(ctx, "7.0", ctx.matrix.rocm["7.0"], listed) == []


def test_a_target_the_era_credits_elsewhere_is_no_difference(ctx: Context) -> None:
    era = GpuEra("fake", ("gfx90a", "gfx942", "gfx950"), (),
                 f"{SLUG}@abc1234 {CMAKE}; gfx950: pytorch/FBGEMM@def5678 x.yml")
    rel = dataclasses.replace(ctx.matrix.rocm["7.0"], era=era)
    assert tr._era_fact(ctx, "7.0", rel, Stated(("gfx90a", "gfx942"), "ev")) == []
    # credited, but upstream lists it itself now: the era's targets are upstream's
    (fact,) = tr._era_fact(ctx, "7.0", rel, Stated(("gfx90a", "gfx950"), "ev"))
    assert fact.data == "fake: gfx90a, gfx942, gfx950"


def test_a_new_era_keeps_the_release_eras_extra_targets(ctx: Context) -> None:
    era = GpuEra("old", ("gfx90a",), ("gfx906",), "e")
    rel = dataclasses.replace(ctx.matrix.rocm["7.0"], era=era)
    name, edits = tr._era_edits(ctx, "7.1", Stated(("gfx1201",), "ev"), rel)
    assert name == "therock-7.1"
    assert edits == [Edit("gpus.toml", ("eras", "therock-7.1", "evidence"), "ev"),
                     Edit("gpus.toml", ("eras", "therock-7.1", "targets"), ["gfx1201"]),
                     Edit("gpus.toml", ("eras", "therock-7.1", "extra_targets"), ["gfx906"])]
    assert tr._era_edits(ctx, "7.1", Stated(("gfx1201",), "ev"), None)[1] == edits[:2]


def test_channels_are_compared_without_their_trailing_slash(ctx: Context) -> None:
    rel = ctx.matrix.rocm["7.0"]
    same = Stated({"stable": STABLE.rstrip("/"), "nightly": NIGHTLY}, "ev")
    assert tr._channel_fact("7.0", rel, same) == []
    other = Stated({"stable": STABLE, "nightly": "https://n2.example.amd.com/"}, "ev2")
    assert tr._channel_fact("7.0", rel, other) == [Fact(
        "drift", "ROCm 7.0 channels", f"stable {STABLE}, nightly {NIGHTLY}",
        f"stable {STABLE}, nightly https://n2.example.amd.com/", "ev2",
        (Edit("rocm.toml", ("releases", "7.0", "channels"),
              {"stable": STABLE, "nightly": "https://n2.example.amd.com/", "evidence": "ev2"}),))]
    (fact,) = tr._channel_fact("6.0", ctx.matrix.rocm["6.0"], other)
    assert fact.data == "none"
    assert tr._urls({}) == "none"
    assert tr._urls({"a": "u1", "b": "u2"}) == "a u1, b u2"


def test_torch_sources_against_what_the_ref_builds(ctx: Context, tpl: World) -> None:
    c = tpl.c["rock70"][:9]
    path = "build_tools/github_actions/configure_pytorch_release_matrix.py"
    ev = f"{SLUG}@{c} {path}"
    rel = ctx.matrix.rocm["7.0"]  # torch 2.5 for 3.11, 3.12, citing this very commit
    repo, line = ctx.repos[SLUG], _line(tpl)
    builds = Stated({"2.5": ("3.11", "3.12")}, ev, "linux: release/2.5")
    assert tr._torch_facts(ctx, repo, "7.0", rel, line, builds) == []
    pys = Stated({"2.5": ("3.12",), "2.6": ("3.12", "3.13")}, ev, "d")
    assert tr._torch_facts(ctx, repo, "7.0", rel, line, pys) == [
        Fact("drift", "ROCm 7.0 torch 2.5 Python", "3.11, 3.12", "3.12", ev,
             (Edit("rocm.toml", ("releases", "7.0", "torch", "2.5", "python"), ["3.12"]),
              Edit("rocm.toml", ("releases", "7.0", "torch", "2.5", "evidence"), f"{ev} (d)"))),
        Fact("drift", "ROCm 7.0 torch 2.6", "none", "built for 3.12, 3.13", ev,
             (Edit("rocm.toml", ("releases", "7.0", "torch", "2.6"),
                   {"kind": "therock", "spec": "torch>=2.6,<2.7", "python": ["3.12", "3.13"],
                    "evidence": f"{ev} (d)"}),))]
    gone = Stated({"2.6": ("3.12",)}, ev, "linux: release/2.6")
    assert tr._torch_facts(ctx, repo, "7.0", rel, line, gone)[0] == Fact(
        "drift", "ROCm 7.0 torch 2.5", "torch>=2.5,<2.6", "not built (linux: release/2.6)", ev,
        (Edit("rocm.toml", ("releases", "7.0", "torch", "2.5"), None),))
    moved = Stated({"2.5": ("3.11", "3.12")}, f"{SLUG}@{c} other/file.py", "d")
    assert tr._torch_facts(ctx, repo, "7.0", rel, line, moved) == [Fact(
        "drift", "ROCm 7.0 torch 2.5 evidence", rel.torch["2.5"].evidence,
        f"{SLUG}@{c} other/file.py (d)", f"{SLUG}@{c} other/file.py",
        (Edit("rocm.toml", ("releases", "7.0", "torch", "2.5", "evidence"),
              f"{SLUG}@{c} other/file.py (d)"),))]


def test_the_next_torch_minor_bounds_a_therock_spec() -> None:
    assert tr._next_minor("2.9") == "2.10"
    assert tr._next_minor("2.10") == "2.11"
    assert tr._torch_entry("2.10", ("3.12",), Stated({}, "E", "D")) == {
        "kind": "therock", "spec": "torch>=2.10,<2.11", "python": ["3.12"], "evidence": "E (D)"}


def test_the_previous_release_is_the_newest_older_by_number(ctx: Context) -> None:
    prev = tr._previous(ctx, "7.0")
    assert prev is not None and prev.version == "6.1"
    prev = tr._previous(ctx, "6.10")
    assert prev is not None and prev.version == "6.1"
    assert tr._previous(ctx, "6.0") is None


def test_a_ref_in_a_shape_the_reader_does_not_know_is_a_review_naming_it(
        world: World) -> None:
    c = world.c["rock70"]
    line = Line("7.0", "released", "therock-7.0", c, "7.0.0", "ev")
    world.repo("ROCm/TheRock").commit({"build_tools/github_actions/"
                                       "configure_pytorch_release_matrix.py": "X = 1\n"},
                                      branch="release/therock-7.0", base=c)
    head = world.repo("ROCm/TheRock").git("rev-parse", "release/therock-7.0")
    line = dataclasses.replace(line, commit=head, ref="release/therock-7.0")
    got = tr._read(own(world).repos[SLUG], line)
    assert got == Fact(
        "review", "ROCm 7.0 torch builds", "-",
        "cannot be read: build_tools/github_actions/configure_pytorch_release_matrix.py names "
        "neither RELEASE_STABLE_PYTORCH_REFS nor PYTORCH_REFS_LINUX",
        f"{SLUG}@{head[:9]} release/therock-7.0",
        review=f"{SLUG} release/therock-7.0 states its torch builds in a shape the reader "
               "(toolkit/verify/upstream/therock_lines.py) does not know")


@pytest.mark.parametrize(("drop", "what", "says"), [
    (CMAKE, "GPU targets", f"{CMAKE} at {{c}} is missing"),
    ("build_tools/setup_venv.py", "channels", "no build_tools/setup_venv.py at {c}")])
def test_each_file_the_ref_lacks_is_a_review_naming_what_it_states(
        world: World, drop: str, what: str, says: str) -> None:
    rock = world.repo(SLUG)
    rock.git("checkout", "--quiet", "-b", "cut", world.c["rock70"])
    rock.git("rm", "--quiet", drop)
    rock.git("commit", "--quiet", "-m", "drop")
    head = rock.git("rev-parse", "HEAD")
    rock.git("checkout", "--quiet", "main")
    line = Line("7.0", "branch", "cut", head, "7.0.0", "ev")
    assert tr._read(own(world).repos[SLUG], line) == Fact(
        "review", f"ROCm 7.0 {what}", "-", "cannot be read: " + says.format(c=head[:9]),
        f"{SLUG}@{head[:9]} cut",
        review=f"{SLUG} cut states its {what} in a shape the reader "
               "(toolkit/verify/upstream/therock_lines.py) does not know")
    # the release is not compared past it: its line fact, then the review
    mine = own(world)
    facts = tr._release(mine, mine.repos[SLUG], mine.matrix.rocm["7.0"], line)
    assert [(f.kind, f.what) for f in facts] == [("drift", "ROCm 7.0 release line"),
                                                 ("review", f"ROCm 7.0 {what}")]


def test_a_new_release_takes_the_previous_releases_default_family(world: World) -> None:
    rocm = world.data / "rocm.toml"
    rocm.write_text(rocm.read_text().replace('hip = "7.0"\ndefault_family = "gfx94X-dcgpu"',
                                             'hip = "7.0"\ndefault_family = "gfx90a"'))
    from toolkit.data.matrix import forget_loaded

    forget_loaded()
    repo = Repo(SLUG, world.root / "ROCm+TheRock" / "repo" / ".git")
    ctx = Context(load_matrix(world.data), world.data, {SLUG: repo})
    forget_loaded()
    c = world.c["rock70"]

    def family(minor: str) -> object:
        line = Line(minor, "released", f"therock-{minor}", c, f"{minor}.0", "LEV")
        (fact,) = tr._new_release(ctx, repo, line)
        assert fact.what == f"new ROCm release {minor}" and fact.data == "none"
        edits = {e.path: e.value for e in fact.edits}
        assert edits[("releases", minor, "hip")] == minor
        assert edits[("releases", minor, "sdk")] == {
            "provider": "pip", "layout": "multi-arch",
            "evidence": f"LEV; {SLUG}@{c[:9]} build_tools/setup_venv.py"}
        return edits[("releases", minor, "default_family")]

    assert family("7.2") == "gfx90a"
    assert family("5.9") == "gfx94X-dcgpu"  # no release before it: the multi-arch default


def test_the_legacy_note_names_the_oldest_multi_arch_release_by_number(
        ctx: Context, tpl: World) -> None:
    """Releases 7.9 and 7.10 (7.9 is older, though "7.10" sorts first as text): TheRock's
    6.4 and 7.0 lines come before it, a note; nothing of them is compared."""
    rel = ctx.matrix.rocm["7.0"]
    matrix = SimpleNamespace(rocm={"7.10": dataclasses.replace(rel, version="7.10"),
                                   "7.9": dataclasses.replace(rel, version="7.9")})
    mine = Context(matrix, tpl.data, ctx.repos)  # type: ignore[arg-type]
    assert tr.release_facts(mine, ctx.repos[SLUG]) == [Fact(
        "note", "TheRock legacy releases", "-",
        "6.4, 7.0: per-family releases before the oldest multi-arch one of the data (7.9), "
        "not compared", "ROCm/TheRock tags, release branches, version.json")]


def test_the_release_before_a_new_one_is_the_nearest_older_by_version_not_by_text() -> None:
    """ROCm 7.10 comes after 7.9 (numbers compared part by part, PEP 440), though "7.9" sorts
    after "7.10" as text: a new 7.11 line is read against 7.10's facts."""
    rocm: dict[str, Any] = {v: object() for v in ("6.4", "7.9", "7.10", "7.12")}
    ctx: Any = SimpleNamespace(matrix=SimpleNamespace(rocm=rocm))
    assert tr._previous(ctx, "7.11") is rocm["7.10"]
    assert tr._previous(ctx, "7.10") is rocm["7.9"]
    assert tr._previous(ctx, "6.4") is None
