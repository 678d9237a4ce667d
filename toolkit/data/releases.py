"""rocm.toml: the ROCm releases, where each one's SDK and torch come from, loaded and checked
(schema ``toolkit.data.specs.ROCM``; the rules across entries are checked here).

A TheRock release has a release ``line`` (status, the git ref of ROCm/TheRock that states it,
its version) and ``channels``: TheRock's package indexes by name (stable, prerelease,
nightly, dev). The SDK and TheRock's torch install from one channel; its default follows the
line's status (``DEFAULT_CHANNEL``) and the SDK requirement follows the channel
(``SdkSource.spec_for``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolkit.core.errors import UsageError, suggestion
from toolkit.core.urls import join_path
from toolkit.data.gpus import GpuEra, GpuFamily, family_names
from toolkit.data.schema import check, fail, read_toml
from toolkit.data.specs import CHANNELS, ROCM

# the channel a release line installs from by default: a released version from its stable
# channel; a release branch or a BKC branch (no tag yet) from its prerelease channel; a
# version only main's nightlies build from the nightly channel
DEFAULT_CHANNEL = MappingProxyType({"released": "stable", "branch": "prerelease",
                                    "bkc": "prerelease", "nightly-only": "nightly"})
SDK_REQUIREMENT = "rocm[libraries,devel]>1.0"


@dataclass(frozen=True)
class ReleaseLine:
    """Where TheRock states a release: ``status`` (released: a ``therock-X.Y[.Z]`` tag; branch:
    ``release/therock-X.Y``; bkc: ``release/bkc/therock-X.Y-<date>``; nightly-only: main's
    version.json history), the ``ref`` read, the ``version`` its version.json says there."""

    status: str
    ref: str
    version: str
    evidence: str = ""


@dataclass(frozen=True)
class SdkSource:
    provider: str  # "pip" | "system" (the default; a system release may have pip channels too)
    layout: str | None = None  # the pip SDK's layout: "per-family" | "multi-arch"
    legacy: bool = False  # pip: TheRock's legacy per-family releases (may be deleted)
    version: str | None = None  # system only: the install expected, e.g. 6.4.3
    note: str | None = None  # why this source (e.g. why a system install), for `invoke matrix`
    evidence: str = ""  # where upstream says so: "<owner>/<repo>@<commit> <file>"
    # TheRock's channels of this release: name -> index URL (trailing slash)
    channels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    channels_evidence: str = ""
    default_channel: str | None = None  # the channel a pip install uses without --channel
    base: str | None = None  # the lowest SDK version of the release, e.g. 7.14.0
    upper: str | None = None  # the next minor (excluded), e.g. 7.15

    def channel(self, wanted: str | None, release: str) -> str | None:
        """``wanted`` when this release has it, else a ``UsageError`` naming its channels;
        None: the default channel (None when the release has no channel)."""
        if wanted is None:
            return self.default_channel
        if wanted not in self.channels:
            valid = ", ".join(self.channels) or "none (TheRock published no pip SDK for it)"
            raise UsageError(f"ROCm {release} has no {wanted!r} channel; valid: {valid}",
                             nearest=suggestion(wanted, self.channels))
        return wanted

    def url_for(self, channel: str | None) -> str | None:
        return self.channels.get(channel) if channel else None

    def spec_for(self, channel: str | None) -> str | None:
        """The SDK requirement from ``channel``: the stable channel holds releases only
        (``>=X.Y.Z,<X.Y+1``, resolved without pre-releases); the others nightlies and release
        candidates of the line (``>=X.Y.Za0,<X.Y+1``)."""
        if self.base is None or self.upper is None or channel is None:
            return None
        low = self.base if channel == "stable" else f"{self.base}a0"
        return f"{SDK_REQUIREMENT},>={low},<{self.upper}"

    @property
    def index_url(self) -> str | None:  # the default channel's index
        return self.url_for(self.default_channel)

    @property
    def spec(self) -> str | None:  # the SDK requirement from the default channel
        return self.spec_for(self.default_channel)


@dataclass(frozen=True)
class TorchSource:
    torch: str  # "2.8"
    rocm: str
    kind: str  # "pytorch" | "amd" | "therock"
    spec: str
    index_url: str | None = None  # pytorch / amd; TheRock's torch: the SDK's channel
    find_links: str | None = None
    per_family: bool = False  # the channel's URL gets "<family>/" appended (TheRock layout)
    # TheRock's multi-arch index: a host wheel plus device packages chosen by torch's
    # device-<gfx> extras; it pins the SDK it was built with
    device_extras: bool = False
    note: str | None = None
    evidence: str = ""
    python: tuple[str, ...] = ()  # the Pythons this source publishes torch for; () = any

    def serves(self, python: str) -> bool:
        return not self.python or python in self.python


@dataclass(frozen=True)
class RocmRelease:
    version: str
    hip: str  # major.minor that torch.version.hip and hipcc report
    default_family: str
    sdk: SdkSource
    torch: Mapping[str, TorchSource]
    # the GPU families this release's per-family SDK index served (name -> targets), when they
    # differ from today's names in gpus.toml; empty: gpus.toml's families
    families: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    families_evidence: str = ""
    era: GpuEra | None = None  # the gfx ids its compilers build (None: not recorded)
    line: ReleaseLine | None = None  # TheRock's release line (None: not a TheRock release)


def _url(table: Mapping[str, Any], key: str) -> str | None:
    """``table[key]`` (a checked URL) with a trailing slash."""
    if key not in table:
        return None
    return join_path(str(table[key]))  # a query (if any) stays a query


def _bounds(version: str, line: ReleaseLine | None) -> tuple[str, str]:
    """The release's SDK range: its line's version (else X.Y.0) up to the next minor."""
    major, minor = version.split(".")[:2]
    return (line.version if line else f"{major}.{minor}.0"), f"{major}.{int(minor) + 1}"


def _line(file: Path, where: str, version: str, rel: Mapping[str, Any]) -> ReleaseLine | None:
    if "line" not in rel:
        return None
    t = rel["line"]
    line = ReleaseLine(t["status"], t["ref"], t["version"], t["evidence"])
    if line.version.split(".")[:2] != version.split(".")[:2]:
        fail(file, f"{where}.line.version", f"{line.version!r} is not a {version} version "
             f"(expected {version}.Z)")
    return line


def _channels(file: Path, where: str, rel: Mapping[str, Any],
              line: ReleaseLine | None) -> tuple[dict[str, str], str, str | None]:
    """The release's channels (name -> URL), their evidence, its default channel."""
    table = rel.get("channels", {})
    channels = {c: str(_url(table, c)) for c in CHANNELS if c in table}
    if not channels:
        if line is not None:
            fail(file, f"{where}.line", "a TheRock release line needs its channels "
                 f"(channels = {{ {' | '.join(CHANNELS)} = \"https://...\", evidence = ... }})")
        return {}, "", None
    if line is not None:
        default = DEFAULT_CHANNEL[line.status]
        if default not in channels:
            fail(file, f"{where}.channels", f"a {line.status!r} line installs from its "
                 f"{default!r} channel, which is missing; valid: {', '.join(channels)}")
    else:
        default = next(iter(channels))
    return channels, str(table["evidence"]), default


def _sdk(file: Path, where: str, version: str, rel: Mapping[str, Any]) -> SdkSource:
    s = rel["sdk"]
    line = _line(file, where, version, rel)
    channels, evidence, default = _channels(file, where, rel, line)
    layout = s.get("layout")
    if s["provider"] == "pip" and not channels:
        fail(file, f"{where}.channels", "missing (a pip SDK installs from TheRock's channels: "
             f"channels = {{ {' | '.join(CHANNELS)} = \"https://...\", evidence = ... }})")
    if bool(channels) != bool(layout):
        key = "sdk.layout" if channels else "channels"
        fail(file, f"{where}.{key}", "pip channels and the pip SDK's layout go together: "
             "give both (a system release that TheRock also published) or neither")
    legacy = bool(s.get("legacy", False))
    if layout and legacy != (layout == "per-family"):
        fail(file, f"{where}.sdk.legacy", "TheRock's per-family releases are legacy and its "
             "multi-arch ones are not: per-family needs legacy = true, multi-arch takes no "
             "legacy (ROCm/TheRock docs/packaging/legacy_per_family_releases.md)")
    base, upper = _bounds(version, line) if channels else (None, None)
    return SdkSource(s["provider"], layout, legacy, s.get("version"), s.get("note"),
                     s["evidence"], MappingProxyType(channels), evidence, default, base, upper)


def _torches(file: Path, where: str, version: str, rel: Mapping[str, Any],
             sdk: SdkSource) -> dict[str, TorchSource]:
    torches: dict[str, TorchSource] = {}
    for tv, t in rel["torch"].items():
        idx = _url(t, "index_url")
        if t["kind"] == "pytorch" and idx and "download.pytorch.org" in idx \
                and not idx.endswith(f"/rocm{version}/"):
            fail(file, f'{where}.torch."{tv}".index_url', f"{idx} is not PyTorch's index "
                 f"for ROCm {version} (expected .../rocm{version}/)")
        if t["kind"] == "therock" and not sdk.channels:
            fail(file, f'{where}.torch."{tv}"', "TheRock's torch installs from the release's "
                 "channels, and this release has none (add channels and sdk.layout)")
        torches[tv] = TorchSource(
            tv, version, t["kind"], t["spec"], idx, _url(t, "find_links"),
            per_family=(t["kind"] == "therock" and sdk.layout == "per-family"),
            device_extras=(t["kind"] == "therock" and sdk.layout == "multi-arch"),
            note=t.get("note"), evidence=t["evidence"], python=tuple(t.get("python", ())),
        )
    return torches


def load_rocm(file: Path, families: Mapping[str, GpuFamily],
              eras: Mapping[str, GpuEra]) -> dict[str, RocmRelease]:
    doc = read_toml(file)
    check(ROCM, doc, file, {"families": family_names(families), "eras": sorted(eras)})
    releases: dict[str, RocmRelease] = {}
    for version, rel in doc["releases"].items():
        where = f'releases."{version}"'
        sdk = _sdk(file, where, version, rel)
        served: dict[str, tuple[str, ...]] = {}
        if "families" in rel:
            if sdk.layout != "per-family":
                fail(file, f"{where}.families", "lists the families of a per-family SDK index; "
                     "valid only with sdk.layout = \"per-family\"")
            served = {k: tuple(v) for k, v in rel["families"]["served"].items()}
            if rel["default_family"] not in served:
                fail(file, f"{where}.default_family", f"{rel['default_family']!r} is not one of "
                     f"the families this release's index served; valid: {', '.join(served)}")
        era = eras[rel["gpus"]]
        releases[version] = RocmRelease(
            version, rel["hip"], rel["default_family"], sdk,
            MappingProxyType(_torches(file, where, version, rel, sdk)),
            MappingProxyType(served), rel["families"]["evidence"] if served else "", era,
            _line(file, where, version, rel))
        fam = families.get(rel["default_family"]) or next(
            f for f in families.values() if rel["default_family"] in f.aliases)
        if not served and not set(fam.targets) & set(era.targets):
            fail(file, f"{where}.default_family", f"{rel['default_family']!r} has no member "
                 f"in the {era.name} era's targets ({', '.join(era.targets)})")
    return releases
