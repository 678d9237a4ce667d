"""The closed sets of the data files and one schema per file (see ``toolkit.data.schema``).

Files: ``gpus.toml`` (GPU families), ``rocm.toml`` (ROCm releases), ``ci.toml`` (CI trigger
rules and runners) and every other ``*.toml``: one package (``[package]`` and ``[[versions]]``),
named after its file (``apex.toml`` holds ``package.name = "apex"``).

Refs resolved per file: ``families`` (names and aliases from gpus.toml), ``eras`` (its
release eras), ``rocm`` (releases), ``name`` (the
package file's stem); given by the caller (the plan layer's recipe registry,
``toolkit.plan.recipes.load_matrix``): ``recipes`` (their names) and ``build_styles`` (those
of the package's recipe).
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.data.schema import Array, Flag, Map, Ref, Spec, Table, Tagged, Text, Texts

PYTHONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.13t", "3.14", "3.14t")
SDK_LAYOUTS = ("per-family", "multi-arch")
# TheRock's package channels (build_tools/setup_venv.py ROCM_INDEX_URLS_MAP) and the states of
# a release line (toolkit.data.releases: where ROCm/TheRock states the release)
CHANNELS = ("stable", "prerelease", "nightly", "dev")
LINE_STATUSES = ("released", "branch", "bkc", "nightly-only")
# GitHub events a CI rule may be written for (the workflow passes ${{ github.event_name }}).
EVENTS = ("pull_request", "push", "schedule", "workflow_dispatch", "merge_group", "release")
PYTHON_RULES = ("newest", "all")
VERSION_RULES = ("newest", "all")  # ci.toml triggers.<event>.versions
FAMILY_RULES = ("default", "requested", "all")  # ci.toml triggers.<event>.families
RESERVED_FILES = ("gpus.toml", "rocm.toml", "ci.toml",
                  "known_failures.toml")  # every other *.toml is a package

VERSION = r"[0-9]+(\.[0-9]+){1,2}"
MINOR = r"[0-9]+\.[0-9]+"


def _gfx_id(value: str) -> str | None:
    from toolkit.core.errors import UsageError
    from toolkit.core.gfx import parse_target

    try:
        parse_target(value)
    except UsageError:
        return "is not a gfx id like gfx90a"
    return None


def _index_url(value: str) -> str | None:
    from toolkit.core.errors import UsageError
    from toolkit.core.urls import check_index_url

    try:
        check_index_url(value)
    except UsageError:
        return ("is not an allowed index URL; valid: https://..., file://..., or http:// on "
                "127.0.0.1/localhost")
    return None


_TEXT = Text()
_VER = Text(pattern=VERSION, like="X.Y[.Z]")
_URL = Text(check=_index_url)
_GFX = Text(check=_gfx_id)

# `eras`: which gfx ids the compilers of a release era build (rocm.toml: `gpus = "<era>"`)
_ERA = Table({"evidence": Text(), "targets": Texts(_GFX), "extra_targets": Texts(_GFX)},
             optional=("extra_targets",))
GPUS = Table({
    "families": Map(Table({"targets": Texts(_GFX), "aliases": Texts()}, optional=("aliases",)),
                    non_empty=True, what="GPU family ([families.<name>])"),
    "eras": Map(_ERA, key=Text(pattern=r"[A-Za-z0-9][A-Za-z0-9_.-]*", like="a name"),
                non_empty=True, what="release era ([eras.<name>])"),
})

# `evidence`: where upstream says so ("<owner>/<repo>@<commit> <file>"); `note`: what a user
# should know (why a system install, why AMD's own torch build), shown by `invoke matrix`.
_EVIDENCE = Text()
# `layout`: the pip SDK's index layout; legacy: TheRock's per-family releases (no new ones; old
# ones may be deleted). A system release that TheRock also published has a layout (and channels).
_SDK = Tagged("provider", {
    "pip": Table({"layout": Text(choices=SDK_LAYOUTS), "legacy": Flag(), "note": _TEXT,
                  "evidence": _EVIDENCE}, optional=("note", "legacy")),
    "system": Table({"version": _VER, "layout": Text(choices=SDK_LAYOUTS), "legacy": Flag(),
                     "note": _TEXT, "evidence": _EVIDENCE},
                    optional=("note", "layout", "legacy")),
})
# where ROCm/TheRock states the release: a tag, a release or BKC branch, or main's history
_LINE = Table({"status": Text(choices=LINE_STATUSES), "ref": _TEXT,
               "version": Text(pattern=r"[0-9]+\.[0-9]+\.[0-9]+", like="X.Y.Z"),
               "evidence": _EVIDENCE})
# TheRock's channels of the release: name -> index URL (the SDK and TheRock's torch)
_CHANNELS = Table({**{c: _URL for c in CHANNELS}, "evidence": _EVIDENCE},
                  optional=CHANNELS)
_TORCH = Tagged("kind", {
    # upstream download.pytorch.org
    "pytorch": Table({"index_url": _URL, "spec": _TEXT, "note": _TEXT, "evidence": _EVIDENCE},
                     optional=("note",)),
    # AMD's own builds (repo.radeon.com): a find-links page or an index
    "amd": Table({"find_links": _URL, "index_url": _URL, "spec": _TEXT, "note": _TEXT,
                  "evidence": _EVIDENCE},
                 optional=("note",), any_of=(("find_links", "index_url"),)),
    # TheRock's torch, built against the pip SDK: from the release's channel (no index of its own)
    # `python`: the Pythons TheRock builds this torch for (its release workflow's list); a
    # package version builds on this release only for those of its Pythons
    "therock": Table({"spec": _TEXT, "note": _TEXT,
                      "python": Texts(Text(choices=PYTHONS)), "evidence": _EVIDENCE},
                     optional=("note", "python")),
})
FAMILY_NAME = r"gfx[0-9A-Za-z]+(-[a-z]+)?"
# the GPU families a release's per-family SDK index served (TheRock renamed families over time)
_SERVED = Table({
    "evidence": _EVIDENCE,
    "served": Map(Texts(_GFX), key=Text(pattern=FAMILY_NAME, like="a family name like gfx94X-dcgpu"),
                  non_empty=True, what="family"),
})
ROCM = Table(
    {
        "releases": Map(
            Table({
                "gpus": Text(choices=Ref("eras"), note="the release eras of gpus.toml"),
                "hip": Text(pattern=MINOR, like="X.Y"),
                "default_family": Text(choices=Ref("families")),
                "line": _LINE,
                "sdk": _SDK,
                "channels": _CHANNELS,
                "families": _SERVED,
                "torch": Map(_TORCH, key=Text(pattern=MINOR, like="a torch release like 2.8")),
            }, optional=("line", "channels", "families")),
            key=Text(pattern=VERSION, like="a ROCm version like 6.4 or 6.2.4"),
            non_empty=True, what="ROCm release ([releases.\"X.Y\"])",
        ),
    },
)

# a version's keys every package has; a recipe adds its own (``RecipeData.version_data``:
# fbgemm_gpu's ``tbb``), checked by the recipe's spec when the registry loads the matrix
VERSION_FIELDS: dict[str, Spec] = {
    "version": _VER,
    "ref": _TEXT,
    "torch": _VER,
    # empty only with `waiting`: a version no ROCm release of the matrix builds yet
    "rocm": Texts(Text(choices=Ref("rocm")), may_be_empty=True),
    "python": Texts(Text(choices=PYTHONS)),
    "build_style": Text(choices=Ref("build_styles", given_by_caller=True),
                        note="the build styles of its recipe"),
    "evidence": _EVIDENCE,
    # gfx targets without --gfx, by the first ROCm major they apply from ("6", "7")
    "default_targets": Map(Texts(_GFX), key=Text(pattern=r"[0-9]+", like="a ROCm major like 7"),
                           non_empty=True, what="ROCm major"),
    # git submodules the build needs: path -> URL (as the ref's .gitmodules has them)
    "submodules": Map(_TEXT, key=Text(pattern=r"[A-Za-z0-9_./-]+", like="a path"),
                      non_empty=True, what="submodule"),
    # why `rocm = []`: what the version awaits ("awaits torch 2.14 on a ROCm of the matrix")
    "waiting": _TEXT,
    # one py_limited_api wheel for every listed Python: the oldest CPython whose stable ABI it
    # uses ("cp39": tagged cp39-abi3); built once per ROCm release, by the newest listed Python
    "abi3": Text(pattern=r"cp3[0-9]+", like="cp39"),
}
VERSION_OPTIONAL = ("default_targets", "submodules", "waiting", "abi3")
NO_RECIPE_DATA = Table({})


@dataclass(frozen=True, eq=False)
class RecipeData:
    """What the data needs to know of one recipe (the plan layer's registry gives it): the
    build styles a version may name, and the version keys the recipe adds (all optional)."""

    build_styles: tuple[str, ...]
    version_data: Table = NO_RECIPE_DATA

    def __eq__(self, other: object) -> bool:  # the same spec object: load_matrix's cache key
        return (isinstance(other, RecipeData) and other.build_styles == self.build_styles
                and other.version_data is self.version_data)

    def __hash__(self) -> int:
        return hash((self.build_styles, id(self.version_data)))


def package_spec(recipe: RecipeData | None) -> Table:
    """The schema of a package file whose recipe is ``recipe`` (None: the recipe is not
    known here, its keys are not checked: ``toolkit.data.matrix`` keeps them aside)."""
    extra = recipe.version_data if recipe is not None else NO_RECIPE_DATA
    return Table({
        "package": Table(
            {"name": Text(choices=Ref("name"), note="a package file is named after its package"),
             "dist": _TEXT, "repo": _TEXT,
             "recipe": Text(choices=Ref("recipes", given_by_caller=True),
                            note="the recipes of toolkit.plan.recipes.REGISTRY"), "subdir": _TEXT},
            optional=("subdir",),
        ),
        "versions": Array(Table({**VERSION_FIELDS, **extra.fields},
                                optional=VERSION_OPTIONAL + tuple(extra.fields))),
    })


PACKAGE = package_spec(None)

CI = Table({
    "triggers": Map(
        Table({"python": Text(choices=PYTHON_RULES), "families": Text(choices=FAMILY_RULES),
               "versions": Text(choices=VERSION_RULES), "variants": Flag()},
              optional=("versions", "variants")),
        key=Text(choices=EVENTS), non_empty=True,
        what=f"trigger rule; add at least one of: {', '.join(EVENTS)}",
    ),
    "runners": Table({
        "build": _TEXT,
        "test": Map(Table({"label": _TEXT, "gfx": _GFX, "families": Texts(Text(choices=Ref("families")))}),
                    non_empty=True, what="test runner class ([runners.test.<class>])"),
    }),
})
