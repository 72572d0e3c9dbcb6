"""What a repo's storage measurement holds: plain dataclasses shared by the builder, the card and the CLI.

:class:`DedupSize` (bytes before and after chunk-level dedup, :mod:`hug_vis_dataset.hub.cdc`),
:class:`ConfigStorage` and :class:`RepoStorage` (per-config media duplication and the repo's
totals, :mod:`hug_vis_dataset.hub.dedup`). No heavy import, so the card and the build report can
hold them.

Example:
    >>> DedupSize(total_bytes=400, unique_bytes=100, chunks=4, unique_chunks=1).ratio
    0.25
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

MiB = 1 << 20


@dataclass(frozen=True)
class DedupSize:
    """Bytes of a set of files before and after chunk-level deduplication."""

    total_bytes: int
    unique_bytes: int
    chunks: int
    unique_chunks: int

    @property
    def ratio(self) -> float:
        """``unique_bytes / total_bytes`` (1.0 = nothing shared; 0.5 = half the bytes are repeats)."""
        return self.unique_bytes / self.total_bytes if self.total_bytes else 1.0


@dataclass(frozen=True)
class ConfigStorage:
    """Bytes of one config of a built repo.

    Attributes:
        file_bytes: size of its Parquet shards.
        media_bytes: bytes of its media cells (video, audio, alpha, image blobs).
        media_cells: number of non-empty media cells.
        shared_media_bytes: bytes of its media cells whose content (sha256) also appears in
            another config.
        repeated_media_bytes: bytes of media cells repeating an earlier cell of the same config
            (``vision_driven`` stores the video as both driving and reference).
    """

    file_bytes: int
    media_bytes: int
    media_cells: int
    shared_media_bytes: int
    repeated_media_bytes: int


@dataclass(frozen=True)
class RepoStorage:
    """A repo's shard bytes per config, its media duplication and its size after chunk-level dedup.

    Attributes:
        configs: per config, in repo order.
        unique_media_bytes: distinct media contents over all configs, each counted once.
        shards_dedup: the Parquet shards after chunk-level dedup (None: not measured).
        release_bytes: the media files of the release the repo was built from (video, audio,
            alpha PNGs), when known.
        chunker: the chunker's parameters (e.g. min/avg/max size).
    """

    configs: dict[str, ConfigStorage]
    unique_media_bytes: int
    shards_dedup: "DedupSize | None" = None
    release_bytes: "int | None" = None
    chunker: dict = field(default_factory=dict)

    @property
    def shard_bytes(self) -> int:
        return sum(c.file_bytes for c in self.configs.values())

    @property
    def media_bytes(self) -> int:
        return sum(c.media_bytes for c in self.configs.values())

    @property
    def shared_media_bytes(self) -> int:
        return sum(c.shared_media_bytes for c in self.configs.values())

    def to_dict(self) -> dict:
        """JSON-ready numbers (for the manifest and ``--json``)."""
        return {"configs": {c: asdict(s) for c, s in self.configs.items()}, "shard_bytes": self.shard_bytes,
                "media_bytes": self.media_bytes, "shared_media_bytes": self.shared_media_bytes,
                "unique_media_bytes": self.unique_media_bytes, "release_bytes": self.release_bytes,
                "shards_dedup": asdict(self.shards_dedup) if self.shards_dedup else None, "chunker": self.chunker}

    def table_rows(self) -> list[tuple[str, str, str, str]]:
        """(config, MiB, media MiB, media also in another config) per config, then the total."""
        rows = [(c, _mib(s.file_bytes), _mib(s.media_bytes), _share(s.shared_media_bytes, s.media_bytes))
                for c, s in self.configs.items()]
        rows.append(("all configs", _mib(self.shard_bytes), _mib(self.media_bytes),
                     _share(self.shared_media_bytes, self.media_bytes)))
        return rows

    def summary_lines(self) -> list[str]:
        """The headline figures, one per line (for ``hugvis build``, the CLI and the card).

        Example:
            >>> s = RepoStorage({"clips": ConfigStorage(3 * MiB, 2 * MiB, 4, MiB, 0)}, MiB,
            ...                 DedupSize(3 * MiB, 2 * MiB, 40, 30), release_bytes=2 * MiB)
            >>> print("\\n".join(s.summary_lines()))
            Parquet shards: 3.00 MiB; media cells 2.00 MiB, of which 1.00 MiB (50%) also in another config; distinct media 1.00 MiB
            after chunk-level dedup: 2.00 MiB (0.67x of the shards)
            release media: 2.00 MiB; shards / release 1.50x, after chunk-level dedup 1.00x
        """
        lines = [f"Parquet shards: {_mib(self.shard_bytes)} MiB; media cells {_mib(self.media_bytes)} MiB, of which "
                 f"{_share(self.shared_media_bytes, self.media_bytes)} also in another config; distinct media "
                 f"{_mib(self.unique_media_bytes)} MiB"]
        if self.shards_dedup is not None:
            lines.append(f"after chunk-level dedup: {_mib(self.shards_dedup.unique_bytes)} MiB "
                         f"({self.shards_dedup.ratio:.2f}x of the shards)")
        if self.release_bytes:
            after = (f", after chunk-level dedup {self.shards_dedup.unique_bytes / self.release_bytes:.2f}x"
                     if self.shards_dedup is not None else "")
            lines.append(f"release media: {_mib(self.release_bytes)} MiB; shards / release "
                         f"{self.shard_bytes / self.release_bytes:.2f}x{after}")
        return lines

    def to_text(self) -> str:
        """A plain table plus the headline lines."""
        rows = [("config", "MiB", "media MiB", "media also in another config")] + self.table_rows()
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        table = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
        return "\n".join(table + self.summary_lines())


def _mib(n: int) -> str:
    return f"{n / MiB:.2f}"


def _share(part: int, whole: int) -> str:
    return f"{_mib(part)} MiB ({part / whole:.0%})" if whole else "0.00 MiB"
