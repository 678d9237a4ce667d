"""`python -m toolkit check`: inspect wheels (or folders of libraries) before shipping them."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolkit.core.errors import DataError
from toolkit.core.gfx import TargetId, expand, parse_target, split_tokens, unknown_processors
from toolkit.core.text import escape as escape_text
from toolkit.core.text import quoted

if TYPE_CHECKING:
    from toolkit.inspect.report import Finding, LibraryResult, Report, WheelResult


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="check wheels: manylinux policy, undefined/required symbols, GPU targets, hygiene",
        description=(
            "Check wheels or folders of .so files: symbol versions against manylinux policies, "
            "undefined symbols across the wheel, --with libraries and the system, required "
            "symbols, GPU code targets and packaging hygiene. Exit 0 ok, 1 check failed, "
            "2 bad input."
        ),
    )
    p.add_argument("paths", nargs="+", metavar="WHEEL_OR_DIR", help="wheels, folders or .so files")
    for flags, settings in _options():
        p.add_argument(*flags, **settings)
    p.set_defaults(func=run)


def _repeatable(metavar: str, help_text: str, dest: str | None = None) -> dict[str, Any]:
    """An option given any number of times, gathered into a list."""
    return {"action": "append", "default": [], "metavar": metavar, "help": help_text,
            **({"dest": dest} if dest else {})}


def _options() -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """check's options in --help order: (flags, add_argument keywords)."""
    return [
        (("--gfx",), _repeatable(
            "TARGETS",
            "gfx ids or family names (comma separated, repeatable) every GPU library must carry code for")),
        (("--policy",), {"metavar": "POLICY",
                         "help": "require this manylinux policy (e.g. manylinux_2_28) for every input"}),
        (("--with",), _repeatable(
            "PATH",
            "more libraries to resolve against: a folder (torch/lib, ROCm lib/), a library or a wheel; "
            "repeatable", dest="with_paths")),
        (("--require-symbol",), _repeatable(
            "SYM",
            "a demangled name some library must define, e.g. 'fbgemm_gpu::jagged_2d_to_dense'; repeatable",
            dest="required")),
        (("--allow-bundled",), _repeatable(
            "NAME", "allow this torch/ROCm library inside the wheel (name or glob)")),
        (("--exclude",), _repeatable(
            "PATTERN",
            "a needed library (soname glob, as auditwheel repair --exclude) to leave unchecked; repeatable")),
        (("--jobs",), {"type": _jobs, "default": None, "help": "worker processes (default: CPUs)"}),
        (("--max-member-size",), {"type": _size, "default": None, "metavar": "SIZE",
                                  "help": "refuse a member declaring more inflated bytes (default 4G)"}),
        (("--max-total-size",), {
            "type": _size, "default": None, "metavar": "SIZE",
            "help": "refuse members past this many inflated bytes in all (default 16G)"}),
        (("--max-ratio",), {"type": _ratio, "default": None, "metavar": "N",
                            "help": "refuse a member over 64M that inflates more than N:1 (default 200)"}),
        (("--json",), {"action": "store_true", "help": "print one JSON object (every finding)"}),
        (("-v", "--verbose"), {"action": "store_true",
                               "help": "every library, every finding and each library's GPU code objects"}),
    ]


def _size(text: str) -> int:
    """``4G``, ``512M``, ``64K`` or a number of bytes."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    try:
        n = int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"bad size {quoted(text)}: expected e.g. 4G, 512M or "
                                         "bytes") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"bad size {quoted(text)}: a size is not negative "
                                         "(e.g. 4G, 512M or bytes)")
    return n


def _ratio(text: str) -> float:
    """A ratio budget: a positive finite number."""
    try:
        n = float(text)
    except ValueError:
        n = float("nan")
    if not math.isfinite(n) or n <= 0:
        raise argparse.ArgumentTypeError(f"bad ratio {quoted(text)}: expected a positive number, "
                                         "e.g. 200")
    return n


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"bad job count {quoted(text)}: expected 1 or more")
    return n


def expand_targets(tokens: Sequence[str], warnings: list[str] | None = None) -> list[TargetId]:
    """gfx ids and (when the matrix is available) family names -> target ids.

    Any well-formed gfx id is accepted; one that no family of ``gpus.toml`` lists adds a line
    to ``warnings``. Malformed ids and unknown family names are ``UsageError``s. When the
    matrix data cannot be loaded, only plain gfx ids are accepted (a family name is then a
    bad gfx id).
    """
    if not tokens:
        return []
    words = split_tokens(tokens)
    from toolkit.plan.recipes import load_matrix

    try:
        matrix = load_matrix()
    except (DataError, OSError):
        return [parse_target(w) for w in words]
    known = matrix.known_targets
    ids = expand(words, matrix.family_targets, known, accept_unknown=True)
    if warnings is not None:
        warnings += [
            f"{p} belongs to no GPU family the toolkit knows (toolkit/data/gpus.toml); "
            "checked as given"
            for p in unknown_processors(ids, known)
        ]
    return [parse_target(t) for t in ids]


def run(args: argparse.Namespace) -> int:
    from toolkit.inspect.checks import check_paths
    from toolkit.inspect.readers.wheelzip import Budget

    warnings: list[str] = []
    targets = expand_targets(args.gfx, warnings)
    report = check_paths(
        args.paths,
        targets=targets,
        policy=args.policy,
        with_paths=args.with_paths,
        required_symbols=args.required,
        allow_bundled=args.allow_bundled,
        excludes=args.exclude,
        jobs=args.jobs,
        budget=Budget(args.max_member_size, args.max_total_size, args.max_ratio),
    )
    for w in warnings:
        sys.stderr.write(f"warning: {w}\n")
    if args.json:
        json.dump(report.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        show(report, verbose=args.verbose)
    return 0 if report.ok else 1


LIST = 6  # names shown in a list before "and N more"
ROWS = 25  # library rows shown without --verbose
PREFIXES = ("GLIBC", "GLIBCXX", "CXXABI", "GCC")


def _names(items: Sequence[str], verbose: bool) -> str:
    if verbose or len(items) <= LIST:
        return ", ".join(items)
    return ", ".join(items[:LIST]) + f" and {len(items) - LIST} more"


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _built_against(b: dict[str, Any]) -> str:
    parts = []
    if b.get("hip_runtime"):
        major = b.get("rocm_major")
        parts.append(f"HIP runtime {', '.join(b['hip_runtime'])} (ROCm {major})")
    if b.get("torch"):
        parts.append("torch" + (" with HIP (libc10_hip/libtorch_hip)" if b.get("torch_hip") else ""))
    if b.get("rocm_libraries"):
        parts.append("ROCm libraries " + ", ".join(b["rocm_libraries"]))
    return "; ".join(parts) or "no HIP runtime, torch or ROCm library"


def lines(wheel: WheelResult, verbose: bool = False) -> list[str]:
    """The text report of one input: the picture first, then libraries, then findings."""
    title = wheel.path if wheel.name is None else f"{wheel.name} {wheel.version}  ({wheel.path})"
    hosts = [lib for lib in wheel.libraries if lib.kind not in ("gpu-code-object", "unreadable")]
    objs = [lib for lib in wheel.libraries if lib.kind == "gpu-code-object"]
    out = [title, _count_line(wheel, hosts, objs), *_target_lines(wheel), *_archive_lines(wheel),
           *_gpu_cpu_lines(wheel, verbose)]
    out.append(f"  built against: {_built_against(wheel.built_against)}")
    out += _table_lines(wheel, hosts, verbose)
    if verbose:
        out += [f"  code object  {', '.join(lib.gpu_targets):<24} {lib.path}" for lib in objs]
    out += _finding_lines(wheel.findings, verbose)
    out.append(verdict_line(wheel))
    return out


def _count_line(wheel: WheelResult, hosts: list[LibraryResult], objs: list[LibraryResult]) -> str:
    """The wheel's tags and how many libraries (with GPU code) and code object files it holds."""
    count = (f"{len(hosts)} native librar{'y' if len(hosts) == 1 else 'ies'} "
             f"({len(wheel.gpu_libraries)} with GPU code)")
    if objs:
        count += f", {len(objs)} GPU code object file{'s' * (len(objs) != 1)}"
    return f"  {', '.join(wheel.tags) or 'files on disk'}: {count}"


def _target_lines(wheel: WheelResult) -> list[str]:
    """Each GPU target with its libraries, code objects and bytes of code, or that there is none."""
    if not wheel.gpu:
        return ["  GPU targets: none (no library carries device code)"]
    return ["  GPU targets (libraries, code objects, bytes of code):"] + [
        f"    {target:<18} {len(tc.libraries):>5} lib  {tc.code_objects:>6} obj  {_bytes(tc.bytes):>10}"
        for target, tc in wheel.gpu.items()
    ]


def _archive_lines(wheel: WheelResult) -> list[str]:
    """Each kpack archive the wheel carries: per target its code objects and stored bytes."""
    return [f"  kpack archive {path}: " + (", ".join(
        f"{t} {c['code_objects']} obj {_bytes(c['bytes'])}" for t, c in per.items()) or "no code objects")
        for path, per in wheel.kpack_archives.items()]


def _gpu_cpu_lines(wheel: WheelResult, verbose: bool) -> list[str]:
    """The GPU libraries grouped by where their device code is, then the CPU-only libraries."""
    by_why: dict[str, list[str]] = {}
    for lib in wheel.gpu_libraries:
        why = ", ".join(sorted({w.split(" in ", 1)[-1] for w in lib.gpu_where}))
        by_why.setdefault(why, []).append(lib.path)
    out = [f"  GPU libraries, device code in {why}: {_names(paths, verbose)}"
           for why, paths in by_why.items()]
    cpu_libs = wheel.cpu_only
    if cpu_libs:
        names = _names([lib.path for lib in cpu_libs], verbose)
        out.append(f"  CPU-only libraries ({len(cpu_libs)}): {names}")
    return out


def _shown_libraries(wheel: WheelResult, hosts: list[LibraryResult], verbose: bool) -> list[LibraryResult]:
    """Every library with --verbose; else the first ROWS, errors first, and always the policy's setter."""
    shown = hosts if verbose else sorted(hosts, key=lambda lib: _row_rank(wheel, lib))[:ROWS]
    setter = next((lib for lib in hosts if lib.path == wheel.policy_library), None)
    if setter is not None and setter not in shown:
        shown = [*shown[: ROWS - 1], setter]  # the library that sets the policy is always shown
    return shown


def _table_lines(wheel: WheelResult, hosts: list[LibraryResult], verbose: bool) -> list[str]:
    """The library table: symbol versions, policy and GPU targets of each shown library."""
    shown = _shown_libraries(wheel, hosts, verbose)
    if not shown:
        return []
    out = ["  " + "  ".join(f"{h:<14}" for h in ("GLIBC", "GLIBCXX", "CXXABI", "GCC", "policy"))
           + "  GPU targets     library"]
    for lib in shown:
        out += _library_row(lib, verbose)
    if len(hosts) > len(shown):
        out.append(f"  ... {len(hosts) - len(shown)} more libraries (--verbose)")
    return out


def _library_row(lib: LibraryResult, verbose: bool) -> list[str]:
    """One library's row; with --verbose, where its device code is and its code objects per target."""
    cells = [lib.symbol_versions.get(p, "-") for p in PREFIXES] + [lib.policy or "-"]
    n = len(lib.gpu_targets)
    gpu = "-" if not n else (", ".join(lib.gpu_targets) if n <= 2 else f"{n} targets")
    out = ["  " + "  ".join(f"{c:<14}" for c in cells) + f"  {gpu:<15} {lib.path}"]
    if verbose:
        out += [f"      {w}" for w in lib.gpu_where]
        out += [f"      {t:<22} {tc.code_objects:>6} obj  {_bytes(tc.bytes):>10}"
                for t, tc in lib.gpu_code.items()]
    return out


def verdict_line(wheel: WheelResult) -> str:
    """The last line: the checks that failed with counts, then the policy as its own verdict."""
    failed = wheel.failed_checks
    head = "FAILED: " + ", ".join(f"{c} {n}" for c, n in failed.items()) if failed else "ok"
    if wheel.policy is None:
        return f"  {head}  policy: -"
    pol_ok = "policy" not in failed
    by = f" (set by {wheel.policy_library})" if wheel.policy_library else ""
    return f"  {head}  policy: {wheel.policy}{by} {'ok' if pol_ok else 'FAILED'}"


def _row_rank(wheel: WheelResult, lib: LibraryResult) -> tuple[int, str]:
    errors = any(f.severity == "error" and lib.path in (f.library, *f.libraries) for f in wheel.findings)
    return (0 if errors else 1, lib.path)


def _finding_lines(findings: Sequence[Finding], verbose: bool) -> list[str]:
    """Findings grouped by check and cause, the libraries of each group listed under it."""
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.severity, f.check, f.cause or f.message), []).append(f)
    out: list[str] = []
    for (severity, check, head), items in groups.items():
        libs = list(dict.fromkeys(x for f in items for x in (f.libraries or (f.library,)) if x))
        if verbose or len(items) == 1:
            for f in items:
                out.append(f"  {severity} [{check}] {f.message}")
                if verbose and len(f.symbols) > 1:
                    out += [f"      {sym}" for sym in f.symbols]
            continue
        out.append(f"  {severity} [{check}] {head}: {len(items)} findings, {len(libs)} libraries")
        if libs:
            out.append(f"      {_names(libs, False)}")
    return out


def show(report: Report, verbose: bool = False) -> None:
    from rich.markup import escape

    from toolkit.cli.console import console

    out = console()
    for wheel in report.wheels:
        for i, line in enumerate(lines(wheel, verbose)):
            style = "bold" if i == 0 else ("red" if line.startswith(("  error", "  FAILED")) else "")
            text = escape(escape_text(line, limit=max(len(line), 1)))  # names from the wheel
            out.print(f"[{style}]{text}[/{style}]" if style else text, highlight=False)
        out.print("")
