"""Where one environment's SDK and torch come from: the inputs of its provisioning and its lock
(``toolkit.plan.provision.sources_for`` makes them; ``toolkit.plan.locks`` hashes them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Sources:
    """Where one environment's SDK and torch come from (the inputs of its lock)."""

    provider: str  # "pip" | "system"
    layout: str | None  # "per-family" | "multi-arch" (pip)
    family: str | None  # per-family index: the family (also ROCM_SDK_TARGET_FAMILY)
    sdk_index: str | None
    sdk_spec: str | None  # e.g. rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1
    find_links: tuple[str, ...]
    torch_spec: str
    torch_args: tuple[str, ...]  # --index-url/--extra-index-url/--find-links for torch
    system_version: str | None = None
    # installed with torch: the SDK requirement when torch pins the SDK it was built with
    # (TheRock's multi-arch torch), so the resolver keeps the release's SDK
    torch_pins: tuple[str, ...] = ()
    # TheRock's channel the SDK (and TheRock's torch) install from: stable, prerelease,
    # nightly, dev (rocm.toml); None: the release has none
    channel: str | None = None

    @property
    def allows_prereleases(self) -> bool:
        """A stable channel holds releases only; every other source keeps today's
        ``--prerelease=allow`` (nightlies and release candidates are pre-releases)."""
        return self.channel != "stable"

    def __post_init__(self) -> None:
        if len(self.torch_args) % 2:
            raise ValueError(f"torch_args must be option-value pairs, got {self.torch_args!r}")

    def as_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider, "layout": self.layout, "family": self.family,
            "sdk_index": self.sdk_index, "sdk_spec": self.sdk_spec,
            "find_links": list(self.find_links), "torch_spec": self.torch_spec,
            "torch_args": list(self.torch_args), "system_version": self.system_version,
            # only when there are some: locks compiled before torch pins existed stay current
            **({"torch_pins": list(self.torch_pins)} if self.torch_pins else {}),
            **({"channel": self.channel} if self.channel else {}),
        }

    def index_args(self) -> tuple[str, ...]:
        """Index options covering both the SDK and torch (for installs from a lock)."""
        out: list[str] = []
        urls: list[str] = [self.sdk_index] if self.sdk_index else []
        links = list(self.find_links)
        args = list(self.torch_args)
        for opt, val in zip(args[::2], args[1::2], strict=False):
            if opt == "--find-links":
                links.append(val)
            else:
                urls.append(val)
        for n, url in enumerate(dict.fromkeys(urls)):
            out += ["--index-url" if n == 0 else "--extra-index-url", url]
        for link in dict.fromkeys(links):
            out += ["--find-links", link]
        return tuple(out)
