"""A failed pip-compile's one line shows its error, not its progress: pip-compile writes what
went wrong to stderr, and may have written progress to stdout before. The pip-compile here is
a real executable in the place the toolkit's pip-tools environment puts it, which exits as
pip-compile does on an unresolvable requirement (exit 2, the reason last on stderr)."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest

from toolkit.core.errors import StepFailed
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.provision import sources_for
from toolkit.plan.recipes import load_matrix
from toolkit.run.lockfiles import compile_lock

ERROR = "ERROR: Could not find a version that satisfies the requirement torch==9.9"


def test_the_line_names_pip_compiles_error(tmp_path: Path) -> None:
    m = load_matrix()
    build = next(b for b in m.builds if b.rocm.version != "cpu")
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    tool = (layout.cache / "tools" / f"pip-tools-{version('pip-tools')}-py{build.python}" / "bin"
            / "pip-compile")
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho 'Resolving dependencies...'\necho 'Looking in indexes: x'\n"
                    f"echo '{ERROR}' >&2\nexit 2\n")
    tool.chmod(0o755)
    with pytest.raises(StepFailed) as caught:
        compile_lock(build, sources_for(m, build, Options()), interpreter="/usr/bin/python3",
                     layout=layout, name="x.txt")
    message = str(caught.value)
    assert message.startswith("pip-compile failed for x.txt (exit 2): "), message
    assert message.endswith(ERROR), message
    assert "Looking in indexes" not in message
    assert not (layout.locks() / "x.txt").exists()
