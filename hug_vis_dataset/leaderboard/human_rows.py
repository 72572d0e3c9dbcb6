"""The MOS tables of the board (Tables 6, 8 and 10): each task's human source (:mod:`hug_vis_dataset.studies.judgments`:
the study's ratings once they cover the task, else a synthetic release's simulated raters, both counted with the
study's quality control) turned into board rows (:func:`~hug_vis_dataset.leaderboard.board.mos_rows`), the per-clip MOS
the board's verdicts compare, and the notes under a MOS table.

One code path for every door that shows a MOS table beside the stored runs: the Space's Leaderboards tab
(:class:`hug_vis_dataset.space.explorer.Explorer`) and ``hugvis leaderboard show RESULTS --table 6``, which reads the
store's ratings log (``RESULTS/ratings/ratings.jsonl``, what the Space's MOS study writes), a ratings CSV
(``--mos``, as ``hugvis report --mos``) and, with ``--release``, the synthetic release's simulated raters.

Example:
    >>> import pandas as pd
    >>> clips = [f"actor_000{a}_sad_action_01_script_001" for a in (1, 2)]
    >>> study = pd.DataFrame([{"rater": r, "task": "voice_cloning", "model": m, "criterion": c, "clip_id": k,
    ...                        "score": 4 if m == "x" else 2} for r in ("a", "b") for m in ("x", "y")
    ...                       for c in ("id_similarity", "emotion_naturalness") for k in clips])
    >>> human = human_rows(study, None, synthetic=True)
    >>> rows = pd.concat(human.board_rows())
    >>> sorted(zip(rows["model"], rows["metric"], rows["text"]))[:2]
    [('x', 'mos_emotion', '4.00'), ('x', 'mos_similarity', '4.00')]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import catalog
from ..datamodel.layout import SIMULATED_RATINGS_FILE, SIMULATED_SYSTEMS_DIR
from ..studies.judgments import SIMULATED, Source, task_sources
from ..studies.mos_qc import QcSelection
from ..studies.rater_qc import QcRules
from .board import SUBMITTED, SYNTHETIC, mos_rows

#: After a model whose MOS rows are the synthetic release's simulated raters.
SIMULATED_RATERS = " (simulated raters)"


@dataclass(frozen=True)
class HumanRows:
    """Every MOS task's human source, counted, and what the board draws from them.

    Attributes:
        sources: task -> :class:`~hug_vis_dataset.studies.judgments.Source`.
        study_qc, simulated_qc: the quality-control selection of the study's ratings and of the simulated raters
            (None: no simulated raters).
        synthetic: the ratings rate a synthetic release (their rows are of origin ``synthetic``).
    """

    sources: dict
    study_qc: QcSelection
    simulated_qc: "QcSelection | None"
    synthetic: bool

    def each(self) -> list:
        """``(source, origin, name suffix)`` of each task with ratings."""
        origin = SYNTHETIC if self.synthetic else SUBMITTED
        return [(s, SYNTHETIC if s.whose == SIMULATED else origin, SIMULATED_RATERS if s.whose == SIMULATED else "")
                for s in self.sources.values() if s.ratings is not None and len(s.ratings)]

    def board_rows(self) -> list:
        """The MOS board rows of each task's source (:func:`~hug_vis_dataset.leaderboard.board.mos_rows`)."""
        from ..studies.status import aggregate_ratings

        return [mos_rows(aggregate_ratings(source.ratings), origin, suffix) for source, origin, suffix in self.each()]

    def clip_rows(self) -> list:
        """The per-clip MOS each verdict of a MOS column compares (:func:`~hug_vis_dataset.studies.status.mos_clip_rows`)."""
        from ..studies.status import mos_clip_rows

        return [mos_clip_rows(source.ratings, suffix) for source, _, suffix in self.each()]

    def notes(self, all_raters_how: "str | None" = None) -> list[str]:
        """The quality-control lines under a MOS table (one per set of ratings with raters; ``all_raters_how``: how
        this door counts every rater, default the Space's box), then which source each task shows and why."""
        lines = [f"{what}: {qc.note() if all_raters_how is None else qc.note(all_raters_how)}"
                 for what, qc in (("Study ratings", self.study_qc), ("Simulated raters", self.simulated_qc))
                 if qc is not None and qc.raters]
        return lines + [f"{catalog.task(t).label}: {s.note}" for t, s in self.sources.items() if s.note]


def human_rows(study: Any, simulated: Any, synthetic: bool, rules: QcRules = QcRules(),
               all_raters: bool = False) -> HumanRows:
    """:class:`HumanRows` of the study's raw ratings (a log's frame or a ratings CSV's path; None: none) and the
    simulated raters' (:func:`simulated_ratings`; None: none), counted with ``rules`` unless ``all_raters``."""
    import pandas as pd

    if study is None:
        study = pd.DataFrame(columns=["rater", "task", "clip_id", "model", "criterion", "score"])
    sources, study_qc, simulated_qc = task_sources(study, simulated, rules, all_raters)
    return HumanRows(sources, study_qc, simulated_qc, synthetic)


def simulated_ratings(release_dir: "str | Path"):
    """A synthetic release's simulated ratings (``simulated_systems/mos_ratings.csv``) with the task of each rated
    system (the ``simulated_systems/<task>/`` folder that holds it); None when the release has none."""
    from ..studies.mos import TASK_CRITERIA, read_ratings

    root = Path(release_dir) / SIMULATED_SYSTEMS_DIR
    path = root / SIMULATED_RATINGS_FILE
    if not path.is_file():
        return None
    valid, _invalid = read_ratings(path)
    task_of = {system.name: task for task in TASK_CRITERIA if (root / task).is_dir()
               for system in (root / task).iterdir() if system.is_dir()}
    return valid.assign(task=valid["model"].map(task_of)).dropna(subset=["task"])


def store_ratings(store) -> Any:
    """The ratings in force of a store's ratings log (``ratings/ratings.jsonl``), or None when it has none."""
    from ..studies.ratings import RatingStore

    path = Path(store.ratings_path)
    return RatingStore(path).frame() if path.is_file() else None


__all__ = ["HumanRows", "SIMULATED_RATERS", "Source", "human_rows", "simulated_ratings", "store_ratings"]
