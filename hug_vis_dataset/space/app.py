"""The HUG-VIS explorer app: ``build_app`` (the ``gr.Blocks``) and ``launch``.

The state and callbacks are :class:`~hug_vis_dataset.space.explorer.Explorer` (re-exported here),
the components :mod:`hug_vis_dataset.space.ui`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .explorer import ANALYSES, FINDINGS, SCORED_TASKS, Explorer, table_number  # noqa: F401 (the app's API)
from .style import PAGE_CSS, launch_i18n


def default_release(work_dir: "str | Path") -> Path:
    """A tiny synthetic release (the Space's default when no release is given)."""
    from ..synth import synthesize

    root = Path(work_dir) / "synthetic_release"
    if not (root / "metadata" / "clips.csv").is_file():
        synthesize(root, actors=1, emotions=None, actions=1, scripts=1, seconds=1.0, size=(160, 90))
    return root


def build_app(explorer: Explorer):
    """The ``gr.Blocks`` of the explorer wired to ``explorer``'s callbacks (:mod:`.ui`)."""
    from .ui import build_blocks

    return build_blocks(explorer)


#: An absolute path inside a stored text (a folder, a file, an argument): the server's layout, never served.
_SERVER_PATH = re.compile(r"(?<![\w.:/~-])(?:/[^\s/'\"]+)+/?", re.ASCII)


def public_summary(value):
    """A stored ``summary.json`` as the provenance link serves it: every absolute path in it (the release and the
    predictions folder on the server, an upload's scratch folder, a weight file, the command line's arguments)
    cut to its last part behind ``…/``, so a reader learns what was scored, not where the server keeps it.

    Example:
        >>> public_summary({"provenance": {"predictions": "/srv/uploads/up-3f/talk_good",
        ...                                "command_line": ["evaluate", "--out", "/srv/results"],
        ...                                "note": "failed: /srv/x/a.mp4 is empty; see https://example.org/a/b"}})
        {'provenance': {'predictions': '…/talk_good', 'command_line': ['evaluate', '--out', '…/results'], \
'note': 'failed: …/a.mp4 is empty; see https://example.org/a/b'}}
    """
    if isinstance(value, dict):
        return {k: public_summary(v) for k, v in value.items()}
    if isinstance(value, list):
        return [public_summary(v) for v in value]
    if isinstance(value, str):
        return _SERVER_PATH.sub(lambda m: "…/" + m.group(0).rstrip("/").rsplit("/", 1)[-1], value)
    return value


def provenance_routes(store) -> list:
    """Starlette routes serving each stored run's ``summary.json`` at a stable relative address,
    ``/provenance/<task>/<model>/summary.json`` (the board's links), so no page shows the server's
    folder layout: neither the address nor the served text (:func:`public_summary`). Only a folder of the store
    named by a known task and a valid model name is read.
    """
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from .. import catalog
    from ..readers import InputFileError
    from ..readers.json_files import read_json
    from ..datamodel.results import name_problem

    def summary(request):
        task, model = request.path_params["task"], request.path_params["model"]
        path = Path(store.root) / task / model / "summary.json"
        if task not in catalog.task_names() or name_problem("model", model) or not path.is_file():
            return Response("no such stored run", status_code=404, media_type="text/plain")
        try:  # strict: a stored summary with a duplicated key is not served as if it were whole
            return JSONResponse(public_summary(read_json(path)))
        except InputFileError as err:
            return Response(f"stored run unreadable: {err}", status_code=500, media_type="text/plain")

    return [Route("/provenance/{task}/{model}/summary.json", summary)]


def app_kwargs(explorer: Explorer) -> dict:
    """``demo.launch(app_kwargs=...)`` of the explorer: the provenance routes before Gradio's own."""
    return {"routes": provenance_routes(explorer.store)}


def launch(release_dir: "str | Path | None" = None, results_dir: "str | Path | None" = None,
           port: "int | None" = None, work_dir: "str | Path | None" = None, block: bool = True,
           results_repo: "str | None" = None, rater: bool = False, study: "str | Path | None" = None,
           requests_repo: "str | None" = None):
    """Start the explorer on 127.0.0.1 (analytics off); returns ``(demo, url)`` when ``block`` is False.

    ``results_repo`` (a Hub dataset id) makes the Hub repo the results store, mirrored into
    ``results_dir`` (or the work folder); otherwise ``results_dir`` is the store. ``rater`` starts
    the rater page instead (the blind study alone: no leaderboard, no system names;
    :func:`~hug_vis_dataset.space.mos_study.build_rater_app`), its answers stored in the same
    store; ``study`` is the study file (default ``$HUGVIS_STUDY``, else the default study).
    ``requests_repo`` (a Hub dataset id) adds the Submit tab: requests for the leaderboard's workers
    (docs/LEADERBOARD.md).
    """
    from ..leaderboard import open_store

    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from ..outputs import mark_cache, scratch_folder

    # Gradio keeps a copy of every upload in its temporary folder: marked as the Space's cache, so the Score tab
    # can remove each copy once scored (the guard removes nothing in a folder it was not told is the toolkit's).
    if not os.environ.get("GRADIO_TEMP_DIR"):  # one of our own, removed when the Space ends (stopped or not)
        import atexit

        from .. import stopping
        from ..outputs import discard

        ours = scratch_folder(prefix="hugvis-gradio-")
        stopping.register_removal(ours)
        atexit.register(discard, ours)
        os.environ["GRADIO_TEMP_DIR"] = str(ours)
    mark_cache(os.environ["GRADIO_TEMP_DIR"])
    work = Path(work_dir) if work_dir else scratch_folder(prefix="hugvis-space-")
    release = Path(release_dir) if release_dir else default_release(work)
    store = open_store(results_dir or work / "results", repo_id=results_repo, mirror=results_dir or work / "results")
    explorer = Explorer(release, work_dir=work, store=store)
    if study is not None:
        explorer.mos.study_path = str(study)
    if requests_repo:
        from ..leaderboard.requests import RequestsRepo
        from .submit_tab import SubmitDesk

        explorer.desk = SubmitDesk(RequestsRepo(requests_repo, mirror=work / "requests"), results=store)
    if rater:
        from .mos_study import build_rater_app

        explorer.mos.spec  # noqa: B018 - read the study file now: a bad one fails here, in one line
        demo = build_rater_app(explorer.mos)
    else:
        demo = build_app(explorer)
    _, url, _ = demo.launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"), server_port=port,
                            allowed_paths=explorer.allowed_paths(), prevent_thread_lock=not block, quiet=not block,
                            app_kwargs=app_kwargs(explorer), css=PAGE_CSS, i18n=launch_i18n())
    return demo, url
