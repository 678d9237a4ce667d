"""Run a real setup.py the way ``python -m build --wheel --no-isolation`` does: through
setuptools' PEP 517 backend, first ``get_requires_for_build_wheel`` then ``build_wheel``,
with the config settings a recipe's ``--config-setting``/``-C`` options make. The doubles
(tests/upstream/doubles, on PYTHONPATH) stop the run at ``setup()`` and record it.

Usage: python harness.py CONFIG_JSON  (keys: dir, outdir, config_settings)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import setuptools
from _record import Recorded, record, record_setup


def _setup(**kwargs: object) -> None:
    record_setup(kwargs)


_real_run = subprocess.run


def _run(args: Any, *a: Any, **kw: Any) -> Any:
    """``git submodule ...`` is recorded, not run (the sources here are a plain export)."""
    argv = list(args) if isinstance(args, list | tuple) else [str(args)]
    if argv[:2] == ["git", "submodule"] or argv[:2] == ["pip", "install"]:
        record("subprocess", argv=argv)
        return subprocess.CompletedProcess(argv, 1, "", "")
    return _real_run(args, *a, **kw)


def main() -> int:
    cfg = json.loads(sys.argv[1])
    os.chdir(cfg["dir"])
    sys.path.insert(0, cfg["dir"])
    for name in cfg.get("unimportable", ()):
        # apex 1.8's op_builder tries `import apex.op_builder`, which imports the whole apex
        # package (torch.nn, amp ...): far beyond the torch double. Made to fail, as its
        # `except ImportError` expects, op_builder loads its builders from its own folder.
        sys.modules[name] = None  # type: ignore[assignment]
    setuptools.setup = _setup  # apex calls setuptools' setup(); fbgemm_gpu skbuild's (double)
    subprocess.run = _run  # type: ignore[assignment]
    from setuptools import build_meta

    for phase in ("requires", "wheel"):
        record("phase", phase=phase)
        try:
            if phase == "requires":
                build_meta.get_requires_for_build_wheel(cfg["config_settings"])
            else:
                build_meta.build_wheel(cfg["outdir"], cfg["config_settings"])
        except Recorded:
            continue
        except SystemExit as exc:
            record("exit", code=str(exc.code))
        except Exception as exc:
            import traceback

            where = traceback.extract_tb(exc.__traceback__)[-3:]
            record("error", error=f"{type(exc).__name__}: {exc}",
                   at=[f"{f.filename}:{f.lineno}" for f in where])
    return 0


if __name__ == "__main__":
    sys.exit(main())
