"""The explorer's Submit tab: request scoring of a predictions repo, and follow the queue.

Full-grid submissions are too large for an upload: the predictions stay in the submitter's Hub
repo and the tab writes a request to the requests repo
(:func:`hug_vis_dataset.leaderboard.submit.submit_request`, the same checks as
``hugvis leaderboard submit``); workers score it (``docs/LEADERBOARD.md``). The status table is
:func:`hug_vis_dataset.leaderboard.queue_view.status_html`, the one ``hugvis leaderboard status``
prints as Markdown.

Who submits: the signed-in Hugging Face user on a Space with OAuth (``hf_oauth: true``); on a
machine that is not a Space, the user of the local token (whoever launched the explorer). A
Space never submits in its own name.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from .. import catalog
from ..errors import HugvisError, one_line
from ..presentation.escaping import markdown_text
from ..leaderboard.queue_view import status_html
from ..leaderboard.requests import QueueLimits, RequestsRepo
from ..leaderboard.submit import submit_request, whoami


class SubmitDesk:
    """The callbacks of the tab (plain functions over a requests repo, testable without Gradio)."""

    def __init__(self, queue: RequestsRepo, results: Any = None, limits: QueueLimits = QueueLimits(),
                 local_submitter: "Callable[[], str] | None" = None):
        self.queue, self.results, self.limits = queue, results, limits
        self.local_submitter = local_submitter or (lambda: whoami(queue.api))

    def submitter(self, username: "str | None") -> str:
        if username:
            return username
        if os.environ.get("SPACE_ID"):
            raise SubmitRefused("sign in with Hugging Face first (the button above): requests are filed in your name")
        return self.local_submitter()

    def submit(self, task: str, repo: str, revision: str, model: str, repo_type: str, subfolder: str,
               username: "str | None") -> str:
        """Markdown: what was queued and where it stands, or the refusal in one line."""
        try:
            request = submit_request(self.queue, task, (repo or "").strip(), (revision or "").strip(), model,
                                     self.submitter(username), repo_type=repo_type, subfolder=subfolder or "",
                                     limits=self.limits, results=self.results)
        except (HugvisError, ValueError) as err:
            return f"**Not queued:** {markdown_text(one_line(err))}"
        state = self.queue.read()
        position = state.position(state.find(request.task, request.model) or request)
        return (f"Queued **{markdown_text(request.model)}** for {markdown_text(catalog.task(task).label.lower())}: "
                f"{markdown_text(request.predictions_repo)} at commit `{request.revision[:12]}`, {request.clips} "
                f"clip(s), {request.files} file(s). Place in the queue: {position or 'taken already'}.")

    def status(self, model: str = "") -> str:
        """The queue as an HTML table (one model's requests when ``model`` is given)."""
        try:
            return status_html(self.queue.read(), (model or "").strip() or None)
        except HugvisError as err:
            return f"<p>{markdown_text(one_line(err))}</p>"


class SubmitRefused(HugvisError, ValueError):
    """The tab cannot file a request (nobody signed in on a Space)."""


def submit_tab(gr: Any, desk: SubmitDesk, demo: Any) -> None:
    """The components and events of the tab (inside a ``gr.Tab`` of ``demo``)."""
    tasks = catalog.task_names(with_paper_table=True)
    gr.Markdown("Push your predictions to a Hub repo (dataset or model) in the layout of the task "
                "([docs/SCORING.md](https://github.com/hugvis/hug-vis/blob/main/docs/SCORING.md)), then request "
                "scoring here. The revision is pinned to its commit now; the leaderboard's workers download that "
                "commit, check every clip, score the full grid on GPUs and put the run on the board. Limits: "
                f"{desk.limits.max_pending_per_submitter} waiting or running request(s) per submitter, "
                f"{desk.limits.max_total_bytes // 1024**3} GiB per submission.", elem_id="submit-help")
    if os.environ.get("SPACE_ID"):
        gr.LoginButton()  # Gradio passes the signed-in profile to on_submit
    with gr.Row():
        task = gr.Dropdown(tasks, value=tasks[0], label="Task", elem_id="submit-task")
        model = gr.Textbox(label="Model name", elem_id="submit-model")
    with gr.Row():
        repo = gr.Textbox(label="Predictions repo", placeholder="your-name/your-model-hugvis-matting",
                          elem_id="submit-repo")
        revision = gr.Textbox(label="Revision", value="main", elem_id="submit-revision")
        repo_type = gr.Radio(["dataset", "model"], value="dataset", label="Repo type", elem_id="submit-repo-type")
        subfolder = gr.Textbox(label="Folder in the repo (optional)", elem_id="submit-subfolder")
    button = gr.Button("Request scoring", elem_id="submit-run")
    message = gr.Markdown(elem_id="submit-message")
    gr.Markdown("### Queue")
    with gr.Row():
        only = gr.Textbox(label="Only this model (optional)", elem_id="status-model")
        refresh = gr.Button("Refresh", elem_id="status-refresh")
    table = gr.HTML(elem_id="status-table")

    def on_submit(task_name, repo_id, rev, name, kind, folder, profile: "gr.OAuthProfile | None" = None):
        text = desk.submit(task_name, repo_id, rev, name, kind, folder, getattr(profile, "username", None))
        return text, desk.status(name if text.startswith("Queued") else "")

    button.click(on_submit, [task, repo, revision, model, repo_type, subfolder], [message, table])
    refresh.click(desk.status, only, table)
    only.submit(desk.status, only, table)
    demo.load(desk.status, None, table)


__all__ = ["SubmitDesk", "SubmitRefused", "submit_tab"]
