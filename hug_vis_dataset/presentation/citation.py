"""How to cite HUG-VIS and where it lives: one set of links for the dataset card, the module cards,
the modules' ``MetricInfo`` and the Spaces.

The title and the project page are the paper's own (``shared/reference``: "HUG-VIS: A Multimodal
Benchmark for Human-centered Understanding and Generation in Visual Intelligence"; "The dataset
and reported results are made available at https://github.com/GML-MMGroup/HUG-VIS", and "The
associated evaluation code is released through the same project page"). The paper text available
to this toolkit names no authors, so the citation says so instead of inventing names.

Example:
    >>> HOMEPAGE == CODEBASE and PAPER_URL.endswith(ARXIV_ID)
    True
    >>> "author" in CITATION and "not listed" in CITATION
    True
"""

from __future__ import annotations

PAPER_TITLE = "HUG-VIS: A Multimodal Benchmark for Human-centered Understanding and Generation in Visual Intelligence"
#: The project page the paper names for the dataset, the reported results and the evaluation code.
HOMEPAGE = "https://github.com/GML-MMGroup/HUG-VIS"
CODEBASE = HOMEPAGE
ARXIV_ID = "2608.26517"
PAPER_URL = f"https://arxiv.org/abs/{ARXIV_ID}"
#: Where the Hub hosts the (gated) dataset repo and the metric Spaces.
DATASET_URL = "https://huggingface.co/datasets/hugvis/hug-vis"
#: The project links, in the order every card lists them.
PROJECT_LINKS: tuple[tuple[str, str], ...] = (
    ("Project page (dataset, results, code)", HOMEPAGE), ("Paper", PAPER_URL), ("Dataset on the Hub", DATASET_URL),
)
AUTHORS_NOTE = "Authors not listed here: see arXiv:" + ARXIV_ID
CITATION = f"""@misc{{hugvis2026,
  title         = {{{PAPER_TITLE}}},
  author        = {{{{{AUTHORS_NOTE}}}}},
  year          = {{2026}},
  eprint        = {{{ARXIV_ID}}},
  archivePrefix = {{arXiv}},
  url           = {{{PAPER_URL}}},
  note          = {{Dataset, results and code: {HOMEPAGE}}}
}}"""


def links_markdown() -> str:
    """The project links as a Markdown list (one line each).

    Example:
        >>> links_markdown().splitlines()[1]
        '- Paper: https://arxiv.org/abs/2608.26517'
    """
    return "\n".join(f"- {label}: {url}" for label, url in PROJECT_LINKS)
