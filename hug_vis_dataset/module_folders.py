"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.publish.module_folders` (docs/CHANGELOG.md)."""

if __name__ == "__main__":  # pragma: no cover - the old maintenance command keeps working
    import runpy

    runpy.run_module("hug_vis_dataset.publish.module_folders", run_name="__main__")
else:
    from .publish.module_folders import (description, REPO_METRICS, module_source, card, GRADIO_VERSION,
        PYTHON_VERSION, APP_SOURCE, module_files, write_module_folders, regenerate)  # noqa: F401
