"""Asking for a package version recorded as waiting (``toolkit.data.waiting.refuse``): the
refusal names the package, the version and what it awaits, and its hint names the data file
that records it and the command that fills it (``invoke upstream --write``, as the module's
docstring and README's upstream section say). The matrix is a hand-made stand-in holding only
what the module reads (its ``Matrix`` protocol)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from toolkit.core.errors import AwaitsUpstream
from toolkit.data import waiting


def _matrix() -> SimpleNamespace:
    v19 = SimpleNamespace(package="fbgemm_gpu", version="1.9.0", rocm=(), torch_minor="2.14",
                          waiting="awaits torch 2.14 on a ROCm of the matrix")
    v18 = SimpleNamespace(package="fbgemm_gpu", version="1.8.0", rocm=("7.1",), torch_minor="2.13",
                          waiting="")
    return SimpleNamespace(packages={"fbgemm_gpu": SimpleNamespace(name="fbgemm_gpu",
                                                                   versions=(v18, v19))})


@pytest.mark.parametrize("ask", [{"versions": ["1.9.0"]},
                                 {"build_id": "fbgemm_gpu-1.9.0-rocm7.1-py3.12"}])
def test_a_waiting_version_asked_for_says_what_it_awaits_and_what_fills_it(ask: dict[str, object]) -> None:
    with pytest.raises(AwaitsUpstream) as caught:
        waiting.refuse(_matrix(), **ask)  # type: ignore[arg-type]
    err = caught.value
    assert "fbgemm_gpu" in err.message and "1.9.0" in err.message and "awaits torch 2.14" in err.message
    assert err.hint is not None and "fbgemm_gpu.toml" in err.hint and "upstream --write" in err.hint
    assert err.exit_code == 10  # README: 10 awaits upstream


def test_a_version_that_builds_is_not_refused() -> None:
    waiting.refuse(_matrix(), versions=["1.8.0"], build_id="fbgemm_gpu-1.8.0-rocm7.1-py3.12")  # type: ignore[arg-type]
