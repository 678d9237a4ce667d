"""The build plan: a pure function from (build, options, host facts, layout) to typed steps.

``plan()`` does no I/O. Each step carries a typed action (``toolkit.core.steps``) holding
every input its execution needs; values may contain placeholders (``{ROCM_ROOT}``, ``{SHA8}``,
``{WHEEL}`` ...) that earlier steps learn at execution time. A wheel is built into the
build folder, named into a staging folder, checked (and smoke-tested when planned) and only
then published into ``dist/<build-id>/``.
"""

from __future__ import annotations

from types import MappingProxyType

from toolkit.core.steps import (
    CheckWheel,
    CopySources,
    FetchSources,
    NameWheel,
    Publish,
    Smoke,
    Step,
)
from toolkit.data.matrix import Build, Matrix
from toolkit.env.buildenv import build_env
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Context, Options, Plan
from toolkit.plan.provision import provision_steps
from toolkit.plan.recipes import recipe_for


def _sources_step(build: Build, options: Options, layout: Layout) -> Step:
    worktree = str(layout.worktree(build))
    if options.source:
        return Step("get-sources",
                    f"use the contributor's checkout {options.source} (copied, never modified)",
                    CopySources(options.source, worktree))
    mirror = str(layout.mirror(build.package.name))
    return Step("get-sources",
                f"fresh worktree of {build.package.repo} at {build.pkg_version.ref} "
                f"(mirror {mirror})",
                FetchSources(build.package.repo, build.pkg_version.ref, mirror, worktree))


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
    targets = options.gfx or matrix.family_targets[build.rocm.default_family]
    steps, rocm_paths, family = provision_steps(matrix, build, options, host, layout)
    if build.rocm.sdk.provider == "none":  # CPU variant: no ROCm at all
        steps = [s for s in steps if s.name != "install-rocm-sdk"]
    steps.append(_sources_step(build, options, layout))

    base_env = build_env(
        rocm=rocm_paths,
        targets=targets,
        rocm_version=build.rocm.version,
        env_bin=str(layout.env_dir(build) / "bin"),
        torch_extensions_dir=str(layout.build_dir(build) / "torch_extensions"),
        host=host,
    )
    # Never let the interpreter's own build rpath leak into extensions (pyenv Pythons do).
    base_env["LDSHARED"] = "{LDSHARED}"
    ctx = Context(build, options, host, layout, tuple(targets), rocm_paths,
                  MappingProxyType(base_env), toolkit_python)
    steps.extend(recipe.build_steps(ctx))

    staging = str(layout.build_dir(build) / "staged")
    dest = str(layout.dist(build))
    steps.append(Step(
        "name-wheel",
        f"name the wheel {build.package.dist}-{build.version}+{ctx.local_version}-... "
        f"in the build's staging folder",
        NameWheel(ctx.wheelhouse, staging, build.rocm.version, options.naming),
    ))
    steps.append(Step(
        "check", "symbol, GLIBCXX, GPU-code and hygiene checks (fail on findings)",
        CheckWheel(toolkit_python, "{WHEEL}", str(layout.artifacts(build)),
                   gfx=tuple(targets) if recipe.carries_gpu_code(build) else (),
                   with_libs=("{TORCH_LIB}",) if recipe.needs_torch else (),
                   require_symbols=recipe.required_symbols(build.pkg_version)),
    ))
    if options.smoke:
        steps.append(Step("install-wheel", "install the named wheel into the build's environment",
                          ctx.uv_pip("--no-deps", "--reinstall", "{WHEEL}")))
        steps.append(Step(
            "smoke",
            "smoke tests against the installed wheel (GPU tests skip without a GPU, with the "
            "reason)",
            Smoke(toolkit_python, str(layout.env_dir(build)), build.id, tuple(targets),
                  str(layout.root), str(layout.artifacts(build))),
        ))
    steps.append(Step("publish", f"publish the checked wheel into {dest}",
                      Publish("{WHEEL}", dest)))
    return Plan(build, tuple(targets), family, tuple(steps), options.source, options)
