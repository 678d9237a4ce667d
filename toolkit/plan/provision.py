"""Provisioning plans: the environment, the ROCm SDK and torch of one build (pure, no I/O).

``sources_for`` says where the SDK and torch come from (matrix data, overridden by
``Options``); ``provision_steps`` turns that into typed steps: ``probe-indexes``,
``create-env``, ``install-rocm-sdk`` (pip SDK or a system install), ``rocm-sdk-test`` (only
with ``Options.rocm_sdk_test``), ``install-torch`` and ``mark-env-ready``. Every step but
create-env is skipped while the environment's stamp matches (``Step.reuse_env``). Lock files
are read by the caller into ``Options.locks`` (``toolkit.plan.locks.read_locks``); a current
lock turns the installs into ``--require-hashes -r locks/<name>``, a stale one is refused.
The execution of these steps lives in ``toolkit.run.provisioning``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from types import MappingProxyType

from toolkit.core import step_names as names
from toolkit.core.errors import UsageError, suggestion
from toolkit.core.gfx import sort_key
from toolkit.core.steps import (
    CheckEnv,
    Command,
    CreateEnv,
    IndexProbe,
    InstallSdk,
    InstallTorch,
    MarkEnvReady,
    ProbeIndexes,
    Step,
    UseSystemRocm,
)
from toolkit.core.urls import check_location, join_path
from toolkit.data.matrix import Build, Matrix
from toolkit.env.buildenv import RocmPaths
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.locks import find_lock, inputs_hash, lock_name
from toolkit.plan.model import Options
from toolkit.plan.sources import Sources

TOOLS_PATH = "{TOOLS_PATH}:{PATH}"
INIT_WHY = ("TheRock: after device wheels are installed, `rocm-sdk init` links their device "
            "files into the devel tree (the compilers do not rescan on their own; "
            "ROCm/TheRock@89553ce37 RELEASES.md, docs/packaging/python_packaging.md)")
PYPI = "https://pypi.org/simple/"


def sort_targets(targets: Sequence[str]) -> list[str]:
    return sorted(targets, key=sort_key)


def sdk_provider(build: Build, options: Options) -> str:
    """``--rocm-from``, else pip when ``--channel`` names a channel of the release (a system
    release TheRock also published), else the release's own provider."""
    chosen = "pip" if options.channel and build.rocm.sdk.channels else None
    provider = options.rocm_from or chosen or build.rocm.sdk.provider
    if provider not in ("pip", "system"):
        raise UsageError(f"unknown ROCm SDK provider {provider!r}; valid: pip, system",
                         nearest=suggestion(provider, ("pip", "system")))
    return provider


def channel_for(build: Build, options: Options) -> str | None:
    """The TheRock channel the build installs from: ``--channel`` (one the release has, else a
    ``UsageError`` naming its channels), else the release's default (rocm.toml: by its line's
    status); None when the release has no channel."""
    return build.rocm.sdk.channel(options.channel, build.rocm.version)


def served_families(matrix: Matrix, build: Build) -> dict[str, tuple[str, ...]]:
    """The families the release's per-family index served (rocm.toml), else the families of
    the release's era: each with its members the era's compilers build (gpus.toml)."""
    return dict(build.rocm.families) or matrix.release_families(build.rocm)


def buildable(build: Build, targets: Sequence[str]) -> tuple[str, ...]:
    """``targets`` when the release's compilers build every one (its era in gpus.toml);
    otherwise a ``UsageError`` (exit 2) naming the others and listing the valid ids."""
    era = build.rocm.era
    if era is None:
        return tuple(targets)
    bad = [t for t in targets if t.split(":")[0] not in era.all_targets]
    if bad:
        raise UsageError(
            f"ROCm {build.rocm.version}'s compilers do not build {', '.join(bad)} (release era "
            f"{era.name}, gpus.toml); valid: {', '.join(sort_targets(era.all_targets))}",
            hint="pick targets with --gfx, or a ROCm release whose era builds them")
    return tuple(targets)


# TheRock splits its torch into a host wheel and one device package per gfx, named
# amd-torch-device-<gfx> at torch's version (ROCm/TheRock@89553ce37
# .github/workflows/multi_arch_build_portable_linux_pytorch_wheels.yml --device-package-prefix,
# RELEASES.md "amd-torch-device-gfx1100==2.11.0+...")
TORCH_DEVICE_PREFIX = "amd-torch-device-"


def device_extras(build: Build, targets: Sequence[str]) -> tuple[str, ...]:
    """``device-<gfx>`` extras of a multi-arch index, one per processor (features such as
    ``:xnack+`` stripped); a target without a rocm-sdk-device package is a ``UsageError``."""
    procs = tuple(dict.fromkeys(t.split(":")[0] for t in targets))
    era = build.rocm.era
    if era is not None:
        missing = [p for p in procs if p not in era.targets]
        if missing:
            raise UsageError(
                f"ROCm {build.rocm.version}'s multi-arch index has no rocm-sdk-device package "
                f"for {', '.join(missing)}; valid: {', '.join(sort_targets(era.targets))}")
    return tuple(f"device-{p}" for p in procs)


def with_extras(requirement: str, extras: Sequence[str]) -> str:
    """``rocm[libraries,devel]>1.0`` + ``device-gfx942`` -> ``rocm[libraries,devel,device-gfx942]>1.0``."""
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?(.*)$", requirement, re.S)
    if m is None:
        raise UsageError(f"not a requirement: {requirement!r}")
    have = [e.strip() for e in (m[2] or "").split(",") if e.strip()]
    merged = list(dict.fromkeys([*have, *extras]))
    return f"{m[1]}[{','.join(merged)}]{m[3]}" if merged else f"{m[1]}{m[3]}"


def choose_family(matrix: Matrix, build: Build, targets: Sequence[str], wanted: str | None) -> str:
    """The family whose per-family index serves the requested targets: one that covers them
    all (the release's default first, then the narrowest), else (the SDK's libraries then
    serve part of them; its compiler builds for every target) the one serving the most of
    them, the default family on a tie, then the narrowest (the default family when none
    serves any)."""
    fams = served_families(matrix, build)
    era = f" by ROCm {build.rocm.version}'s index" if build.rocm.families else ""
    procs = {t.split(":")[0] for t in targets}
    if wanted:
        if wanted not in fams:
            raise UsageError(f"unknown GPU family {wanted!r}{era}; valid: "
                             f"{', '.join(sorted(fams))}", nearest=suggestion(wanted, fams))
        return wanted
    # the release's default, then the narrowest family (gfx90a before the older gfx90X-dcgpu)
    others = sorted(fams, key=lambda f: (len(fams[f]), f))
    candidates = [build.rocm.default_family, *others]
    for name in candidates:
        if procs <= set(fams[name]):
            return name
    best = max(candidates, key=lambda f: (len(procs & set(fams[f])), f == build.rocm.default_family))
    if not procs & set(fams[best]):
        best = build.rocm.default_family
    return best


def default_targets(matrix: Matrix, build: Build, options: Options) -> tuple[str, ...]:
    """``--gfx``, else the package version's own defaults for this ROCm (as upstream builds
    it), else the release's default family; every one must be one the release's compilers
    build (``buildable``)."""
    return buildable(build, options.gfx or build.pkg_version.targets_for(build.rocm.version)
                     or served_families(matrix, build)[build.rocm.default_family])


def _partial(matrix: Matrix, build: Build, options: Options, family: str) -> str:
    served = set(served_families(matrix, build)[family])
    outside = [t for t in default_targets(matrix, build, options) if t.split(":")[0] not in served]
    return (f"; its libraries do not serve {', '.join(outside)}, its compiler builds for them"
            if outside else "")


def sources_for(matrix: Matrix, build: Build, options: Options) -> Sources:
    targets = default_targets(matrix, build, options)
    provider = sdk_provider(build, options)
    sdk = build.rocm.sdk
    if options.index_url is not None:
        check_location(options.index_url, allow_insecure=options.allow_insecure_index)
    for url in options.find_links:
        check_location(url, allow_insecure=options.allow_insecure_index, what="find-links value")
    channel = channel_for(build, options)
    therock_torch = bool(build.pkg_version.torch) and build.torch_source.kind == "therock"
    if provider != "pip" and not therock_torch:
        channel = None  # nothing installs from TheRock: a system SDK and another torch
    channel_url = options.index_url or sdk.url_for(channel)  # the SDK's and TheRock's torch
    family, sdk_index, spec, layout = (
        _pip_sdk(matrix, build, options, targets, channel, channel_url) if provider == "pip"
        else (None, None, None, None))
    system_version = sdk.version if provider == "system" else None
    if not build.pkg_version.torch:  # a package that needs no torch (the bundled sample)
        return Sources(provider, layout, family, sdk_index, spec, tuple(options.find_links),
                       "", (), system_version, channel=channel)
    torch_spec, torch_args, pins = _torch_install(matrix, build, options, targets, family,
                                                  channel_url, spec)
    return Sources(provider, layout, family, sdk_index, spec, tuple(options.find_links),
                   torch_spec, torch_args, system_version, pins, channel)


def _pip_sdk(matrix: Matrix, build: Build, options: Options, targets: tuple[str, ...],
             channel: str | None, index: str | None) -> tuple[str | None, str, str, str]:
    """A pip SDK's family (None: multi-arch), index, requirement and layout."""
    sdk = build.rocm.sdk
    spec = sdk.spec_for(channel) or "rocm[libraries,devel]>1.0"
    if not index:
        why = f" ({sdk.note})" if sdk.note else ""
        raise UsageError(f"ROCm {build.rocm.version} has no pip SDK index in the matrix{why}; "
                         "give --index-url or use --rocm-from system")
    layout = sdk.layout or "per-family"
    if layout == "multi-arch":
        if options.family:
            raise UsageError(
                f"--family {options.family}: ROCm {build.rocm.version}'s SDK is multi-arch "
                "(one index for every GPU, device code chosen per gfx id), not per-family",
                hint="use --gfx (a gfx id or family name, e.g. --gfx gfx942)")
        # a folder; its query stays a query
        return None, join_path(index), with_extras(spec, device_extras(build, targets)), layout
    family = choose_family(matrix, build, targets, options.family)
    return family, join_path(index, family), spec, layout


def _torch_install(matrix: Matrix, build: Build, options: Options, targets: tuple[str, ...],
                   family: str | None, channel_url: str | None, sdk_spec: str | None,
                   ) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """torch's requirement, its index arguments and the requirements pinned with it."""
    src = build.torch_source
    torch_args: list[str] = []
    torch_url = channel_url if src.kind == "therock" else src.index_url
    if torch_url:
        url = torch_url
        if src.per_family:
            torch_family = family or choose_family(matrix, build, targets, options.family)
            url = join_path(url, torch_family)
        torch_args += ["--index-url", url]
        if src.kind != "pytorch":
            torch_args += ["--extra-index-url", PYPI]
    if src.find_links:
        torch_args += ["--find-links", src.find_links]
    if not src.device_extras:
        return src.spec, tuple(torch_args), ()
    # split torch: host wheel + amd-torch-device-<gfx> per target
    extras = device_extras(build, targets)
    # named as well as asked for by extra: an extra torch lacks (TheRock built no device
    # package for that gfx) is only a warning to pip and uv, a missing requirement fails
    # (a device package's version is its torch's: RELEASES.md, so torch's range pins it)
    versions = re.sub(r"^\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(\[[^\]]*\])?", "", src.spec)
    pins = ((sdk_spec,) if sdk_spec else ()) \
        + tuple(TORCH_DEVICE_PREFIX + e.removeprefix("device-") + versions for e in extras)
    return with_extras(src.spec, extras), tuple(torch_args), pins


def uv_index_args(pip_args: Sequence[str]) -> tuple[str, ...]:
    """pip's index options in uv's terms. pip weighs every index alike; uv prefers
    ``--extra-index-url`` over ``--index-url``, which would let PyPI's CUDA torch win over
    TheRock's. ``--index A --default-index B`` keeps A (the torch source) first. ``pip_args``
    are option-value pairs (a dangling option is a ``ValueError``)."""
    out: list[str] = []
    for opt, val in zip(pip_args[::2], pip_args[1::2], strict=True):
        if opt == "--index-url":
            out += ["--index", val]
        elif opt == "--extra-index-url":
            out += ["--default-index", val] if val == PYPI else ["--index", val]
        else:
            out += [opt, val]
    return tuple(out)


def _lock_for(matrix: Matrix, build: Build, options: Options, sources: Sources) -> str | None:
    """The lock path to install from, None without one; a stale lock is a ``UsageError``."""
    if options.no_lock:
        return None
    name = lock_name(matrix, build)
    ref = find_lock(options.locks, name)
    if ref is None:
        return None
    if ref.inputs != inputs_hash(build, sources):
        why = "has no toolkit header" if ref.inputs is None else "is stale (the matrix or options changed)"
        raise UsageError(
            f"lock {ref.path} {why}",
            hint=f"nox -s lock-{build.python}-rocm{build.rocm.version} to regenerate it, "
                 "or --no-lock",
        )
    return ref.path


def _origin(src: Sources, options: Options) -> str:
    """Where the SDK comes from, for the plan: "TheRock's stable channel <url> (rocm...)"."""
    if options.index_url or src.channel is None:
        return f"the index {src.sdk_index} ({src.sdk_spec})"
    return (f"TheRock's {src.channel} channel {src.sdk_index} ({src.sdk_spec}"
            + ("; pre-releases allowed" if src.allows_prereleases else "; releases only") + ")")


def provision_steps(
    matrix: Matrix, build: Build, options: Options, host: HostFacts, layout: Layout
) -> tuple[list[Step], RocmPaths, str | None]:
    """The provisioning steps of ``build``; the SDK paths they make known; the SDK family."""
    src = sources_for(matrix, build, options)
    env_dir = str(layout.env_dir(build))
    env_python = str(layout.env_python(build))
    interp = host.interpreters.get(build.python, f"python{build.python}")
    lock = _lock_for(matrix, build, options, src)
    found_where = ("" if os.path.isabs(interp)
                   else f"; {interp} is looked up at execution (PATH, pyenv, /opt/python, uv)")

    # a stable channel holds releases only: resolved without pre-releases (uv's default)
    uv_install = (host.uv, "pip", "install", "--python", env_python,
                  *(("--prerelease=allow",) if src.allows_prereleases else ()))
    locked = ("--require-hashes", "--index-strategy", "unsafe-best-match",
              *src.index_args(), "-r", lock) if lock else ()
    if src.provider == "pip":
        steps = _pip_sdk_steps(matrix, build, options, src, env_python, uv_install, locked, lock)
        rocm_paths = RocmPaths.learned()
    elif build.rocm.sdk.provider == "none":  # a CPU variant (the sample): no ROCm at all
        steps = []
        rocm_paths = RocmPaths.system(host.system_rocm.root if host.system_rocm else "/opt/rocm")
    else:
        # the root the caller discovered (HostFacts.system_rocm), else the conventional
        # /opt/rocm; execution verifies it is there and that its version matches
        root = host.system_rocm.root if host.system_rocm else "/opt/rocm"
        rocm_paths = RocmPaths.system(root)
        steps = [_system_sdk_step(build, options, src, root)]

    if build.pkg_version.torch:
        steps += _torch_steps(matrix, build, options, src, env_python, uv_install, locked)

    if src.provider == "pip" and src.layout == "multi-arch":
        steps.append(Step(names.ROCM_SDK_INIT, INIT_WHY,
                          Command((env_python, "-m", "rocm_sdk", "init")), reuse_env=True))

    definition = hashlib.sha256(json.dumps(
        [build.python, interp, *(s.as_json() for s in steps)], sort_keys=True).encode()
    ).hexdigest()
    head = [Step(
        names.CHECK_ENV,
        f"find the Python {build.python} interpreter; reuse the environment for ROCm "
        f"{build.rocm.version} while its stamp matches{found_where}",
        CheckEnv(env_dir, build.python, interp, definition, lock),
    )]
    probes = _probes(src, lock)
    if probes:
        head.append(Step(names.PROBE_INDEXES, "fail fast when a package index is unreachable "
                         "or lacks its project (before the environment is touched)",
                         ProbeIndexes(probes), reuse_env=True))
    head.append(Step(names.CREATE_ENV, f"create the Python {build.python} environment",
                     CreateEnv(env_dir, host.uv), reuse_env=True))
    tail = Step(names.MARK_ENV_READY, "mark the environment ready (only after every step above)",
                MarkEnvReady(env_dir), reuse_env=True)
    return [*head, *steps, tail], rocm_paths, src.family


def _system_sdk_step(build: Build, options: Options, src: Sources, root: str) -> Step:
    expected = src.system_version or build.rocm.version
    return Step(
        names.INSTALL_ROCM_SDK,
        f"use the system ROCm install at {root} (expected {expected}; "
        "toolkit.env.rocm.find_system looks at ROCM_PATH, /opt/rocm, /opt/rocm-X.Y.Z, "
        "hipcc on PATH)",
        UseSystemRocm(root, expected, options.allow_rocm_mismatch),
        reuse_env=True,
    )


def _pip_sdk_steps(matrix: Matrix, build: Build, options: Options, src: Sources, env_python: str,
                   uv_install: tuple[str, ...], locked: tuple[str, ...], lock: str | None,
                   ) -> list[Step]:
    """install-rocm-sdk from a pip index (and TheRock's self-test when asked for)."""
    assert src.sdk_index and src.sdk_spec
    tools = {"PATH": TOOLS_PATH}
    family_env = {"ROCM_SDK_TARGET_FAMILY": src.family} if src.family else {}
    links = [a for fl in src.find_links for a in ("--find-links", fl)]
    # `--refresh-package rocm` is TheRock's `pip cache remove rocm`: the rocm sdist
    # picks its GPU family when it is built, so a cached build must never be reused.
    argv = (*uv_install, "--refresh-package", "rocm",
            *(locked or ("--index-url", src.sdk_index, *links, src.sdk_spec)))
    steps = [Step(
        names.INSTALL_ROCM_SDK,
        f"install the ROCm {build.rocm.version} SDK from {_origin(src, options)}"
        + (f" (family {src.family}{_partial(matrix, build, options, src.family)})"
           if src.family else " (multi-arch)")
        + (f"; {build.rocm.sdk.note}" if build.rocm.sdk.note and not options.index_url else "")
        + (f", locked by {lock}" if lock else ""),
        InstallSdk(Command(argv, env=MappingProxyType({**tools, **family_env})), env_python,
                   build.rocm.version, options.allow_rocm_mismatch),
        reuse_env=True,
    )]
    if options.rocm_sdk_test:
        steps.append(Step(names.ROCM_SDK_TEST, "TheRock's own SDK self-test (`rocm-sdk test`)",
                          Command((env_python, "-m", "rocm_sdk", "test")), reuse_env=True))
    return steps


def _torch_steps(matrix: Matrix, build: Build, options: Options, src: Sources, env_python: str,
                 uv_install: tuple[str, ...], locked: tuple[str, ...]) -> list[Step]:
    """install-torch, after pin-torch when torch comes from a find-links page."""
    tools = {"PATH": TOOLS_PATH}
    steps: list[Step] = []
    if locked:
        torch_argv = (*uv_install, *locked)
    else:
        # uv's default (the first index that has torch wins) keeps PyPI's CUDA torch out
        # when torch comes from an index. A find-links page is weighed together with PyPI,
        # whose newer CUDA torch could win: pin-torch first installs torch alone from that
        # page (no index at all), then install-torch keeps it and adds its dependencies.
        pairs = zip(src.torch_args[::2], src.torch_args[1::2], strict=False)
        links = [val for opt, val in pairs if opt == "--find-links"]
        if links:
            steps.append(Step(
                names.PIN_TORCH,
                f"install torch alone from {', '.join(links)} (--no-index: no other source "
                "is weighed, so PyPI's CUDA torch can never win)",
                Command((*uv_install, "--no-deps", "--no-index",
                         *(a for link in links for a in ("--find-links", link)),
                         src.torch_spec), env=MappingProxyType(dict(tools))),
                reuse_env=True,
            ))
        torch_argv = (*uv_install, *uv_index_args(src.torch_args), src.torch_spec,
                      *src.torch_pins)
    steps.append(Step(
        names.INSTALL_TORCH,
        f"install torch {build.pkg_version.torch} for ROCm {build.rocm.version} "
        f"({build.torch_source.kind} build"
        + ("; split: a host wheel plus the device packages of "
           + ", ".join(device_extras(build, default_targets(matrix, build, options)))
           + ", with the SDK it pins" if build.torch_source.device_extras else "")
        + (f"; {build.torch_source.note}" if build.torch_source.note else "") + ")",
        InstallTorch(Command(torch_argv, env=MappingProxyType(dict(tools))), env_python,
                     build.rocm.hip, build.rocm.version, options.allow_rocm_mismatch),
        reuse_env=True,
    ))
    return steps


def _probes(src: Sources, lock: str | None) -> tuple[IndexProbe, ...]:
    out: list[IndexProbe] = []
    if src.provider == "pip" and src.sdk_index:
        out.append(IndexProbe(src.sdk_index, None if lock else "rocm", "ROCm SDK index"))
    args = list(src.torch_args)
    for opt, val in zip(args[::2], args[1::2], strict=False):
        if opt == "--index-url":
            out.append(IndexProbe(val, None if lock else "torch", "torch index"))
    for link in [*src.find_links, *(v for o, v in zip(args[::2], args[1::2], strict=False)
                                    if o == "--find-links")]:
        out.append(IndexProbe(link, None, "find-links location"))
    seen: set[tuple[str, str | None]] = set()
    unique = []
    for p in out:
        if (p.url, p.project) not in seen:
            seen.add((p.url, p.project))
            unique.append(p)
    return tuple(unique)
