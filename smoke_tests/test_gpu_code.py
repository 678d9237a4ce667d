"""Does every installed GPU library carry code for the requested target? (no GPU needed)

Read with the toolkit's checks engine (ELF + offload-bundle readers) from the installed
files themselves.
"""

from __future__ import annotations

import pytest


def _shown(path, site_packages):
    """``path`` relative to the site-packages folder holding it (else as it is)."""
    for sp in site_packages:
        if path.is_relative_to(sp):
            return str(path.relative_to(sp))
    return str(path)


def _code_for(libs, device, shown):
    """(libraries carrying GPU code, why some lack code for ``device``, standalone code
    objects and their targets) of the installed native libraries."""
    from toolkit.inspect.checks import code_runs_on, load_file

    with_code, lacking, code_objects = [], [], []
    for lib in libs:
        info = load_file(lib)
        if not info.gpu_targets:
            continue
        if info.is_gpu_code_object:
            code_objects.append((lib, info.gpu_targets))
            continue
        with_code.append(shown(lib))
        if not any(code_runs_on(code, device) for code in info.gpu_targets):
            lacking.append(f"{shown(lib)} carries only {', '.join(info.gpu_targets)}")
    if code_objects and not any(code_runs_on(c, device) for _, ts in code_objects for c in ts):
        carried = sorted({c for _, ts in code_objects for c in ts})
        lacking.append(f"its standalone code objects carry only {', '.join(carried)}")
    return with_code, lacking, code_objects


def test_gpu_code_for_target(build, target, site_packages):
    from toolkit.core.gfx import parse_target

    if not build.carries_gpu_code:
        pytest.skip(f"{build.id} is a CPU build: it carries no GPU code")
    libs = build.libraries()
    assert libs, f"{build.dist} installed no native library"

    def shown(path):
        return _shown(path, site_packages)

    with_code, lacking, code_objects = _code_for(libs, parse_target(target), shown)
    assert with_code or code_objects, (
        f"no installed library of {build.dist} carries GPU code "
        f"(looked at {', '.join(shown(p) for p in libs)})")
    if lacking:
        pytest.fail(f"no GPU code for {target} (it would fail with hipErrorNoBinaryForGpu on "
                    f"that GPU): " + "; ".join(lacking), pytrace=False)
