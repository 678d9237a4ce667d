"""Provisioning steps of a plan: the environment, the ROCm SDK and torch (pure planning).

Execution-time behaviour (environment reuse, learning the SDK paths through
``python -m rocm_sdk path``, the torch HIP check) hooks into ``toolkit.execute``.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolkit.env import RocmPaths
from toolkit.errors import UsageError
from toolkit.host import HostFacts
from toolkit.layout import Layout
from toolkit.matrix import Build, Matrix
from toolkit.plan import Options, Step


def sdk_provider(build: Build, options: Options) -> str:
    provider = options.rocm_from or build.rocm.sdk.provider
    if provider not in ("pip", "system"):
        raise UsageError(f"unknown ROCm SDK provider {provider!r}; valid: pip, system")
    return provider


def choose_family(matrix: Matrix, build: Build, targets: Sequence[str], wanted: str | None) -> str:
    """The GPU family whose per-family index serves every requested target."""
    fams = matrix.family_targets
    if wanted:
        if wanted not in fams:
            raise UsageError(f"unknown GPU family {wanted!r}; valid: {', '.join(sorted(fams))}")
        candidates = [wanted]
    else:
        candidates = [build.rocm.default_family, *sorted(f.name for f in matrix.families.values())]
    procs = {t.split(":")[0] for t in targets}
    for name in candidates:
        if procs <= set(fams[name]):
            return name
    raise UsageError(
        f"no single GPU family covers {', '.join(targets)} on a per-family index; "
        "build them separately, or use a multi-arch SDK index"
    )


def provision_steps(
    matrix: Matrix, build: Build, options: Options, host: HostFacts, layout: Layout
) -> tuple[list[Step], RocmPaths, str | None]:
    """create-env, install-rocm-sdk, install-torch; the SDK paths; the SDK family used."""
    targets = options.gfx or matrix.family_targets[build.rocm.default_family]
    provider = sdk_provider(build, options)
    env_dir = layout.env_dir(build)
    env_python = str(layout.env_python(build))
    interp = host.interpreters.get(build.python, f"python{build.python}")

    steps: list[Step] = [
        Step("create-env", (host.uv, "venv", "--seed", "--python", interp, str(env_dir)),
             f"create the Python {build.python} environment for ROCm {build.rocm.version}"),
    ]
    family: str | None = None
    if provider == "pip":
        sdk = build.rocm.sdk
        index = options.index_url or sdk.index_url
        if not index or not sdk.spec:
            raise UsageError(f"ROCm {build.rocm.version} has no pip SDK index in the matrix; "
                             "give --index-url or use --rocm-from system")
        spec = sdk.spec
        if sdk.layout == "multi-arch":
            extras = ",".join(f"device-{t.split(':')[0]}" for t in targets)
            spec = spec.replace("rocm[libraries,devel]", f"rocm[libraries,devel,{extras}]")
            sdk_index = index
        else:
            family = choose_family(matrix, build, targets, options.family)
            sdk_index = f"{index.rstrip('/')}/{family}/"
        links = [a for fl in options.find_links for a in ("--find-links", fl)]
        steps.append(Step(
            "install-rocm-sdk",
            (*(host.uv, "pip", "install", "--python", env_python, "--prerelease=allow"),
             "--index-url", sdk_index, *links, spec),
            f"install the ROCm {build.rocm.version} SDK from TheRock's index"
            + (f" (family {family})" if family else " (multi-arch)"),
            env={"ROCM_SDK_TARGET_FAMILY": family} if family else {},
        ))
        rocm_paths = RocmPaths.learned()
    else:
        root = host.system_rocm.root if host.system_rocm else "/opt/rocm"
        rocm_paths = RocmPaths.system(root)
        steps.append(Step(
            "install-rocm-sdk",
            (f"{root}/bin/hipconfig", "--version"),
            f"use the system ROCm install at {root} "
            f"(expected {build.rocm.sdk.version or build.rocm.version})",
        ))

    if not build.pkg_version.torch:  # a package that needs no torch (the bundled sample)
        return steps, rocm_paths, family
    src = build.rocm.torch[build.pkg_version.torch_minor]
    torch_args: list[str] = []
    if src.index_url:
        url = src.index_url
        if src.per_family and family:
            url = f"{url.rstrip('/')}/{family}/"
        torch_args += ["--index-url", url]
        if src.kind != "pytorch":
            torch_args += ["--extra-index-url", "https://pypi.org/simple/"]
    if src.find_links:
        torch_args += ["--find-links", src.find_links]
    steps.append(Step(
        "install-torch",
        (host.uv, "pip", "install", "--python", env_python, "--prerelease=allow",
         "--index-strategy", "unsafe-best-match", *torch_args, src.spec),
        f"install torch {build.pkg_version.torch} for ROCm {build.rocm.version} ({src.kind} build"
        + (f"; {src.note}" if src.note else "") + ")",
    ))
    return steps, rocm_paths, family
