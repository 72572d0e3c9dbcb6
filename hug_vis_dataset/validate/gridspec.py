"""Which part of the grid a release is expected to hold, and where a release declares it.

:class:`GridSpec` is the full 8,400-unit grid or a subset (``"actors=1-2,emotions=happy+sad"``);
a release records its subset in ``metadata/grid.json`` (:func:`write_grid_declaration`, written
by ``hugvis synth``), and :func:`expected_grid` reads it back for validation and building.

Example:
    >>> spec = GridSpec.parse("actors=2,emotions=happy+sad,actions=1,scripts=1-2")
    >>> spec.actors, spec.emotions, len(spec.clip_ids())
    ((1, 2), ('Happy', 'Sad'), 8)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from ..errors import HugvisError, ToolUsageError
from ..datamodel.grid import EMOTIONS, NUM_ACTIONS, NUM_ACTORS, NUM_SCRIPTS, ClipId, iter_grid, parse_emotion
from ..readers import InputFileError
from ..readers.json_files import read_json

GRID_DECLARATION = "metadata/grid.json"


class GridSpecError(ToolUsageError):
    """A grid subset (``--grid`` or ``metadata/grid.json``) cannot be parsed."""


class GridDeclarationError(HugvisError, ValueError):
    """The release's ``metadata/grid.json`` is not a valid grid declaration."""


@dataclass(frozen=True)
class GridSpec:
    """Which part of the grid a release is expected to hold."""

    actors: tuple[int, ...] = tuple(range(1, NUM_ACTORS + 1))
    emotions: tuple[str, ...] = tuple(e.value for e in EMOTIONS)
    actions: tuple[int, ...] = tuple(range(1, NUM_ACTIONS + 1))
    scripts: tuple[int, ...] = tuple(range(1, NUM_SCRIPTS + 1))

    def clip_ids(self) -> list[ClipId]:
        return list(iter_grid(self.actors, self.emotions, self.actions, self.scripts))

    def to_dict(self) -> dict:
        return {k: list(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict) -> "GridSpec":
        """From ``{"actors": [1, 2] or 2, "emotions": [...], ...}``; :class:`GridSpecError` when bad."""
        if not isinstance(data, dict):
            raise GridSpecError(f"a grid declaration is a JSON object of actors/emotions/actions/scripts, "
                                f"got {type(data).__name__}")
        unknown = set(data) - {"actors", "emotions", "actions", "scripts"}
        if unknown:
            raise GridSpecError(f"unknown grid fields {sorted(unknown)}; use actors, emotions, actions, scripts")
        full = cls()
        try:
            emotions = data.get("emotions", full.emotions)
            if isinstance(emotions, (str, bytes)) or not hasattr(emotions, "__iter__"):
                raise ValueError(f"emotions must be a list, got {emotions!r}")
            spec = cls(
                actors=_ids(data.get("actors", full.actors)),
                emotions=tuple(parse_emotion(e).value for e in emotions),
                actions=_ids(data.get("actions", full.actions)),
                scripts=_ids(data.get("scripts", full.scripts)),
            )
        except (ValueError, TypeError, KeyError) as err:
            raise GridSpecError(f"bad grid value: {err}") from None
        for name, values, top in (("actors", spec.actors, NUM_ACTORS), ("actions", spec.actions, NUM_ACTIONS),
                                  ("scripts", spec.scripts, NUM_SCRIPTS), ("emotions", spec.emotions, 0)):
            if not values:
                raise GridSpecError(f"{name} is empty: the grid would hold no clip")
            bad = [v for v in values if top and not 1 <= v <= top]
            if bad:
                raise GridSpecError(f"{name} {bad} outside 1..{top}")
            if len(set(values)) != len(values):  # [1, 1, 2] would expect actor 1's clips twice
                raise GridSpecError(f"{name} lists {sorted(v for v in set(values) if values.count(v) > 1)} twice")
        return spec

    @classmethod
    def parse(cls, text: str) -> "GridSpec":
        """``"actors=1-2,actions=4,scripts=1-2,emotions=happy+sad"``; ``full`` is the paper grid.

        A single number ``n`` means ``1..n``; ``a-b`` a range; ``+`` joins items.
        """
        if text.strip().lower() in ("", "full"):
            return cls()
        data: dict[str, object] = {}
        for part in text.split(","):
            key, eq, value = part.partition("=")
            key = key.strip()
            if not eq or not value.strip():
                raise GridSpecError(f"grid part {part.strip()!r} is not KEY=VALUE (e.g. actors=1-2)")
            if key == "emotions":
                data[key] = [e.strip() for e in value.split("+")]
            else:
                items: list[int] = []
                for piece in value.split("+"):
                    lo, dash, hi = piece.partition("-")
                    try:
                        items.extend(range(int(lo), int(hi) + 1) if dash else range(1, int(lo) + 1))
                    except ValueError:
                        raise GridSpecError(f"{key}={value!r}: {piece!r} is not a number or a range a-b") from None
                data[key] = items
        return cls.from_dict(data)


def _ids(values: "Iterable[int] | int") -> tuple[int, ...]:
    if isinstance(values, bool) or (not isinstance(values, int) and any(isinstance(v, bool) for v in values)):
        raise ValueError(f"true/false is not an id or a count: {values!r}")  # True would read as actor 1
    if isinstance(values, int):
        return tuple(range(1, values + 1))
    return tuple(int(v) for v in values)


def write_grid_declaration(root: "str | Path", spec: GridSpec) -> Path:
    """Record which grid subset a release holds (``metadata/grid.json``)."""
    path = Path(root) / GRID_DECLARATION
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(spec.to_dict(), indent=2) + "\n", encoding="utf-8")
    return path


def expected_grid(root: "str | Path", spec: "GridSpec | None" = None) -> GridSpec:
    if spec is not None:
        return spec
    declared = Path(root) / GRID_DECLARATION
    if declared.is_file():
        try:  # strict: a key given twice (which "actors"?) or a second object is refused, naming the line
            return GridSpec.from_dict(read_json(declared, expect=None))
        except InputFileError as err:
            err = f"{err.where}: {err.problem}" if err.where else err.problem
            raise GridDeclarationError(f"{declared} is not a valid grid declaration ({err}); fix it, delete it, "
                                       f"or pass --grid") from None
        except GridSpecError as err:
            raise GridDeclarationError(f"{declared} is not a valid grid declaration ({err}); fix it, delete it, "
                                       f"or pass --grid") from None
    return GridSpec()


def grid_option(text: str) -> GridSpec:
    """argparse type of ``--grid``: a :class:`GridSpec` or a one-line usage error."""
    import argparse

    try:
        return GridSpec.parse(text)
    except GridSpecError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
