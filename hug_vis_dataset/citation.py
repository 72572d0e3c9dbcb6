"""How to cite HUG-VIS and where it lives: one text for the dataset card, the module cards and the Space.

The title is the paper's own (``shared/reference``: "HUG-VIS: A Multimodal Benchmark for
Human-centered Understanding and Generation in Visual Intelligence").
"""

from __future__ import annotations

PAPER_TITLE = "HUG-VIS: A Multimodal Benchmark for Human-centered Understanding and Generation in Visual Intelligence"
HOMEPAGE = "https://huggingface.co/datasets/hugvis/hug-vis"
CODEBASE = "https://github.com/hugvis/hug-vis"
CITATION = f"""@misc{{hugvis2026,
  title  = {{{PAPER_TITLE}}},
  author = {{{{HUG-VIS authors}}}},
  year   = {{2026}},
  note   = {{Dataset and results: https://github.com/GML-MMGroup/HUG-VIS}}
}}"""
