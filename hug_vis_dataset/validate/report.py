"""What validation found: one :class:`Problem` per finding, gathered in a :class:`ValidationReport`.

Example:
    >>> report = ValidationReport("/r", expected_clips=1, checked_clips=1,
    ...                           problems=[Problem("c", "audio", "missing"), Problem("", "files", "extra", WARNING)])
    >>> report.ok, len(report.errors), len(report.warnings)
    (False, 1, 1)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class Problem:
    """One finding. ``clip_id`` is empty for release-level problems.

    ``severity`` is ``"error"`` (the release is not valid) or ``"warning"`` (worth a look, e.g.
    a media file no CSV row lists; it neither fails validation nor excludes a clip from a build).
    """

    clip_id: str
    check: str
    message: str
    severity: str = ERROR


@dataclass
class ValidationReport:
    root: str
    expected_clips: int
    checked_clips: int
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def errors(self) -> list[Problem]:
        """The findings that make the release invalid (warnings excluded)."""
        return [p for p in self.problems if p.severity == ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == WARNING]

    def by_clip(self) -> dict[str, list[Problem]]:
        grouped: dict[str, list[Problem]] = {}
        for problem in self.problems:
            grouped.setdefault(problem.clip_id, []).append(problem)
        return grouped

    def to_json(self) -> str:
        return json.dumps(
            {
                "root": self.root,
                "ok": self.ok,
                "expected_clips": self.expected_clips,
                "checked_clips": self.checked_clips,
                "problem_count": len(self.errors),
                "warning_count": len(self.warnings),
                "problems": [asdict(p) for p in self.problems],
            },
            indent=2,
            ensure_ascii=False,
        )

    def to_text(self) -> str:
        lines = [
            f"release: {self.root}",
            f"expected clips: {self.expected_clips}, checked: {self.checked_clips}, problems: {len(self.errors)}, "
            f"warnings: {len(self.warnings)}",
        ]
        for problem in self.problems:
            where = problem.clip_id or "(release)"
            tag = "" if problem.severity == ERROR else "warning: "
            lines.append(f"  {where}: {tag}[{problem.check}] {problem.message}")
        lines.append("OK" if self.ok else "FAILED")
        return "\n".join(lines)
