"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.publish.release_info` (docs/CHANGELOG.md)."""

from .publish.release_info import (DISTRIBUTION, IMPORT_PACKAGE, SPACE_EXTRAS, HUB_WHEEL_URL,
    package_version, wheel_filename, requirement, install_command, space_extras, requirements_lines,
    import_error_message, import_guard)  # noqa: F401
