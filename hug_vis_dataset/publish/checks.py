"""Whether a repository folder is fit to publish: its card, its requirements, the bundled wheel.

Offline checks of a dataset or Space card (:func:`validate_card`, :func:`ensure_gated`); a Space's
``requirements.txt`` must name this library's version exactly or a bundled wheel of it
(:func:`check_requirements`), and that version must be installable (:func:`check_installable`
asks the package index, failing closed); a bundled wheel must hold exactly this checkout's code
(:func:`check_wheel`). The requirement text comes from :mod:`hug_vis_dataset.publish.release_info`.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from . import release_info
from ..errors import HugvisError

#: The library's source folder (what a bundled wheel must match).
PACKAGE_DIR = Path(__file__).resolve().parents[1]
SPACE_SDKS = ("gradio", "streamlit", "docker", "static")
GATED_FIELDS = {
    "extra_gated_prompt": (
        "HUG-VIS contains recordings of real actors. You agree to use it for non-commercial research only, "
        "not to identify, contact or impersonate the actors, and not to redistribute the media."),
    "extra_gated_fields": {"Name": "text", "Affiliation": "text", "I agree to the terms above": "checkbox"},
}


@dataclass(frozen=True)
class RepoTarget:
    """One repository to publish: its Hub id, type and the local folder holding its files."""

    repo_id: str
    repo_type: str  # "dataset" or "space"
    folder: Path
    space_sdk: "str | None" = None


class PublishError(HugvisError, RuntimeError):
    """A folder is not fit to publish (bad card, missing file, unpinned requirements, a symlink)."""


class PublishProblems(PublishError):
    """Every problem found in one pass, one line each (naming the folder, the file and the fix),
    then a count line: a user fixes them all before running again, not one per run.

    Example:
        >>> print(PublishProblems(["m/README.md: no title; fix: add one", "n/n.py is missing; fix: regenerate"], 2))
        m/README.md: no title; fix: add one
        n/n.py is missing; fix: regenerate
        not fit to publish: 2 problem(s) in 2 folder(s); fix each one above and run again
    """

    def __init__(self, problems: "Iterable[str]", folders: "int | None" = None):
        self.problems = list(problems)
        self.folders = folders
        where = "" if folders is None else f" in {folders} folder(s)"
        count = f"not fit to publish: {len(self.problems)} problem(s){where}; fix each one above and run again"
        super().__init__("\n".join([*self.problems, count]))


class IndexLookupError(RuntimeError):
    """The package index could not be asked which versions exist (publishing then refuses)."""


# Answers "which versions of this distribution can pip install?"; raises IndexLookupError when it cannot tell.
IndexLookup = Callable[[str], "set[str]"]
PYPI_JSON_URL = "https://pypi.org/pypi/{name}/json"


# --------------------------------------------------------------------------- cards
def _split_front_matter(text: str) -> tuple[dict, str]:
    import yaml

    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end < 0:
        raise PublishError("README front matter is not closed by '---'")
    data = yaml.safe_load(text[4:end]) or {}
    return data, text[end + 4:].lstrip("\n")


def validate_card(folder: "str | Path", repo_type: str) -> list[str]:
    """Offline checks of a repo card with huggingface_hub's card classes; returns the problems found.

    ``RepoCard.validate`` posts to the Hub, so offline we parse the card with the class of its repo
    type (``DatasetCard`` / ``SpaceCard``), which raises on malformed YAML, and check what the Hub
    would reject: a Space needs a known ``sdk`` and an existing ``app_file``; a dataset's
    ``configs`` must point at files that exist; the dataset card must be gated.
    """
    from huggingface_hub import DatasetCard, SpaceCard

    folder = Path(folder)
    readme = folder / "README.md"
    if not readme.is_file():
        return [f"{folder}: no README.md card"]
    cls = {"dataset": DatasetCard, "space": SpaceCard}[repo_type]
    try:
        card = cls.load(readme)
    except Exception as err:  # malformed YAML or metadata: report, do not crash the whole publish
        return [f"{readme}: card does not parse: {err}"]
    data = card.data.to_dict()
    problems = []
    if not card.text.strip():
        problems.append(f"{readme}: card has no text below the YAML")
    if repo_type == "space":
        if data.get("sdk") not in SPACE_SDKS:
            problems.append(f"{readme}: sdk {data.get('sdk')!r} is not one of {SPACE_SDKS}")
        app_file = data.get("app_file") or "app.py"
        if data.get("sdk") in ("gradio", "streamlit") and not (folder / app_file).is_file():
            problems.append(f"{readme}: app_file {app_file!r} does not exist")
        if not data.get("title"):
            problems.append(f"{readme}: no title")
        if data.get("sdk") == "gradio":
            # What the Hub builds: gradio==sdk_version on python_version, then requirements.txt.
            from .module_folders import GRADIO_VERSION, PYTHON_VERSION

            if str(data.get("sdk_version")) != GRADIO_VERSION:
                problems.append(f"{readme}: sdk_version {data.get('sdk_version')!r} is not the Gradio the apps are "
                                f"written for ({GRADIO_VERSION})")
            if str(data.get("python_version")) != PYTHON_VERSION:
                problems.append(f"{readme}: python_version {data.get('python_version')!r} is not {PYTHON_VERSION!r} "
                                "(the stack is measured on it)")
    else:
        configs = data.get("configs") or []
        if not configs:
            problems.append(f"{readme}: no configs listed")
        for config in configs:
            files = config.get("data_files") or []
            files = files if isinstance(files, list) else [files]
            for spec in files:
                paths = spec.get("path") if isinstance(spec, dict) else spec
                for pattern in (paths if isinstance(paths, list) else [paths]):
                    if not list(folder.glob(str(pattern))):
                        problems.append(f"{readme}: config {config.get('config_name')!r} data_files "
                                        f"{pattern!r} matches no file")
        if not data.get("extra_gated_prompt"):
            problems.append(f"{readme}: the dataset card is not gated (no extra_gated_prompt)")
    return problems


def ensure_gated(readme: "str | Path") -> bool:
    """Add the gating fields to a dataset card that lacks them; returns whether the card changed."""
    import yaml

    readme = Path(readme)
    data, body = _split_front_matter(readme.read_text(encoding="utf-8"))
    if data.get("extra_gated_prompt"):
        return False
    data.update(GATED_FIELDS)
    front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    readme.write_text(f"---\n{front}---\n\n{body}", encoding="utf-8")
    return True


def library_requirement(folder: "str | Path") -> "tuple[Any, list[str]]":
    """The ``hug-vis`` line of a Space's ``requirements.txt``, parsed, and the other requirement/option lines.

    Returns ``(None, lines)`` when no line names the library. Raises :class:`PublishError` for a
    missing file or an unparsable line.
    """
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    req = Path(folder) / "requirements.txt"
    if not req.is_file():
        raise PublishError(f"{req} is missing")
    found, others = None, []
    for raw in req.read_text(encoding="utf-8").splitlines():
        line = raw.split(" #")[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line or line.startswith("-"):
            if line:  # pip options stay; blank and comment lines are dropped
                others.append(raw.rstrip())
            continue
        try:
            parsed = Requirement(line)
        except InvalidRequirement as err:
            raise PublishError(f"{req}: bad line {line!r}: {err}") from None
        if canonicalize_name(parsed.name) == release_info.DISTRIBUTION:
            found = parsed
        else:
            others.append(raw.rstrip())
    return found, others


def check_requirements(folder: "str | Path") -> list[str]:
    """A Space's ``requirements.txt`` must name this library's version exactly: ``hug-vis==<version>``
    (extras allowed), or a direct reference to a wheel of that version bundled in the folder.

    Example:
        >>> import tempfile, pathlib
        >>> from hug_vis_dataset import __version__
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "requirements.txt").write_text(f"hug_vis[space]=={__version__}\\n")
        >>> check_requirements(d)
        []
        >>> _ = (d / "requirements.txt").write_text("hug-vis>=0.1\\n"); len(check_requirements(d))
        1
    """
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    folder = Path(folder)
    req = folder / "requirements.txt"
    pin = release_info.requirement()
    try:
        parsed, _ = library_requirement(folder)
    except PublishError as err:
        return [str(err)]
    if parsed is None:
        return [f"{req} does not pin {pin}"]
    if parsed.url:
        wheel = parsed.url.rsplit("/", 1)[-1]
        try:
            name, version, _, _ = parse_wheel_filename(wheel)
        except InvalidWheelFilename:
            return [f"{req}: {parsed.url} is not a wheel"]
        if str(version) != release_info.package_version():
            return [f"{req}: bundled wheel {wheel} is version {version}, the library is "
                    f"{release_info.package_version()}"]
        if not (folder / wheel).is_file():
            return [f"{req} names the wheel {wheel}, which is not in the Space folder"]
        return []
    if str(parsed.specifier) != f"=={release_info.package_version()}":
        return [f"{req} does not pin {pin}"]
    return []


def check_source_requirements(folder: "str | Path") -> list[str]:
    """The requirements of a Space's *source* folder: ``hug-vis[...]`` unversioned (publish pins it) or
    pinned to exactly this version; a wheel reference or another version is stale.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "requirements.txt").write_text("hug-vis[hub]\\n"); check_source_requirements(d)
        []
        >>> _ = (d / "requirements.txt").write_text("hug-vis==0.0.1\\n"); len(check_source_requirements(d))
        1
    """
    req = Path(folder) / "requirements.txt"
    pin = release_info.requirement()
    try:
        parsed, _ = library_requirement(folder)
    except PublishError as err:
        return [str(err)]
    if parsed is None or parsed.url or str(parsed.specifier) not in ("", f"=={release_info.package_version()}"):
        return [f"{req} does not pin {pin} (write it unversioned, as hug-vis[...], or with this version)"]
    return []


def pypi_versions(name: str, timeout: float = 10.0, url_template: str = PYPI_JSON_URL) -> set[str]:
    """Versions of ``name`` on the package index with at least one file that is not yanked.

    Uses the index's JSON API with a short timeout. A distribution the index does not know is an
    empty set; any other failure (offline, timeout, bad answer) raises :class:`IndexLookupError`,
    so a caller that needs a "yes" fails closed.
    """
    import urllib.error
    import urllib.request

    url = url_template.format(name=name)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = json.load(response)
    except urllib.error.HTTPError as err:
        if err.code == 404:
            return set()
        raise IndexLookupError(f"{url} answered HTTP {err.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise IndexLookupError(f"cannot read {url}: {getattr(err, 'reason', err)}") from None
    releases = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(releases, dict):
        raise IndexLookupError(f"{url} did not list releases")
    return {version for version, files in releases.items() if any(not f.get("yanked") for f in files)}


def check_installable(targets: Iterable[RepoTarget], index_versions: IndexLookup = pypi_versions,
                      private: bool = False) -> list[str]:
    """Whether each Space's build can install the library; returns one line per distinct problem.

    A Space that pins a version needs that version on the package index (``index_versions`` is
    asked once; when it cannot answer, every pinning Space is refused: fail closed). A Space
    that bundles its wheel needs the file in its folder, and must be public: its build fetches
    the wheel from the Space repo without a token.

    Example:
        >>> from hug_vis_dataset import __version__
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "requirements.txt").write_text(f"hug-vis=={__version__}\\n")
        >>> t = [RepoTarget("org/m", "space", d, "gradio")]
        >>> check_installable(t, index_versions=lambda name: {__version__})
        []
        >>> check_installable(t, index_versions=lambda name: set())[0].startswith("hug-vis==")
        True
    """
    problems: dict[str, list[str]] = {}
    versions: "set[str] | IndexLookupError | None" = None
    version = release_info.package_version()
    for target in targets:
        if target.repo_type != "space":
            continue
        found = check_requirements(target.folder)
        if found:
            for problem in found:
                problems.setdefault(problem, []).append(target.repo_id)
            continue
        parsed, _ = library_requirement(target.folder)
        if parsed.url:
            if private:
                problems.setdefault(
                    "a private Space cannot fetch its bundled wheel during its build; publish it public or "
                    f"release {release_info.DISTRIBUTION} {version} first", []).append(target.repo_id)
            continue
        if versions is None:
            try:
                versions = set(index_versions(release_info.DISTRIBUTION))
            except IndexLookupError as err:
                versions = err
        if isinstance(versions, IndexLookupError):
            problem = (f"cannot confirm that {release_info.DISTRIBUTION}=={version} is on the package index "
                       f"({versions}); refusing to publish Spaces that pin it. Bundle the wheel: "
                       f"hugvis publish --wheel dist/{release_info.wheel_filename()}")
        elif version not in versions:
            problem = (f"{release_info.DISTRIBUTION}=={version} is not on the package index, so these Spaces "
                       f"could not build; release it first (docs/RELEASING.md) or bundle the wheel: "
                       f"hugvis publish --wheel dist/{release_info.wheel_filename()}")
        else:
            continue
        problems.setdefault(problem, []).append(target.repo_id)
    return [f"{problem} [{_spaces_named(ids)}]" for problem, ids in problems.items()]


def _spaces_named(ids: list[str]) -> str:
    head = ", ".join(ids[:3])
    return f"{len(ids)} Space(s): {head}" + (", ..." if len(ids) > 3 else "")


def wheel_mismatches(wheel: "str | Path", package_dir: "str | Path" = PACKAGE_DIR) -> list[str]:
    """Files where a wheel and the library source differ (missing, extra or different bytes).

    Publishing a Space with a bundled wheel promises "this Space runs the code of this checkout";
    a wheel built before the last edit would break that promise silently.
    """
    package_dir = Path(package_dir)
    prefix = f"{package_dir.name}/"
    local = {p.relative_to(package_dir).as_posix(): p for p in package_dir.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")}
    out = []
    with zipfile.ZipFile(wheel) as archive:
        packed = {n[len(prefix):]: n for n in archive.namelist() if n.startswith(prefix) and not n.endswith("/")}
        for rel in sorted(set(local) | set(packed)):
            if rel not in packed:
                out.append(f"{prefix}{rel} is not in the wheel")
            elif rel not in local:
                out.append(f"{prefix}{rel} is in the wheel only")
            elif archive.read(packed[rel]) != local[rel].read_bytes():
                out.append(f"{prefix}{rel} differs")
    return out


def write_space_requirements(folder: "str | Path", space_kind: str, wheel_url: "str | None" = None) -> str:
    """Rewrite the library line of a Space's ``requirements.txt`` from :mod:`release_info`; returns it.

    The extras the source line names are kept, other lines are kept verbatim. With ``wheel_url``
    the line is a direct reference to that wheel, and the install command written into the
    Space's module and card (generated from the same function, so matched exactly) names it too.
    """
    folder = Path(folder)
    parsed, others = library_requirement(folder)
    extras = release_info.space_extras(space_kind, parsed.extras if parsed is not None else ())
    line = release_info.requirement(extras, wheel_url)
    (folder / "requirements.txt").write_text("\n".join([line, *others]) + "\n", encoding="utf-8")
    if wheel_url is not None:
        pinned, bundled = release_info.install_command(extras), release_info.install_command(extras, wheel_url)
        for path in [*sorted(folder.glob("*.py")), folder / "README.md"]:
            if path.is_file() and pinned in (text := path.read_text(encoding="utf-8")):
                path.write_text(text.replace(pinned, bundled), encoding="utf-8")
    return line


def check_wheel(wheel: "str | Path", package_dir: "str | Path | None" = None) -> Path:
    """The wheel to bundle, checked: ours, this version, and built from this checkout's code."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

    wheel = Path(wheel)
    if not wheel.is_file():
        raise PublishError(f"wheel {wheel} does not exist; build it with: python -m build")
    try:
        name, version, _, _ = parse_wheel_filename(wheel.name)
    except InvalidWheelFilename as err:
        raise PublishError(f"{wheel} is not a wheel file name: {err}") from None
    if canonicalize_name(name) != release_info.DISTRIBUTION or str(version) != release_info.package_version():
        raise PublishError(f"{wheel} is {name} {version}, not {release_info.DISTRIBUTION} "
                           f"{release_info.package_version()}; rebuild it with: python -m build")
    stale = wheel_mismatches(wheel, package_dir or PACKAGE_DIR)
    if stale:
        raise PublishError(f"{wheel} was not built from this code ({stale[0]}"
                           + (f" and {len(stale) - 1} more" if len(stale) > 1 else "")
                           + "); rebuild it with: python -m build")
    return wheel
