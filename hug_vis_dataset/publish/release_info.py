"""How code published outside this repository installs the library: one source for every install text.

A Space's ``requirements.txt``, an evaluate module's import guard and a metric card's install line
all name the same requirement, built here from ``hug_vis_dataset.__version__`` (the only place the
version is written; ``setup.cfg`` reads it statically). Two forms exist:

* a released version: ``hug-vis[hub]==X.Y.Z`` (must be on the package index before a Space pins it);
* a bundled wheel: ``hug-vis[hub] @ https://huggingface.co/spaces/<org>/<name>/resolve/main/<wheel>``.
  A Space's build runs ``pip install -r requirements.txt`` with only that one file mounted (the
  rest of the repo is copied in later), so a relative ``./hug_vis-....whl`` line would not be found;
  an absolute URL to the wheel *inside the Space repo* is fetched from the Hub during the build.

Example:
    >>> from hug_vis_dataset import __version__
    >>> requirement(("space", "hub")) == f"hug-vis[hub,space]=={__version__}"
    True
    >>> install_command(("hub",), wheel_url="https://h/x/hug_vis-9-py3-none-any.whl")
    'pip install "hug-vis[hub] @ https://h/x/hug_vis-9-py3-none-any.whl"'
"""

from __future__ import annotations

from typing import Iterable, Sequence

from .. import __version__

DISTRIBUTION = "hug-vis"
IMPORT_PACKAGE = "hug_vis_dataset"
# What each kind of published Space needs from the library, beyond a metric's own extras:
# an evaluate module needs `evaluate`/`datasets` (extra `hub`); the explorer its UI and figures.
SPACE_EXTRAS: dict[str, tuple[str, ...]] = {
    "metric": ("hub",),
    "explorer": ("space", "hub", "analysis"),
}
# Where the Hub serves a file of a Space repo; {repo_id} is "org/name", {wheel} the file name.
HUB_WHEEL_URL = "https://huggingface.co/spaces/{repo_id}/resolve/main/{wheel}"


def package_version() -> str:
    """The library's version, as released (``hug_vis_dataset.__version__``)."""
    return __version__


def wheel_filename(version: "str | None" = None) -> str:
    """File name of the pure-Python wheel ``python -m build`` makes (PEP 427 name normalisation).

    Example:
        >>> wheel_filename("1.2.3")
        'hug_vis-1.2.3-py3-none-any.whl'
    """
    return f"{DISTRIBUTION.replace('-', '_')}-{version or __version__}-py3-none-any.whl"


def _extras(extras: Iterable[str]) -> str:
    chosen = sorted({e.strip() for e in extras if e.strip()})
    return f"[{','.join(chosen)}]" if chosen else ""


def requirement(extras: Iterable[str] = (), wheel_url: "str | None" = None) -> str:
    """The PEP 508 requirement on the library: the released version, or a direct reference to a wheel.

    Args:
        extras: extras of ``hug-vis`` (``hub``, ``space``, ...); sorted and deduplicated.
        wheel_url: an absolute URL of a wheel of this version; ``None`` pins the released version.

    Example:
        >>> requirement(("hub", "hub", "analysis"), "file:///w/hug_vis-1-py3-none-any.whl")
        'hug-vis[analysis,hub] @ file:///w/hug_vis-1-py3-none-any.whl'
    """
    if wheel_url is None:
        return f"{DISTRIBUTION}{_extras(extras)}=={__version__}"
    return f"{DISTRIBUTION}{_extras(extras)} @ {wheel_url}"


def install_command(extras: Iterable[str] = (), wheel_url: "str | None" = None) -> str:
    """The exact shell command a user runs to install the library (quoted: ``[`` would glob).

    Example:
        >>> from hug_vis_dataset import __version__
        >>> install_command(("hub",)) == f'pip install "hug-vis[hub]=={__version__}"'
        True
    """
    return f'pip install "{requirement(extras, wheel_url)}"'


def space_extras(space_kind: str, extras: Iterable[str] = ()) -> tuple[str, ...]:
    """The extras a Space of this kind installs: its kind's (:data:`SPACE_EXTRAS`) plus its own, sorted.

    Example:
        >>> space_extras("metric", ("video", "hub"))
        ('hub', 'video')
    """
    if space_kind not in SPACE_EXTRAS:
        raise ValueError(f"unknown Space kind {space_kind!r}; expected one of {sorted(SPACE_EXTRAS)}")
    return tuple(sorted({*SPACE_EXTRAS[space_kind], *extras}))


def requirements_lines(space_kind: str, extras: Iterable[str] = (), wheel_url: "str | None" = None) -> list[str]:
    """The lines of a published Space's ``requirements.txt`` that concern this library.

    Args:
        space_kind: ``"metric"`` (an evaluate module Space) or ``"explorer"``.
        extras: what the Space's own code needs beyond its kind (e.g. ``("torch", "video")`` for LPIPS).
        wheel_url: see :func:`requirement`.

    Example:
        >>> from hug_vis_dataset import __version__
        >>> requirements_lines("metric", ("video",)) == [f"hug-vis[hub,video]=={__version__}"]
        True
    """
    return [requirement(space_extras(space_kind, extras), wheel_url)]


def import_error_message(module_name: str, extras: Iterable[str] = (), wheel_url: "str | None" = None) -> str:
    """The one line an evaluate module raises when the library (or one of its dependencies) is missing.

    ``extras`` are the metric's own; the command installs what its Space installs
    (:func:`space_extras` of kind ``"metric"``), so card, guard and Space agree.
    """
    command = install_command(space_extras("metric", extras), wheel_url)
    return f"the HUG-VIS module {module_name!r} needs the hug-vis library; install it with: {command}"


def import_guard(module_name: str, import_lines: Sequence[str], extras: Iterable[str] = ()) -> str:
    """Source text for the top of an evaluate module: the library imports inside a guard.

    ``evaluate`` scans only unindented import lines and, for a missing package, would tell the
    user to ``pip install hug_vis_dataset`` (the import name, not our distribution). Indented
    inside ``try``, the imports are skipped by that scan and, if they fail, the module itself
    raises with the exact install command. The command is written into the module as a literal:
    the library is what is missing, so nothing can be computed at that point.

    Args:
        module_name: the evaluate module's name (``"dtssd"``).
        import_lines: one ``from hug_vis_dataset... import X`` per line (evaluate's convention).
        extras: the metric's own extras, as given to :func:`requirements_lines` for its Space.

    Example:
        >>> print(import_guard("mad", ["from hug_vis_dataset.metrics.matting import evaluate_paths"])
        ...       .replace(__version__, "V"))
        try:
            from hug_vis_dataset.metrics.matting import evaluate_paths
        except ImportError as _err:  # say how to install the library (evaluate would name the import package)
            raise ImportError("the HUG-VIS module 'mad' needs the hug-vis library; install it with: pip install \\"hug-vis[hub]==V\\"") from _err
    """
    body = []
    for line in import_lines:
        line = line.strip()
        if not line.startswith(("import ", "from ")) or "," in line.split(" import ")[-1] or "\n" in line:
            raise ValueError(f"one plain import per line, got {line!r}")
        body.append(f"    {line}")
    if not body:
        raise ValueError("no import lines")
    message = import_error_message(module_name, extras).replace("\\", "\\\\").replace('"', '\\"')
    return "\n".join([
        "try:",
        *body,
        "except ImportError as _err:  # say how to install the library (evaluate would name the import package)",
        f'    raise ImportError("{message}") from _err',
    ])
