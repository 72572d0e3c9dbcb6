"""Rater sessions of a study: the append-only session log, opaque item codes, stop and resume.

Each new session is one JSON line of ``<ratings dir>/sessions.jsonl``::

    {"study": "demo", "rater": "r1", "session": 1, "seed": 123..., "time": ...,
     "items": [{"code": "i3fa9c2d1e0", "key": "audio_driven|<clip>|talk_good", "kind": "system"}, ...]}

written under a file lock, so two raters starting at once never get the same assignment counts.
The ``key`` (which names the system) stays on the server; a rater only ever sees the ``code``,
``i`` + 10 hex digits of a keyed BLAKE2 hash (the key is a random secret of the study kept next to
the log), so no code says which system, clip or session it is.

**Resume.** A rater's current session is their latest one with items not yet answered (answered
= the code is in the ratings store); :meth:`SessionLog.open_session` returns it, in its recorded
order, or plans a new one (:func:`~.schedule.plan_session`) when the last one is finished.

Example:
    >>> import tempfile, os
    >>> from hug_vis_dataset.studies.spec import study_from_mapping
    >>> spec = study_from_mapping({"tasks": {"voice_cloning": {"systems": ["a", "b"]}}, "ratings_per_item": 1,
    ...     "items_per_session": 1, "clips": ["actor_0001_happy_action_01_script_001"]})
    >>> log = SessionLog(os.path.join(tempfile.mkdtemp(), "sessions.jsonl"), spec)
    >>> first = log.open_session("r1", answered=set())
    >>> log.open_session("r1", answered=set()).codes() == first.codes()   # resumed, not re-planned
    True
    >>> len(log.open_session("r1", answered=set(first.codes())).entries)   # finished: the next session
    1
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..readers.json_files import loads_strict
from .schedule import plan_session, session_rng, session_seed
from .spec import StudyItem, StudySpec

SESSIONS_FILE = "sessions.jsonl"


@dataclass(frozen=True)
class Session:
    """One rater's session: ``entries`` are (opaque code, item) in presentation order."""

    rater: str
    number: int
    seed: int
    entries: tuple[tuple[str, StudyItem], ...]

    def codes(self) -> list[str]:
        return [code for code, _ in self.entries]

    def remaining(self, answered: "set[str]") -> list[tuple[str, StudyItem]]:
        """The entries not answered yet, in order."""
        return [(code, item) for code, item in self.entries if code not in answered]


class SessionLog:
    """The study's sessions on disk (JSON lines) and the code -> item lookup.

    Args:
        path: the session log (created with the first session).
        spec: the study.
    """

    def __init__(self, path: "str | Path", spec: StudySpec):
        self.path = Path(path)
        self.spec = spec
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.secret_path = self.path.with_name(self.path.name + ".secret")
        self._items = {i.key: i for i in spec.items() + spec.gold_items()}

    # ------------------------------------------------------------------ reading
    def sessions(self) -> list[Session]:
        """Every readable session of this study, in log order (lines of other studies or items
        the study no longer has are left out: the study file decides what counts)."""
        out = []
        if not self.path.is_file():
            return out
        with open(self.path, "rb") as handle:
            for raw in handle:
                try:
                    record = loads_strict(raw.decode("utf-8"), self.path)  # a duplicated key: a bad line
                    if record.get("study") != self.spec.name:
                        continue
                    entries = tuple((str(e["code"]), self._items[e["key"]]) for e in record["items"])
                    out.append(Session(str(record["rater"]), int(record["session"]), int(record["seed"]), entries))
                except (UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
                    continue  # a cut or foreign line: the sessions before and after still count
        return out

    def lookup(self) -> dict[str, tuple[str, StudyItem]]:
        """``code -> (rater, item)`` over every session."""
        return {code: (s.rater, item) for s in self.sessions() for code, item in s.entries}

    def counts(self) -> Counter:
        """Assignments per (non-gold) item key so far."""
        return Counter(item.key for s in self.sessions() for _, item in s.entries if item.kind == "system")

    def latest(self, rater: str) -> "Session | None":
        """The rater's latest session, or None (nothing is planned)."""
        mine = [s for s in self.sessions() if s.rater == rater]
        return mine[-1] if mine else None

    # ------------------------------------------------------------------ writing
    def open_session(self, rater: str, answered: "set[str]") -> Session:
        """The rater's unfinished session (resume), else a newly planned one (may be empty when
        the study is fully scheduled or holds nothing this rater has not seen)."""
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.lock_path), timeout=30):
            sessions = self.sessions()
            mine = [s for s in sessions if s.rater == rater]
            if mine and mine[-1].remaining(answered):
                return mine[-1]
            number = len(mine) + 1
            seed = session_seed(self.spec.seed, rater, number)
            counts = Counter(i.key for s in sessions for _, i in s.entries if i.kind == "system")
            seen = {i.key for s in mine for _, i in s.entries}
            planned = plan_session(self.spec.items(), self.spec.gold_items(), counts, seen,
                                   self.spec.items_per_session, self.spec.n_gold(), self.spec.ratings_per_item,
                                   session_rng(self.spec.seed, rater, number), self.spec.group_rule,
                                   {self.spec.group_of(i) for s in mine for _, i in s.entries})
            if not planned:
                return Session(rater, number, seed, ())
            secret = self._secret()
            entries = tuple((item_code(secret, rater, number, i), item) for i, item in enumerate(planned))
            record = {"study": self.spec.name, "rater": rater, "session": number, "seed": seed, "time": time.time(),
                      "items": [{"code": c, "key": i.key, "kind": i.kind} for c, i in entries]}
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            return Session(rater, number, seed, entries)

    def _secret(self) -> bytes:
        """The study's code key: random once, then read (called under the lock)."""
        if not self.secret_path.is_file():
            self.secret_path.write_text(secrets.token_hex(16), encoding="utf-8")
        return bytes.fromhex(self.secret_path.read_text(encoding="utf-8").strip())


def item_code(secret: bytes, rater: str, session: int, position: int) -> str:
    """The opaque code of one session entry: nothing in it names the system, clip or order.

    Example:
        >>> code = item_code(b"k" * 16, "r1", 1, 0)
        >>> len(code), code.startswith("i"), code == item_code(b"x" * 16, "r1", 1, 0)
        (11, True, False)
    """
    digest = hashlib.blake2s(f"{rater}\0{session}\0{position}".encode(), key=secret, digest_size=5)
    return "i" + digest.hexdigest()


def coverage(spec: StudySpec, sessions: "list[Session]", answered: "dict[str, set[str]]") -> dict:
    """Study coverage: items by number of ratings, raters, completion.

    Args:
        spec: the study.
        sessions: :meth:`SessionLog.sessions`.
        answered: rater -> the codes they answered.

    Returns:
        ``{"items": n, "target": k, "by_ratings": {count: items}, "raters": n, "sessions": n,
        "answers": n, "gold_answers": n, "completion": share of the k x items ratings done,
        "per_rater": {rater: (answered, assigned)}}``.

    Example:
        >>> from hug_vis_dataset.studies.spec import study_from_mapping
        >>> spec = study_from_mapping({"tasks": {"voice_cloning": {"systems": ["a"]}}, "ratings_per_item": 2,
        ...                            "clips": ["actor_0001_happy_action_01_script_001"]})
        >>> coverage(spec, [], {})["by_ratings"]
        {0: 1}
    """
    done: Counter = Counter()
    gold = 0
    per_rater: dict[str, list[int]] = {}
    for s in sessions:
        mine = answered.get(s.rater, set())
        stats = per_rater.setdefault(s.rater, [0, 0])
        for code, item in s.entries:
            stats[1] += 1
            if code in mine:
                stats[0] += 1
                if item.kind == "system":
                    done[item.key] += 1
                else:
                    gold += 1
    items = spec.items()
    by = Counter(done.get(i.key, 0) for i in items)
    target = spec.ratings_per_item * len(items)
    answers = sum(min(done.get(i.key, 0), spec.ratings_per_item) for i in items)
    return {"items": len(items), "target": spec.ratings_per_item, "by_ratings": dict(sorted(by.items())),
            "raters": len(per_rater), "sessions": len(sessions), "answers": sum(done.values()), "gold_answers": gold,
            "completion": answers / target if target else 0.0,
            "per_rater": {r: tuple(v) for r, v in sorted(per_rater.items())},
            "min_raters": spec.min_raters() if spec.group_rule is not None else 0}


def coverage_markdown(cov: dict) -> str:
    """:func:`coverage` as Markdown (no system names: safe to show to raters)."""
    levels = ", ".join(f"{n} item(s) with {c} rating(s)" for c, n in cov["by_ratings"].items())
    lines = [f"**Coverage:** {cov['items']} items, target {cov['target']} ratings each; {levels}.",
             f"{cov['raters']} rater(s), {cov['sessions']} session(s), {cov['answers']} answer(s) "
             f"+ {cov['gold_answers']} gold; completion {100 * cov['completion']:.1f}%."]
    if cov.get("min_raters"):  # the emotion study: one item per clip and rater
        lines.append(f"Each rater meets a clip once (gold items included), so completing the study takes at least "
                     f"{cov['min_raters']} raters (ratings per item x input settings, more with gold items).")
    return "\n\n".join(lines)
