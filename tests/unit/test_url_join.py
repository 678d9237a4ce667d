"""A family folder is joined to an index URL's path, never pasted after its query
(issue 29: the probe asked for `.../simple?token=T/gfx94X-dcgpu/`)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from hypothesis import given
from hypothesis import strategies as st

from toolkit.core.urls import join_path
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix

_SEG = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,15}", fullmatch=True)


@given(path=st.lists(_SEG, max_size=3), query=st.from_regex(r"[a-z]{1,5}=[A-Za-z0-9]{0,8}",
                                                            fullmatch=True), seg=_SEG)
def test_the_segment_lands_in_the_path_and_the_query_stays(path: list[str], query: str,
                                                          seg: str) -> None:
    url = "https://idx.example.com/" + "/".join(path) + f"?{query}"
    joined = urlsplit(join_path(url, seg))
    # hand-computed: the path with the segment as its last folder, the query untouched
    assert joined.path == "/" + "".join(f"{p}/" for p in [*path, seg])
    assert joined.query == query and joined.netloc == "idx.example.com"


def test_a_per_family_index_with_a_token_keeps_it_in_the_query() -> None:
    """7.0's per-family nightly channel given by --index-url with a query token: the family
    folder goes into the path of the SDK's and torch's index, the token stays the query."""
    m = load_matrix()
    p = plan(m, m.build("apex-1.8.0-cp312-rocm7.0"),
             Options(channel="nightly", index_url="https://idx.example.com/v2?token=T0K"),
             HostFacts(cores=8, mem_available_gib=32.0), Layout(Path("/w"), Path("/c")))
    argv = p.step("install-rocm-sdk").argv
    url = urlsplit(argv[argv.index("--index-url") + 1])
    assert (url.path, url.query) == ("/v2/gfx94X-dcgpu/", "token=T0K")
