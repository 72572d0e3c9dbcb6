"""What a published Space or module needs to install this package: one place for the pin and the command.

Example:
    >>> install_command()
    'pip install hug-vis==0.1.0'
    >>> requirements_lines("metric")
    ['hug-vis==0.1.0', 'evaluate==0.4.6']
"""

from __future__ import annotations

from . import __version__

DISTRIBUTION = "hug-vis"
EVALUATE_PIN = "evaluate==0.4.6"
GRADIO_VERSION = "6.31.0"
#: Extras each kind of Space installs.
SPACE_EXTRAS = {"metric": (), "explorer": ("space", "hub", "analysis")}


def package_requirement(extras: "tuple[str, ...]" = ()) -> str:
    """``hug-vis[extras]==<version>``."""
    return f"{DISTRIBUTION}{'[' + ','.join(extras) + ']' if extras else ''}=={__version__}"


def install_command(extras: "tuple[str, ...]" = ()) -> str:
    """The exact command that installs the library a module or Space imports."""
    return f"pip install {package_requirement(extras)}"


def requirements_lines(kind: str) -> list[str]:
    """``requirements.txt`` lines of a published Space of ``kind`` (``metric`` or ``explorer``)."""
    lines = [package_requirement(SPACE_EXTRAS[kind])]
    return lines + [EVALUATE_PIN] if kind == "metric" else lines
