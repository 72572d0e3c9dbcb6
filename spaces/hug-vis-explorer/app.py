"""HUG-VIS explorer Space: the app logic lives in hug_vis_dataset.space (pip install hug-vis)."""

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from hug_vis_dataset.space.app import launch  # noqa: E402

if __name__ == "__main__":
    # HUGVIS_RELEASE / HUGVIS_RESULTS point at a release tree and a results folder (HUGVIS_RESULTS_REPO:
    # a Hub dataset repo as the results store, appended to by uploads); without them
    # the Space shows the paper tables and a tiny synthetic release.
    launch(os.environ.get("HUGVIS_RELEASE"), os.environ.get("HUGVIS_RESULTS"),
           port=int(os.environ.get("PORT", "7860")), work_dir=os.environ.get("HUGVIS_WORK_DIR"),
           results_repo=os.environ.get("HUGVIS_RESULTS_REPO"))
