"""Check an upload's layout from the zip's member names, before anything is extracted or scored;
then (:func:`refusals_message`) word the scorer's own checks of the extracted files.

The names say which clips a zip predicts for a task under the task scorer's own rules
(:meth:`hug_vis_dataset.tasks.base.TaskScorer.match_names`: the clip id in each entry's name,
never sorted order; emotion: one predictions file), and which task's layout the zip matches when it is not the one chosen, so
the Space can say "these look like matting predictions" instead of "unmatched 28".

Example:
    >>> names = ["sys/actor_0001_happy_action_01_script_001/000000.png",
    ...          "sys/actor_0001_happy_action_01_script_001/000001.png", "sys/notes.txt"]
    >>> check = layout_check("matting", names)
    >>> check.matched, check.unmatched
    (1, [])
    >>> wrong = layout_check("voice_cloning", names)
    >>> wrong.matched, wrong.best_other
    (0, 'matting')
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Iterable

from .. import catalog
from ..presentation.escaping import markdown_text
from ..tasks import get_task
from ..tasks.submission import sample_folders, samples_layout
from .uploads import is_ignorable, is_wrapper_folder


@dataclass
class LayoutCheck:
    """How a zip's entries match one task's layout."""

    task: str
    matched: int = 0
    unmatched: list[tuple[str, str]] = field(default_factory=list)
    best_other: "str | None" = None  # another task whose layout matches more entries

    def message(self) -> str:
        """One Markdown paragraph: what matched, what did not and what to change."""
        spec = catalog.task(self.task)
        if self.matched:
            text = f"{self.matched} clip(s) in the zip match the {spec.label.lower()} layout."
        else:
            text = f"**No file matches the {spec.label.lower()} layout** ({_escape(spec.prediction)})."
        if self.unmatched:
            # Member names are the uploader's text: escaped, never inside a code span (a backtick
            # in the name would close it).
            shown = "; ".join(f"{markdown_text(n)}: {markdown_text(why)}" for n, why in self.unmatched[:3])
            text += f" {len(self.unmatched)} entr(y/ies) do not: {shown}" + (" ..." if len(self.unmatched) > 3 else ".")
        if self.best_other:
            text += (f" These files look like **{catalog.task(self.best_other).label.lower()}** predictions: "
                     f"choose that task, or upload the {spec.label.lower()} files.")
        return text


#: What a person types in a layout's words: a file name pattern (``<clip_id>.mp4``, ``<clip_id>/000000.png``,
#: ``.flac``) or a JSON line's fields.
_CODE = re.compile(r'\{[^}]*\}|[\w.]*<clip_id>[\w./|]*|(?<![\w.])\.[a-z0-9]+\b', re.ASCII)


def _escape(text: str) -> str:
    """A layout in words as Markdown: its file name patterns and JSON fields as code (what a person types, so
    ``<clip_id>`` reads as a placeholder, never as a label), the prose escaped (a bare ``<...>`` is an HTML tag).

    >>> _escape('<clip_id>.wav (or .flac): the speech; {"clip_id", "answer"}')
    '`<clip_id>.wav` (or `.flac`): the speech; `{"clip_id", "answer"}`'
    """
    out, at = [], 0
    for match in _CODE.finditer(text):
        out += [text[at:match.start()].replace("<", "&lt;").replace(">", "&gt;"), f"`{match.group(0)}`"]
        at = match.end()
    return "".join(out) + text[at:].replace("<", "&lt;").replace(">", "&gt;")


def submission_paths(names: Iterable[str]) -> list[PurePosixPath]:
    """The files of a zip relative to the submission root it unpacks to.

    A zip wrapping everything in one folder (``my_system/...``) is unwrapped, as
    :func:`hug_vis_dataset.space.uploads.submission_root` does after extraction (a folder named by a
    clip id is one matting clip, not a wrapper).
    """
    paths = [PurePosixPath(n) for n in names if n and not n.endswith("/")]
    paths = [p for p in paths if not is_ignorable(p)]
    if (paths and len({p.parts[0] for p in paths}) == 1 and all(len(p.parts) > 1 for p in paths)
            and is_wrapper_folder(paths[0].parts[0])):
        paths = [PurePosixPath(*p.parts[1:]) for p in paths]
    return paths


def top_level_entries(names: Iterable[str]) -> dict[str, bool]:
    """``{entry name: is a folder}`` of the submission root a zip unpacks to (:func:`submission_paths`)."""
    entries: dict[str, bool] = {}
    for p in submission_paths(names):
        entries[p.parts[0]] = entries.get(p.parts[0], False) or len(p.parts) > 1
    return entries


def _check(task: str, entries: dict[str, bool], samples: "set[str]") -> LayoutCheck:
    check = LayoutCheck(task)
    check.matched, check.unmatched = get_task(task).match_names(entries, samples)
    return check


def layout_check(task: str, names: Iterable[str]) -> LayoutCheck:
    """Match a zip's member names against ``task``'s layout (and, when nothing matches, the others')."""
    names = list(names)
    entries = top_level_entries(names)
    samples = sample_folders(str(p) for p in submission_paths(names))
    check = _check(task, entries, samples)
    if not check.matched:
        others = {t: _check(t, entries, samples).matched for t in catalog.task_names(with_paper_table=True)
                  if t != task}
        best = max(others, key=lambda t: others[t], default=None)
        if best is not None and others[best] > 0:
            check.best_other = best
    return check


def layout_help(task: str) -> str:
    """The layout of one task's submission in words, with an example tree (Markdown)."""
    spec = catalog.task(task)
    tree = "\n".join(["my_model.zip", *(f"└── {line}" if i == len(spec.example_tree) - 1 else f"├── {line}"
                                        for i, line in enumerate(spec.example_tree))])
    samples = (f" A stochastic model may give {_escape(samples_layout(spec.prediction_suffixes[0], spec.prediction_dirs))}."
               if spec.samples else "")
    return (f"**{spec.label}**: one entry per clip, named by its clip id "
            f"(`actor_XXXX_<emotion>_action_YY_script_ZZZ`): {_escape(spec.prediction)}.{samples} The zip may wrap the "
            f"files in one folder. {PARTIAL_HELP}\n\n```\n{tree}\n```")


#: Failing clips listed by name in the Space; the rest are counted.
SHOWN_REFUSALS = 20


def refusals_message(coverage, root: "str | None" = None, limit: int = SHOWN_REFUSALS) -> str:
    """The clips the scorer's checks refuse (``hugvis evaluate --check-only``'s ``clip: why`` lines),
    one Markdown line each, escaped; "" when every matched clip passes. ``root`` (the extraction
    folder) is cut from the lines: a reader sees the zip's member names, never the server's folders.

    Example:
        >>> from hug_vis_dataset.scoring.coverage import Coverage
        >>> cov = Coverage("vision_driven", "m", failed={"c1": "SubmissionError: wrong resolution"})
        >>> print(refusals_message(cov))
        **1 clip(s) would fail the scorer's checks:**
        - c1: SubmissionError: wrong resolution
    """
    lines = coverage.failure_lines()
    if root is not None:
        lines = [line.replace(f"{root}/", "") for line in lines]
    if not lines:
        return ""
    shown = [f"- {markdown_text(line)}" for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"- ... and {len(lines) - limit} more")
    return "\n".join([f"**{len(lines)} clip(s) would fail the scorer's checks:**", *shown])


#: What the Score tab says about clips left out: the board's rule (leaderboard.board.PARTIAL_RULE), in the tab's words.
PARTIAL_HELP = ("Clips you leave out are reported as missing: the run is still scored and shown, and ranked only among "
                "runs that miss clips too, never among complete runs.")


def ambiguous_refusal(coverage) -> str:
    """Why an upload is refused: files that cannot be told apart (two for one clip, names that are no clip of the
    grid), in one line escaped for Markdown. Missing clips are no reason (:data:`PARTIAL_HELP`).

    Example:
        >>> from hug_vis_dataset.scoring.coverage import Coverage
        >>> print(ambiguous_refusal(Coverage("matting", "m", grid_size=28, predicted=2, duplicates={"c1": ["a", "b"]})))
        1 clip(s) have two or more files (first c1); rename or remove the extra files so that each clip has one
    """
    counts = [(len(coverage.duplicates), "have two or more files", next(iter(coverage.duplicates), "")),
              (len(coverage.unmatched) + len(coverage.extra), "are named by no clip of the grid",
               next(iter([*coverage.unmatched, *coverage.extra]), ""))]
    said = "; ".join(f"{n} clip(s) {what} (first {first})" for n, what, first in counts if n)
    return markdown_text(f"{said}; rename or remove the extra files so that each clip has one")
