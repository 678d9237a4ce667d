"""A lock is compiled for one TheRock channel: a stable channel resolves releases only, the
others pre-releases too (README: a released line's `stable` channel is "resolved without
pre-releases"), so the same index read through another channel may pin other versions. The
lock's inputs hash therefore changes with the channel even when the index URL is the same (a
mirror given with ``--index-url``), and a lock compiled for one channel is stale for the
other."""

from __future__ import annotations

from toolkit.data.matrix import load_matrix
from toolkit.plan.locks import inputs_hash
from toolkit.plan.model import Options
from toolkit.plan.provision import sources_for

MATRIX = load_matrix()
MIRROR = "https://mirror.example/v2/"


def _with_two_channels() -> tuple[str, tuple[str, str]]:
    for b in MATRIX.select():
        rel = b.rocm.sdk
        if "stable" in rel.channels and "nightly" in rel.channels:
            return b.id, ("stable", "nightly")
    raise AssertionError("no release with a stable and a nightly channel in the matrix")


def test_the_same_mirror_through_two_channels_gives_two_locks() -> None:
    build_id, (stable, nightly) = _with_two_channels()
    b = MATRIX.build(build_id)
    a = sources_for(MATRIX, b, Options(index_url=MIRROR, channel=stable))
    n = sources_for(MATRIX, b, Options(index_url=MIRROR, channel=nightly))
    assert a.sdk_index == n.sdk_index == MIRROR  # the same index, by hand
    assert a.allows_prereleases is False and n.allows_prereleases is True
    assert a.as_json()["channel"] == "stable" and n.as_json()["channel"] == "nightly"
    assert inputs_hash(b, a) != inputs_hash(b, n)
    # and the same channel twice is the same lock
    again = sources_for(MATRIX, b, Options(index_url=MIRROR, channel=stable))
    assert inputs_hash(b, a) == inputs_hash(b, again)


def test_a_release_without_channels_records_none() -> None:
    for b in MATRIX.select():
        if not b.rocm.sdk.channels:
            src = sources_for(MATRIX, b, Options())
            assert src.channel is None and "channel" not in src.as_json()
            return
    raise AssertionError("every release has channels: pick another case")
