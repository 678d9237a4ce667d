"""Typed steps: what a build does, every input a field, nothing left to guess.

A ``Step`` is a name, a description and one *action*. Each action is a frozen dataclass
carrying every input its execution needs; the executor (``toolkit.run.executor``) dispatches
on the action's type through one explicit table. What an action does beyond running its
command (reusing an environment, probing an index, removing a stale folder, learning a path)
is part of its definition and shown by ``explain()``, so ``--dry-run`` is the whole truth.

Values may hold placeholders (``{ROCM_ROOT}``, ``{SHA8}``, ``{WHEEL}`` ...) that an earlier
action *learns* at execution time (``PLACEHOLDER_HELP`` names the step that learns each).

By concern: ``env`` (the build environment), ``sources`` (worktree, submodules, a copy),
``wheel`` (build, name, check, smoke, publish), ``variants`` (``--variants``: one wheel variant
per target), ``placeholders`` and ``step`` (``Step`` and the
table of kinds). Every name is importable from ``toolkit.core.steps``.
"""

from __future__ import annotations

from toolkit.core.command import EMPTY as EMPTY
from toolkit.core.command import Command as Command
from toolkit.core.steps.env import CheckEnv as CheckEnv
from toolkit.core.steps.env import CreateEnv as CreateEnv
from toolkit.core.steps.env import IndexProbe as IndexProbe
from toolkit.core.steps.env import InstallSdk as InstallSdk
from toolkit.core.steps.env import InstallTorch as InstallTorch
from toolkit.core.steps.env import MarkEnvReady as MarkEnvReady
from toolkit.core.steps.env import ProbeIndexes as ProbeIndexes
from toolkit.core.steps.env import ProvideLibrary as ProvideLibrary
from toolkit.core.steps.env import UseSystemRocm as UseSystemRocm
from toolkit.core.steps.placeholders import LIB_DIR as LIB_DIR
from toolkit.core.steps.placeholders import PLACEHOLDER_HELP as PLACEHOLDER_HELP
from toolkit.core.steps.sources import CopySources as CopySources
from toolkit.core.steps.sources import FetchSources as FetchSources
from toolkit.core.steps.sources import FetchSubmodules as FetchSubmodules
from toolkit.core.steps.sources import Submodule as Submodule
from toolkit.core.steps.sources import mirror_name as mirror_name
from toolkit.core.steps.step import KIND as KIND
from toolkit.core.steps.step import Action as Action
from toolkit.core.steps.step import Step as Step
from toolkit.core.steps.variants import BuildVariant as BuildVariant
from toolkit.core.steps.variants import MakeVariant as MakeVariant
from toolkit.core.steps.variants import PublishVariant as PublishVariant
from toolkit.core.steps.wheel import SMOKE_JUNIT as SMOKE_JUNIT
from toolkit.core.steps.wheel import BuildWheel as BuildWheel
from toolkit.core.steps.wheel import CheckWheel as CheckWheel
from toolkit.core.steps.wheel import ExpectWheel as ExpectWheel
from toolkit.core.steps.wheel import NameWheel as NameWheel
from toolkit.core.steps.wheel import Publish as Publish
from toolkit.core.steps.wheel import Smoke as Smoke
