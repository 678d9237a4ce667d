"""A failed build, reproduced or not: the verdict ``repro`` gives for a failed manifest.

A manifest whose outcome is ``failed`` names the step and, from schema 5 on, the failure's
signature (``toolkit.run.failure``). Repro runs the build here up to and including that step
and compares what happened with what CI recorded:

- ``reproduced: <step> failed here as in CI (exit N)``, with the matching signature lines
  (exit 0): the same step failed, and its normalized signature holds the same lines
  (``toolkit.run.signature.compare``; raw log text is never compared);
- ``not reproduced: <step> passed here`` (exit 1);
- ``not reproduced: <step> failed differently`` (exit 1), both signatures shown, each line
  marked as CI's only (``-``), here only (``+``) or both (`` ``);
- ``not reproduced: <step> not reached here: <other> failed (exit N)`` (exit 1).

A schema-4 manifest records no signature: the step alone decides, and the verdict says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolkit.run.signature import compare


@dataclass(frozen=True)
class Failure:
    """What a failed run recorded: the step, the toolkit's exit code, the signature."""

    step: str
    exit_code: int | None
    signature: tuple[str, ...]
    recorded_signature: bool = True  # False: a schema-4 manifest (no ``failure`` object)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Failure | None:
        """The manifest's failure; None unless its outcome is ``failed``."""
        if data.get("outcome") != "failed":
            return None
        rec = data.get("failure")
        if isinstance(rec, dict):
            return cls(str(rec["step"]), int(rec["exit_code"]),
                       tuple(str(s) for s in rec.get("signature") or ()))
        step = data.get("failed_step")
        return cls(str(step) if step else "-", None, (), recorded_signature=False)


@dataclass(frozen=True)
class Verdict:
    reproduced: bool
    lines: tuple[str, ...]

    @property
    def exit_code(self) -> int:
        return 0 if self.reproduced else 1

    @property
    def headline(self) -> str:
        return self.lines[0]


def _exit(code: int | None) -> str:
    return f"exit {code}" if code is not None else "exit not recorded"


def judge(recorded: Failure, here: Failure | None, steps_run: Sequence[str]) -> Verdict:
    """Compare CI's failure with what this run did (``here`` None: every step in
    ``steps_run`` passed)."""
    if here is None:
        return Verdict(False, (f"not reproduced: {recorded.step} passed here "
                               f"(CI: {_exit(recorded.exit_code)})",
                               *(f"  CI: {s}" for s in recorded.signature)))
    if here.step != recorded.step:
        return Verdict(False, (
            f"not reproduced: {recorded.step} not reached here: {here.step} failed "
            f"({_exit(here.exit_code)})",
            *(f"  here: {s}" for s in here.signature),
            *(f"  CI:   {s}" for s in recorded.signature)))
    if not recorded.recorded_signature:
        return Verdict(True, (f"reproduced: {recorded.step} failed here as in CI "
                              f"({_exit(here.exit_code)}); the manifest (schema 4) records "
                              "no signature: matched on the step only",
                              *(f"  here: {s}" for s in here.signature)))
    if not recorded.signature and not here.signature:
        same = recorded.exit_code == here.exit_code
        return Verdict(same, (f"{'reproduced' if same else 'not reproduced'}: "
                              f"{recorded.step} failed here (CI {_exit(recorded.exit_code)}, "
                              f"here {_exit(here.exit_code)}); neither output holds a "
                              "signature: matched on the step and exit code",))
    match = compare(recorded.signature, here.signature)
    if match.same:
        return Verdict(True, (f"reproduced: {recorded.step} failed here as in CI "
                              f"({_exit(here.exit_code)})",
                              *(f"  {s}" for s in match.common)))
    return Verdict(False, (
        f"not reproduced: {recorded.step} failed differently (CI {_exit(recorded.exit_code)}, "
        f"here {_exit(here.exit_code)}; - CI only, + here only)",
        *side_by_side(recorded.signature, here.signature)))


def side_by_side(recorded: Sequence[str], here: Sequence[str]) -> list[str]:
    """Both signatures, CI's then here's, each line marked ``-`` (CI only), ``+`` (here
    only) or blank (both)."""
    match = compare(recorded, here)
    common = set(match.common)
    out = ["  in CI:"] + [f"  {' ' if s in common else '-'} {s}" for s in recorded]
    out += ["  here:"] + [f"  {' ' if s in common else '+'} {s}" for s in here]
    if not recorded:
        out.insert(1, "    (no signature recorded)")
    if not here:
        out.append("    (no signature here)")
    return out
