"""Every card renders as the conventions expect, and every card example prints what the card says.

Metric cards (``metrics/<name>/README.md``) are rendered with markdown-it-py (CommonMark): the
evaluate Metric Card headings in order, no paragraph longer than the longest source paragraph
(a pasted docstring renders as one run-on paragraph), code blocks where the card has code, and
Markdown tables that keep their columns. Each card's example is executed in its Space folder
(``evaluate.load("hugvis/<name>")`` pointed at the folder: no Hub here) and its printed output
compared with the card's. The dataset card has the Hub template's sections and honest sizes.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from hug_vis_dataset import catalog
from hug_vis_dataset.presentation.citation import ARXIV_ID, CITATION, HOMEPAGE, PAPER_URL
from hug_vis_dataset.publish.module_cards import ANALYSIS_FIELDS, example_code
from hug_vis_dataset.space.example_data import NOT_RUN, recorded_output

REPO = Path(__file__).resolve().parents[1]
METRIC_HEADINGS = ["Metric Description", "How to Use", "Inputs", "Output Values", "Values from Popular Papers",
                   "Examples", "Limitations and Bias", "Citation", "Further References"]


def _tokens(text: str):
    from markdown_it import MarkdownIt

    body = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text
    return MarkdownIt("commonmark").enable("table").parse(body), body


def _headings(tokens) -> list[str]:
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


def _paragraphs(tokens) -> list[str]:
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "paragraph_open"]


def _source_paragraph_bound(name: str) -> int:
    """The longest paragraph the card is written from: a catalog definition with its bold lead, or
    the longest fixed paragraph of the card template (measured on a card with short catalog text)."""
    from hug_vis_dataset.publish.module_cards import _label, _notes

    specs = [catalog.spec(m) for m in catalog.suite_or_metric(name)]
    sources = [f"**{_label(s.label)}** (`{s.name}`). {s.definition or s.description}" for s in specs]
    sources += [p.strip() for p in _notes(name).split("\n\n")]  # implementation notes: one paragraph each
    return max(max(len(p) for p in sources), 700)


@pytest.mark.parametrize("name", catalog.module_names())
def test_metric_card_renders_with_the_metric_card_sections(name):
    text = (REPO / "metrics" / name / "README.md").read_text(encoding="utf-8")
    tokens, body = _tokens(text)
    headings = _headings(tokens)
    assert headings[0].startswith("Metric Card for HUG-VIS ") and "{" not in headings[0]  # no raw D_{e,k}
    assert [h for h in headings[1:] if h in METRIC_HEADINGS] == METRIC_HEADINGS
    bound = _source_paragraph_bound(name)
    assert max(len(p) for p in _paragraphs(tokens)) <= bound
    fences = [t.info for t in tokens if t.type == "fence"]
    output = recorded_output(REPO / "metrics" / name)
    assert fences[:2] == ["bash", "python"] and "bibtex" in fences
    assert ("text" in fences) == (output is not None and NOT_RUN not in output)
    # Tables keep their columns (a '|' inside a unit is escaped) and direction words, never bare arrows.
    for i, t in enumerate(tokens):
        if t.type == "tr_open":
            cells = 0
            for u in tokens[i + 1:]:
                if u.type == "tr_close":
                    break
                cells += u.type in ("td_open", "th_open")
            assert cells in (2, 3, 5), (name, cells)
    assert "↑" not in body and "↓" not in body
    assert CITATION in body and HOMEPAGE in body and PAPER_URL in body and "HUG-VIS authors" not in body
    assert "doctest: +SKIP" not in body
    if catalog.spec(catalog.suite_or_metric(name)[0]).mode == catalog.ANALYSIS:
        for key, _ in ANALYSIS_FIELDS[name]:
            assert f"- **{key}**:" in body  # what it returns, field by field
        assert "as the report computes it" not in body


def test_paper_values_on_the_cards_are_the_paper_tables():
    from hug_vis_dataset.datamodel.paper_tables import paper_frame

    frame = paper_frame()
    body = (REPO / "metrics" / "dtssd" / "README.md").read_text(encoding="utf-8")
    rows = frame[(frame.table == 11) & (frame.metric == "dtssd")]
    assert len(rows) == 9
    for r in rows.itertuples():
        assert f"| {r.model} | {r.text} |" in body
    accuracy = (REPO / "metrics" / "emotion_accuracy" / "README.md").read_text(encoding="utf-8")
    first = frame[frame.table == 4].iloc[0]
    assert f"| {first.model} | {first.input_setting} | {first.text} |" in accuracy


@pytest.mark.slow  # about 60 s: every module computed on its bundled examples
def test_every_card_example_prints_what_the_card_shows(monkeypatch):
    import evaluate

    ran = 0
    for name in catalog.module_names():
        folder = REPO / "metrics" / name
        card = (folder / "README.md").read_text(encoding="utf-8")
        code = example_code(name)
        assert f"```python\n{code}\n```" in card
        output = recorded_output(folder)
        if NOT_RUN in output:
            assert f"Not run when this card was generated: {output[NOT_RUN]}" in card
            continue
        shown = re.search(r"Output:\n\n```text\n(.*?)\n```", card, re.S).group(1)
        monkeypatch.chdir(folder)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code.replace(f'"hugvis/{name}"', repr(str(folder))), f"{name}/README.md", "exec"), {})  # noqa: S102
        assert printed.getvalue().strip() == shown, name
        ran += 1
    assert ran >= 18 and evaluate is not None  # every module that needs no pretrained file


def test_dataset_card_has_the_template_sections_and_honest_sizes(tmp_path):
    import pyarrow.parquet as pq
    from huggingface_hub import DatasetCard

    from hug_vis_dataset.publish import _build_dataset

    repo = tmp_path / "repo"
    _build_dataset(repo, None)
    text = (repo / "README.md").read_text(encoding="utf-8")
    tokens, body = _tokens(text)
    headings = _headings(tokens)
    for heading in ("Dataset Structure", "Dataset Creation", "Curation rationale", "Source data", "Annotations",
                    "Considerations for Using the Data", "Personal and sensitive information",
                    "Risks: voice cloning and face reenactment", "Licensing and access", "Citation"):
        assert heading in headings, heading
    flat = re.sub(r"\s+", " ", body)
    assert "Adobe Premiere Pro" in flat and "written informed consent" in flat and ARXIV_ID in flat
    paper = (REPO.parent / "shared" / "reference" / "001_533d7c1c1ccda447.txt")
    if paper.is_file():  # every quotation is the paper's own words
        source = re.sub(r"\s+", " ", paper.read_text(encoding="utf-8")).replace("’", "'")
        from hug_vis_dataset.hub.card import CREATION_AND_CONSIDERATIONS

        quoted = re.sub(r"\s+", " ", CREATION_AND_CONSIDERATIONS)
        assert quoted.strip() in flat
        for quote in re.findall(r'"([^"]{20,})"', quoted):
            assert quote in source, quote
    infos = DatasetCard.load(repo / "README.md").data.to_dict()["dataset_info"]
    for info in infos:
        shards = sorted((repo / "data" / info["config_name"]).glob("*.parquet"))
        assert info["download_size"] == sum(p.stat().st_size for p in shards)
        assert info["dataset_size"] == sum(pq.ParquetFile(p).metadata.row_group(i).total_byte_size
                                           for p in shards for i in range(pq.ParquetFile(p).metadata.num_row_groups))
        assert info["download_size"] != info["dataset_size"]
