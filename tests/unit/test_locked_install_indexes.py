"""An install from a lock names every index and find-links location its SDK and torch come
from, so the hashes pinned in the lock can be found: read back with pip's own install-command
parser (uv pip takes the same options), not with the toolkit's."""

from __future__ import annotations

from pathlib import Path

import pytest
from pip._internal.commands import create_command

from toolkit.core.steps import IndexProbe
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.locks import LockRef, inputs_hash, lock_name
from toolkit.plan.model import Options
from toolkit.plan.provision import PYPI, _probes, provision_steps, sources_for
from toolkit.plan.recipes import load_matrix
from toolkit.plan.sources import Sources


def _pip_reads(args: tuple[str, ...]) -> tuple[str, list[str], list[str]]:
    """(index url, extra index urls, find-links) as ``pip install`` reads ``args``."""
    # isolated: the machine's pip.conf and PIP_* variables left out (pip's --isolated)
    opts, _ = create_command("install", isolated=True).parse_args(["--isolated", *args, "x"])
    return opts.index_url, opts.extra_index_urls, opts.find_links


def test_every_index_and_location_of_sdk_and_torch_is_given_once() -> None:
    src = Sources("pip", "per-family", "gfx94X-dcgpu", "https://sdk.example/v2/gfx94X-dcgpu/",
                  "rocm[libraries,devel]>1.0", ("/links",), "torch==2.8.0",
                  ("--index-url", "https://torch.example/whl/", "--extra-index-url", PYPI,
                   "--find-links", "https://repo.example/torch/", "--find-links", "/links"))
    index, extra, links = _pip_reads(src.index_args())
    assert index == "https://sdk.example/v2/gfx94X-dcgpu/"  # the SDK's, as without a lock
    assert extra == ["https://torch.example/whl/", PYPI]
    assert links == ["/links", "https://repo.example/torch/"]
    # torch's own index alone (a system SDK): it becomes the index
    system = Sources("system", None, None, None, None, (), "torch==2.8.0",
                     ("--index-url", "https://torch.example/whl/", "--extra-index-url", PYPI))
    assert _pip_reads(system.index_args()) == ("https://torch.example/whl/", [PYPI], [])


def test_a_locked_install_of_a_matrix_build_names_its_sources_indexes() -> None:
    m = load_matrix()
    layout = Layout(Path("/w"), Path("/c"))
    for build in m.builds:
        if not build.pkg_version.torch or build.rocm.sdk.provider != "pip" or build.python != "3.12":
            continue
        src = sources_for(m, build, Options())
        ref = LockRef(lock_name(m, build), f"/w/locks/{lock_name(m, build)}", inputs_hash(build, src))
        steps = {s.name: s for s in provision_steps(m, build, Options(locks=(ref,)), HostFacts(),
                                                    layout)[0]}
        argv = steps["install-torch"].argv
        start = argv.index("--index-strategy") + 2
        index, extra, links = _pip_reads(argv[start:argv.index("-r")])
        torch = dict(zip(src.torch_args[::2], src.torch_args[1::2], strict=True))
        assert index == src.sdk_index, build.id
        # torch's indexes after the SDK's, each once (a multi-arch SDK and torch share one)
        wanted = [u for o, u in zip(src.torch_args[::2], src.torch_args[1::2], strict=True)
                  if o != "--find-links" and u != src.sdk_index]
        assert extra == wanted, build.id
        assert links == ([torch["--find-links"]] if "--find-links" in torch else []), build.id


def test_every_index_and_find_links_location_is_probed_once() -> None:
    from toolkit.core.steps import IndexProbe
    from toolkit.plan.provision import _probes

    src = Sources("pip", "per-family", "gfx94X-dcgpu", "https://sdk.example/", "rocm>1", ("/links",), "torch",
                  ("--index-url", "https://torch.example/", "--find-links", "/more",
                   "--extra-index-url", "https://sdk.example/", "--find-links", "/links"))
    assert _probes(src, None) == (
        IndexProbe("https://sdk.example/", "rocm", "ROCm SDK index"),
        IndexProbe("https://torch.example/", "torch", "torch index"),
        IndexProbe("/links", None, "find-links location"),
        IndexProbe("/more", None, "find-links location"))
    # with a lock, the projects are pinned by hash: an index need only be reachable
    assert [p.project for p in _probes(src, "locks/x.txt")] == [None, None, None, None]


@pytest.mark.parametrize(("provider", "index", "want"), [
    ("pip", "https://sdk.example/", [IndexProbe("https://sdk.example/", "rocm", "ROCm SDK index")]),
    ("pip", None, []),
    ("system", "https://sdk.example/", []),  # a system SDK is never installed from an index
])
def test_the_sdk_index_is_probed_for_a_pip_sdk_with_an_index_only(
    provider: str, index: str | None, want: list[IndexProbe]
) -> None:
    src = Sources(provider, None, None, index, None, (), "torch", ())
    assert list(_probes(src, None)) == want
