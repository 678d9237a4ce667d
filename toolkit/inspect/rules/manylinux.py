"""The manylinux policy and platform-tag rules.

Each host library gets the highest-priority policy its symbol versions allow; a wheel's
policy is the lowest of its libraries'. A library whose versions exceed the policy asked
for with ``--policy`` (else the one the platform tag claims) is an error; native code in
a ``-any`` wheel is an error, a platform tag on a wheel without native code a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from toolkit.core.errors import UsageError
from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.readers.policy import (
    ARCH_OF_MACHINE,
    Policy,
    best_policy,
    get_policy,
    max_versions,
    policy_for_tag,
    version_key,
)
from toolkit.inspect.readers.resolver import Lib
from toolkit.inspect.report import Finding, LibraryResult, WheelResult


def _external_versions(info: ElfInfo, own_files: set[str]) -> list[str]:
    """Versions needed from libraries that are not part of the input itself."""
    return [v for file, vs in info.version_needs.items() if file not in own_files for v in vs]


def library_policy(lr: LibraryResult, info: ElfInfo, own_files: set[str]) -> Finding | None:
    """Fill in a host library's highest versions per prefix and its best policy; a library
    of an architecture no policy knows cannot be judged (an error)."""
    versions = _external_versions(info, own_files)
    lr.max_versions = max_versions(versions)
    arch = ARCH_OF_MACHINE.get(info.machine)
    if arch is None:
        msg = (f"{lr.path} is ELF for machine {info.machine}, which no manylinux policy covers: "
               "its policy cannot be judged")
        return Finding("policy", "error", lr.path, msg, cause="unknown ELF machine: cannot be judged")
    lr.policy = best_policy(versions, arch).name
    return None


def claimed_policy(tags: Iterable[str]) -> tuple[Policy | None, list[Finding]]:
    """The highest-priority policy the wheel's platform tags claim (None if none), and an
    error for each manylinux tag that cannot be judged."""
    claimed: Policy | None = None
    problems: list[Finding] = []
    for plat in sorted({t.split("-")[-1] for t in tags}):
        for part in plat.split("."):
            try:
                pol = policy_for_tag(part)
            except UsageError as err:
                problems.append(Finding("platform-tag", "error", None, f"tag {part}: {err}",
                                        cause="platform tag cannot be judged"))
                continue
            if pol and (claimed is None or pol.priority > claimed.priority):
                claimed = pol
    return claimed, problems


def platform_tag_findings(res: WheelResult) -> list[Finding]:
    """Native code in a ``-any`` wheel (error); a platform tag without native code (warning).
    Libraries that cannot be read count as neither."""
    if not res.tags:
        return []
    native = [lr for lr in res.libraries if lr.kind not in ("unreadable", "gpu-code-object")]
    platforms = {t.split("-")[-1] for t in res.tags}
    out = []
    if platforms == {"any"} and native:
        msg = f"native code ({native[0].path}) in a wheel tagged {', '.join(res.tags)}"
        out.append(Finding("platform-tag", "error", None, msg, cause="native code in a -any wheel"))
    # a library that cannot be read may be native code or not: no "no native code" claim
    unknown = any(lr.kind == "unreadable" for lr in res.libraries)
    if "any" not in platforms and not native and not unknown:
        what = "no host code (only GPU code objects)" if res.libraries else "no native code"
        msg = (
            f"{what}, yet tagged {', '.join(sorted(platforms))}: a redundant "
            "platform variant (a py3-none-any wheel would do)"
        )
        out.append(Finding("platform-tag", "warning", None, msg))
    return out


def check_policy(
    res: WheelResult,
    pairs: Sequence[tuple[Lib, LibraryResult]],
    own_files: set[str],
    *,
    is_wheel: bool,
    required: Policy | None,
) -> Policy | None:
    """Policy findings for every host library and the wheel's resulting policy (the worst of
    its libraries', with the library that sets it); returns the judged policy: ``required``
    (``--policy``), else the one the platform tags claim, else the wheel's own.
    """
    claimed, problems = claimed_policy(res.tags)
    res.findings.extend(problems)
    if is_wheel:
        res.findings.extend(platform_tag_findings(res))
    want = required if required is not None else claimed
    why = "required by --policy" if required is not None else "claimed by the platform tag"
    worst: Policy | None = None
    for lib, lr in pairs:
        if lr.kind == "gpu-code-object" or lr.policy is None or lib.info is None:
            continue
        arch = ARCH_OF_MACHINE[lib.info.machine]
        pol = get_policy(lr.policy, arch)
        if worst is None or pol.priority < worst.priority:
            worst = pol
            res.policy_library = lr.path
        if want is None:
            continue
        try:
            target = get_policy(want.name, arch)
        except UsageError:
            continue
        finding = _violation(lib.path, lib.info, lr.policy, target, why, own_files)
        if finding is not None:
            res.findings.append(finding)
    res.policy = worst.name if worst else None
    return want if want is not None else worst


def _violation(
    path: str, info: ElfInfo, needs_policy: str, target: Policy, why: str, own_files: set[str]
) -> Finding | None:
    """The policy error of one library against ``target`` (None when it complies)."""
    worst_of: dict[str, tuple[str, str]] = {}  # prefix -> (highest bad version, file)
    for file, vs in info.version_needs.items():
        if file in own_files:
            continue
        for v in target.violations(vs):
            prefix = v.partition("_")[0]
            if prefix not in worst_of or version_key(v) > version_key(worst_of[prefix][0]):
                worst_of[prefix] = (v, file)
    if not worst_of:
        return None
    needs = " and ".join(f"{v} (from {file})" for v, file in worst_of.values())
    allows = ", ".join(f"{p}_{target.highest(p)}" for p in worst_of)
    msg = (
        f"{path} needs {needs}, which {target.name} ({why}) does not allow "
        f"(it allows up to {allows}); the library's symbols need {needs_policy}"
    )
    return Finding("policy", "error", path, msg, cause=f"needs more than {target.name} allows")
