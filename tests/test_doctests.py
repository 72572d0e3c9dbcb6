"""Every docstring example of the library runs (CONVENTIONS.md: docstrings carry runnable examples)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import hug_vis_dataset

MODULES = sorted(m.name for m in pkgutil.walk_packages(hug_vis_dataset.__path__, "hug_vis_dataset."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples of {name} failed"
