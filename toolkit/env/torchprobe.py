"""What torch an environment holds: version, the HIP it was built with, its lib/ folder."""

from __future__ import annotations

import json
from typing import Any

from toolkit.core.errors import EnvironmentProblem
from toolkit.core.proc import run
from toolkit.env.rocm import major_minor

_TORCH_PROBE = (
    "import json, os, torch; "
    "print(json.dumps({'version': torch.__version__, 'hip': torch.version.hip, "
    "'lib': os.path.join(os.path.dirname(torch.__file__), 'lib')}))"
)


def torch_info(python: str) -> dict[str, Any]:
    res = run([python, "-c", _TORCH_PROBE], timeout=300, check=False)
    if not res.ok:
        raise EnvironmentProblem(f"torch does not import in {python}: {res.last_line()}")
    try:
        data = json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise EnvironmentProblem(f"torch in {python} printed no version facts") from None
    if not isinstance(data, dict):
        raise EnvironmentProblem(f"torch in {python} printed no version facts")
    return data


def check_torch_hip(version: str, hip: str | None, session_hip: str, rocm: str,
                    allow: bool) -> str | None:
    """torch.version.hip major.minor must equal the session's HIP (one-line error otherwise);
    with ``allow`` the mismatch comes back as a warning to show."""
    if hip is None:
        msg = (f"torch {version} is not a ROCm build (torch.version.hip is None, a CPU/CUDA "
               f"build); ROCm {rocm} needs torch built with HIP {session_hip}")
    elif major_minor(hip) != session_hip:
        msg = (f"torch {version} was built with HIP {hip} ({major_minor(hip)}) but ROCm {rocm} "
               f"needs HIP {session_hip}")
    else:
        return None
    if allow:
        return f"{msg}; continuing because of --allow-rocm-mismatch"
    raise EnvironmentProblem(msg, hint="fix the torch source in rocm.toml, or pass "
                                       "--allow-rocm-mismatch")
