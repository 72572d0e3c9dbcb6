"""What a submitter sees of the queue: one row per request, for the command line and the Space alike.

Example:
    >>> from hug_vis_dataset.leaderboard.requests import QueueState, ScoringRequest
    >>> pending = ScoringRequest("matting", "MyNet", "me/mynet", "a" * 40, "me", "2026-12-01T10:00:00+00:00")
    >>> row = status_rows(QueueState("h", [pending]))[0]
    >>> row["State"], row["Queue position"], row["Progress"]
    ('PENDING', '1', '')
"""

from __future__ import annotations

from typing import Iterable

from ..presentation.escaping import html_text, one_line
from .requests import RUNNING, QueueState, ScoringRequest, seconds_since, summarise

COLUMNS = ("Task", "Model", "State", "Queue position", "Submitted", "Started", "Last heartbeat", "Progress",
           "Finished", "Predictions", "Result or reason")


def _short_time(stamp: "str | None") -> str:
    return (stamp or "").replace("T", " ").replace("+00:00", " UTC")


def _progress(request: ScoringRequest) -> str:
    if not request.total:
        return ""
    return f"{request.scored}/{request.total} clips ({100 * request.scored / request.total:.0f}%)"


def status_row(state: QueueState, request: ScoringRequest) -> dict[str, str]:
    """One request in words (every value is text taken from the request: escape it where shown)."""
    position = state.position(request)
    heartbeat = _short_time(request.heartbeat_at) if request.status == RUNNING else ""
    if request.status == RUNNING and request.heartbeat_at:
        heartbeat += f" ({seconds_since(request.heartbeat_at):.0f} s ago)"
    return {
        "Task": request.task, "Model": request.model, "State": request.status,
        "Queue position": "" if position is None else str(position),
        "Submitted": _short_time(request.submitted_at), "Started": _short_time(request.claimed_at),
        "Last heartbeat": heartbeat, "Progress": _progress(request), "Finished": _short_time(request.finished_at),
        "Predictions": f"{request.predictions_repo}@{request.revision[:12]}",
        "Result or reason": one_line(request.run_link or request.failure or ""),
    }


def status_rows(state: QueueState, model: "str | None" = None, task: "str | None" = None) -> list[dict[str, str]]:
    """The rows of the requests that match, oldest first."""
    return [status_row(state, r) for r in state.requests
            if (model is None or r.model == model) and (task is None or r.task == task)]


def status_lines(state: QueueState, model: "str | None" = None, task: "str | None" = None) -> Iterable[str]:
    """``hugvis leaderboard status``: a Markdown table, the counts per state and the damaged files."""
    rows = status_rows(state, model, task)
    counts = summarise(state.requests)
    yield f"requests at {state.head[:12]}: " + ", ".join(f"{n} {s}" for s, n in counts.items())
    if not rows:
        yield "no request matches" if (model or task) else "the queue is empty"
    else:
        yield "| " + " | ".join(COLUMNS) + " |"
        yield "|" + "---|" * len(COLUMNS)
        for row in rows:
            yield "| " + " | ".join(row[c].replace("|", "\\|") for c in COLUMNS) + " |"
    for path, why in state.damaged.items():
        yield f"- damaged request file {path}: {why} (never scored; fix or delete it)"


def status_html(state: QueueState, model: "str | None" = None) -> str:
    """The Space's status table (plain HTML; every value escaped)."""
    rows = status_rows(state, model)
    counts = summarise(state.requests)
    head = html_text(", ".join(f"{n} {s.lower()}" for s, n in counts.items()))
    if not rows:
        return f"<p>{head}</p><p>{'No request for ' + html_text(model) if model else 'The queue is empty.'}</p>"
    cells = "".join(f"<th>{html_text(c)}</th>" for c in COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{html_text(row[c])}</td>" for c in COLUMNS) + "</tr>" for row in rows)
    return f"<p>{head}</p><table class='hugvis-queue'><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"


__all__ = ["COLUMNS", "status_html", "status_lines", "status_row", "status_rows"]
