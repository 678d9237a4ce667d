"""The KFD topology read node by node (``toolkit.env.gpus.from_kfd``): a node whose
``properties`` cannot be read (a folder in its place, as a half-copied topology has; reading it
raises ``IsADirectoryError``, an ``OSError``) is passed over and the nodes after it still count;
a file among the nodes is no node; the nodes are read in numeric order, names that are not
numbers after them. The truth: the kernel's documented ``gfx_target_version`` encoding
(major*10000 + minor*100 + stepping, hex digits in the gfx id), written here by hand."""

from __future__ import annotations

from pathlib import Path

from toolkit.env.gpus import from_kfd


def node(nodes: Path, name: str, version: int | None) -> None:
    (nodes / name).mkdir(parents=True)
    if version is None:  # no readable properties: a folder where the file belongs
        (nodes / name / "properties").mkdir()
    else:
        (nodes / name / "properties").write_text(f"simd_count 4\ngfx_target_version {version}\n")


def test_an_unreadable_node_is_passed_over_and_later_gpus_still_count(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes"
    node(nodes, "0", 0)  # the CPU
    node(nodes, "1", None)
    node(nodes, "2", 90010)
    node(nodes, "3", 90402)
    gpus, seen = from_kfd(nodes)
    assert [(g.gfx, g.source, g.detail) for g in gpus] == [
        ("gfx90a", "kfd", "node 2"), ("gfx942", "kfd", "node 3")]
    assert seen == str(nodes)


def test_only_unreadable_nodes_count_as_nodes_without_a_gpu(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes"
    node(nodes, "0", None)
    node(nodes, "1", None)
    (nodes / "README").write_text("not a node\n")  # a file: not counted
    assert from_kfd(nodes) == ([], f"{nodes} (2 node(s), no GPU)")


def test_numbered_nodes_come_first_in_number_order_then_named_ones(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes"
    node(nodes, "b", 100300)
    node(nodes, "a", 110000)
    node(nodes, "10", 90008)
    node(nodes, "9", 120001)
    gpus, _ = from_kfd(nodes)
    assert [g.detail for g in gpus] == ["node 9", "node 10", "node a", "node b"]
    assert [g.gfx for g in gpus] == ["gfx1201", "gfx908", "gfx1100", "gfx1030"]


def test_a_file_in_place_of_the_topology_folder_is_missing(tmp_path: Path) -> None:
    (tmp_path / "nodes").write_text("")
    assert from_kfd(tmp_path / "nodes") == ([], f"{tmp_path / 'nodes'} (missing)")
