"""The build plan: a pure function from (build, options, host facts, layout) to typed steps.

``plan()`` does no I/O. Each step carries a typed action (``toolkit.core.steps``) holding
every input its execution needs; values may contain placeholders (``{ROCM_ROOT}``, ``{SHA8}``,
``{WHEEL}`` ...) that earlier steps learn at execution time. A wheel is built into the
build folder, named into a staging folder, checked (and smoke-tested when planned) and only
then published into ``dist/<build-id>/``.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from toolkit.core import step_names as names
from toolkit.core.steps import (
    CheckWheel,
    CopySources,
    ExpectWheel,
    FetchSources,
    FetchSubmodules,
    NameWheel,
    ProvideLibrary,
    Publish,
    Smoke,
    Step,
    Submodule,
)
from toolkit.core.steps.sources import mirror_name
from toolkit.data.matrix import Build, Matrix
from toolkit.env.buildenv import RocmPaths, build_env
from toolkit.env.host import HostFacts
from toolkit.env.project import dirty_version
from toolkit.plan import variants
from toolkit.plan.layout import Layout
from toolkit.plan.model import Context, Options, Plan
from toolkit.plan.provision import default_targets, provision_steps, sources_for
from toolkit.plan.recipes import recipe_for
from toolkit.plan.recipes.base import Recipe


def submodule_mirrors(layout: Layout) -> Path:
    """Where the mirrors of submodule repositories are cached (shared by every build)."""
    return layout.mirror("x").parent / "submodules"


def _sources_steps(build: Build, options: Options, layout: Layout) -> list[Step]:
    worktree = str(layout.worktree(build))
    subs = build.pkg_version.submodules
    if options.source:
        return [Step(names.GET_SOURCES,
                     f"use the contributor's checkout {options.source} (copied, never modified"
                     + ("; it must hold its submodules: " + ", ".join(subs) if subs else "") + ")",
                     CopySources(options.source, worktree))]
    mirror = str(layout.mirror(build.package.name))
    steps = [Step(names.GET_SOURCES,
                  f"fresh worktree of {build.package.repo} at {build.pkg_version.ref} "
                  f"(mirror {mirror})",
                  FetchSources(build.package.repo, build.pkg_version.ref, mirror, worktree))]
    if subs:
        steps.append(Step(
            names.GET_SUBMODULES,
            f"the submodules the build needs ({', '.join(subs)}) at the commits "
            f"{build.pkg_version.ref} records, each from a cached mirror",
            FetchSubmodules(worktree, tuple(
                Submodule(path, url, str(submodule_mirrors(layout) / mirror_name(url)))
                for path, url in subs.items()), str(submodule_mirrors(layout)))))
    return steps


# a ROCm spread over the distribution's own folders (Debian's hipcc: /usr) cannot be told
# apart from the host's libraries, so it is no declared provider of the check
SHARED_PREFIXES = frozenset({"/usr", "/usr/local", "/"})


def rocm_provider(build: Build, rocm: RocmPaths) -> tuple[str, ...]:
    """The ROCm library folder the check counts as a provider (``--with``): the installed
    SDK's ``lib`` (TheRock's devel root links every runtime library there:
    ROCm/TheRock@89553ce37 build_tools/packaging/python/templates/rocm/src/rocm_sdk/_devel.py),
    or a system install's in its own prefix (/opt/rocm/lib); none for a CPU build or a ROCm
    installed into the distribution's /usr."""
    if build.rocm.sdk.provider == "none":
        return ()
    root = rocm.root.rstrip("/") or "/"
    if root in SHARED_PREFIXES:
        return ()
    return (f"{root}/lib",)


def _check_step(ctx: Context, recipe: Recipe, steps: list[Step]) -> Step:
    """The wheel checks, with the libraries the earlier steps provide."""
    build, options = ctx.build, ctx.options
    return Step(
        names.CHECK, "symbol, GLIBCXX, GPU-code and hygiene checks (fail on findings)",
        CheckWheel(ctx.toolkit_python, "{WHEEL}", str(ctx.layout.artifacts(build)),
                   gfx=tuple(ctx.targets) if recipe.carries_gpu_code(build, options) else (),
                   with_libs=(*(("{TORCH_LIB}",) if recipe.needs_torch or build.pkg_version.torch
                                 else ()),
                              *rocm_provider(build, ctx.rocm),
                              *(s.action.placeholder for s in steps
                                if isinstance(s.action, ProvideLibrary))),
                   require_symbols=recipe.required_symbols(build.pkg_version)),
    )


def _base_env(build: Build, host: HostFacts, layout: Layout, targets: tuple[str, ...],
              rocm_paths: RocmPaths) -> dict[str, str]:
    base_env = build_env(
        rocm=rocm_paths,
        targets=targets,
        rocm_version=build.rocm.version,
        env_bin=str(layout.env_dir(build) / "bin"),
        torch_extensions_dir=str(layout.build_dir(build) / "torch_extensions"),
        host=host,
        build_dir=str(layout.build_dir(build)),
    )
    # Never let the interpreter's own build rpath leak into extensions (pyenv Pythons do),
    # nor its prefix (the Python headers' path in debug info).
    base_env["LDSHARED"] = "{LDSHARED}"
    base_env["LDCXXSHARED"] = "{LDCXXSHARED}"
    for var in ("CFLAGS", "CXXFLAGS", "HIPCC_COMPILE_FLAGS_APPEND"):
        base_env[var] = f"{base_env.get(var, '')} {{PYTHON_PREFIX_MAP}}".strip()
    return base_env


def plan(
    matrix: Matrix,
    build: Build,
    options: Options,
    host: HostFacts,
    layout: Layout,
    *,
    toolkit_python: str = "python",
) -> Plan:
    recipe = recipe_for(build.package.recipe)
    targets = default_targets(matrix, build, options)
    steps, rocm_paths, family = provision_steps(matrix, build, options, host, layout)
    steps.extend(_sources_steps(build, options, layout))

    base_env = _base_env(build, host, layout, targets, rocm_paths)
    ctx = Context(build, options, host, layout, tuple(targets), rocm_paths,
                  MappingProxyType(base_env), toolkit_python)
    steps.extend(recipe.build_steps(ctx))

    staging = str(layout.build_dir(build) / "staged")
    dest = str(layout.dist(build))
    dist, version = recipe.expected_wheel(ctx)
    steps.append(Step(
        names.EXPECT_WHEEL,
        f"the built wheel must be {dist} {version}, what {build.package.name}'s setup.py makes "
        "for this command line and environment",
        ExpectWheel(ctx.wheelhouse, dist, version,
                    tags=build.wheel_tag if build.pkg_version.abi3 else ""),
    ))
    final = (version if options.naming == "upstream"
             else f"{version.split('+')[0]}+{ctx.local_version}")
    if options.dirty:  # uncommitted changes (--allow-dirty): never the clean commit's name
        final = dirty_version(final)
    steps.append(Step(
        names.NAME_WHEEL,
        f"name the wheel {dist}-{final}-... in the build's staging folder"
        + (" (the upstream name kept)" if options.naming == "upstream" else "")
        + (" (the source has uncommitted changes: --allow-dirty)" if options.dirty else ""),
        NameWheel(ctx.wheelhouse, staging, build.rocm.version, options.naming),
    ))
    steps.append(_check_step(ctx, recipe, steps))
    check = steps[-1]
    if options.smoke:
        steps.append(Step(names.INSTALL_WHEEL, "install the named wheel into the build's environment",
                          ctx.uv_pip("--no-deps", "--reinstall", "{WHEEL}")))
        steps.append(Step(
            names.SMOKE,
            "smoke tests against the installed wheel (GPU tests skip without a GPU, with the "
            "reason)",
            Smoke(toolkit_python, str(layout.env_dir(build)), build.id, tuple(targets),
                  str(layout.root), str(layout.artifacts(build))),
        ))
    if options.variants:  # issue 31: one wheel variant per target (plan/variants.py)
        steps.extend(variants.build_steps(ctx, recipe, check))
    steps.append(Step(names.PUBLISH, f"publish the checked wheel into {dest}",
                      Publish("{WHEEL}", dest)))
    if options.variants:
        steps.extend(variants.publish_steps(ctx))
    return Plan(build, tuple(targets), family, tuple(steps), options.source, options,
                sources_for(matrix, build, options).channel)
