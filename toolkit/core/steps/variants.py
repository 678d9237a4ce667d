"""Typed actions of ``--variants`` (issue 31): besides the fat wheel, one build per gfx target
(``PYTORCH_ROCM_ARCH`` that target alone), written as a wheel variant (the PEP 825 draft, as
``variantlib`` 0.2.2 reads it: ``toolkit.core.variants``), checked for that target and
published beside the fat wheel."""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.core.command import Command
from toolkit.core.steps.wheel import BuildWheel
from toolkit.core.variants import DIST_INFO_FILE, FEATURE, NAMESPACE, label_for


@dataclass(frozen=True)
class BuildVariant:
    """Copy the build's worktree (its sources, not its build folders) into the variant's own
    and build the wheel there for ``target`` alone: ``wheel`` is the recipe's build with that
    worktree, that wheelhouse and ``PYTORCH_ROCM_ARCH=<target>``."""

    target: str
    worktree_from: str
    wheel: BuildWheel

    def command(self) -> Command:
        return self.wheel.build

    def explain(self) -> list[str]:
        return [f"copy {self.worktree_from} into {self.wheel.worktree} (rm -rf first; without "
                "build, dist, *.egg-info, __pycache__, .nox: a fresh build tree, so nothing "
                "of another target's build is reused)", *self.wheel.explain()]


@dataclass(frozen=True)
class MakeVariant:
    """Name the one wheel in ``wheelhouse`` as name-wheel does, then write it into
    ``staging`` as the wheel variant of ``target``."""

    target: str
    wheelhouse: str
    staging: str
    rocm: str
    naming: str  # "toolkit" | "upstream"

    def command(self) -> Command | None:
        return None

    def explain(self) -> list[str]:
        label = label_for(self.target)
        return [f"rm -rf {self.staging}; name the wheel of {self.wheelhouse} as name-wheel does, "
                f"then write it there as <name>-<ver>-<py>-<abi>-<plat>-{label}.whl with "
                f".dist-info/{DIST_INFO_FILE} naming {NAMESPACE} :: {FEATURE} :: {label} "
                "(rocm-bootstrap's owner of the target; provider rocm-bootstrap) and RECORD "
                "updated; learn VARIANT_WHEEL"]


@dataclass(frozen=True)
class PublishVariant:
    """Copy the one checked variant wheel of ``staging`` into ``dest`` (atomic), beside the
    fat wheel; then remove the earlier wheels of ``dest`` with the same variant label."""

    target: str
    staging: str
    dest: str

    def command(self) -> Command | None:
        return None

    def explain(self) -> list[str]:
        label = label_for(self.target)
        return [f"rename the wheel variant of {self.staging} into {self.dest}/ (atomic), then "
                f"remove the other wheels of {self.dest}/ labelled -{label} (the fat wheel and "
                "the other variants stay)"]
