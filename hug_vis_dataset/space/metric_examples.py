"""The small, real examples bundled with every metric Space, and how a Space's uploads become module inputs.

Each ``metrics/<name>/examples/`` folder holds one clip's prediction and reference as a visitor
would upload them (a PNG-sequence zip for alpha mattes, an MP4 for videos, a WAV for speech, a
``predictions.jsonl`` for emotion answers, stored result rows as CSV for analyses), cut from the
deterministic synthetic grid (:func:`hug_vis_dataset.synth.synthesize`), and ``output.json``: what
the module's card example prints on them (written by :func:`write_examples`, checked by
``tests/test_cards.py``). :func:`compute_inputs` turns uploaded files into the keyword arguments of
``module.compute``; the Space (:mod:`hug_vis_dataset.space.metric_app`), the card examples and the
tests all use it, so they compute on the same inputs.

Example:
    >>> input_kind("mad"), input_kind("dnsmos"), input_kind("emotion_difficulty")
    ('alpha', 'audio', 'rows')
    >>> example_names("speaker_similarity"), example_names("cer")
    (('prediction.wav', 'reference.wav'), ('prediction.wav', 'reference.txt'))
"""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path
from typing import Any

from .. import catalog
from ..readers.textio import read_text

#: What a Space of each task takes: prediction file, reference file (``None``: reference-free).
_KIND_OF_TASK = {"matting": "alpha", "matting_boundary": "alpha", "vision_driven": "video",
                 "audio_driven": "video", "voice_cloning": "audio", "emotion": "label"}
_FILES = {"alpha": ("prediction.zip", "reference.zip"), "video": ("prediction.mp4", "reference.mp4"),
          "audio": ("prediction.wav", "reference.wav"), "label": ("predictions.jsonl", None),
          "speech_text": ("prediction.wav", "reference.txt"),
          "rows": ("rows.csv", None)}
#: Options an analysis needs beyond the rows, with the value the bundled example uses.
ANALYSIS_OPTIONS: dict[str, dict[str, Any]] = {
    "variance_decomposition": {"metric_name": "mad"},
    "neighbour_significance": {"metric_name": "mad", "n_resamples": 200, "n_boot": 200, "seed": 0},
    "detectable_difference": {"metric_name": "mad"},
    "emotion_difficulty": {"metrics": [["MER-RE", "emotion", "emotion_accuracy", "complement"],
                                       ["VM-MAD", "matting", "mad", "retain"]]},
    "difficulty_agreement": {"metrics": [["MER-RE", "emotion", "emotion_accuracy", "complement"],
                                         ["VM-MAD", "matting", "mad", "retain"],
                                         ["VM-dtSSD", "matting", "dtssd", "retain"]]},
    "metric_mos_agreement": {"ratings": "ratings.csv", "n_boot": 200, "seed": 0},
    "human_metric_agreement": {"ratings": "ratings.csv", "n_boot": 200, "n_perm": 200, "seed": 0},
}
#: The analyses that take a ratings CSV beside the rows (the Space asks for it, the examples bundle one).
RATED_ANALYSES: tuple[str, ...] = tuple(name for name, options in ANALYSIS_OPTIONS.items() if "ratings" in options)
#: The synthetic grid the examples are cut from (small: the folders stay a few KB each).
EXAMPLE_GRID = dict(actors=2, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=1.0, size=(32, 18), seed=0)
EXAMPLE_SYSTEM = {"matting": "matte_fair", "vision_driven": "vis_fair", "audio_driven": "talk_fair",
                  "voice_cloning": "clone_fair", "emotion": "emo_medium"}


def input_kind(name: str) -> str:
    """``alpha``, ``video``, ``audio``, ``speech_text`` (speech and its target text: CER), ``label`` or
    ``rows``: what a module's Space asks a visitor for."""
    spec = catalog.spec(catalog.suite_or_metric(name)[0])
    if spec.reference_kind == "text":
        return "speech_text"
    return "rows" if spec.mode == catalog.ANALYSIS else _KIND_OF_TASK[spec.tasks[0]]


def needs_reference(name: str) -> bool:
    """Whether the module takes ``references`` (reference-free, label and analysis modules do not
    take a reference *file*: emotion references come from the clip ids)."""
    spec = catalog.spec(catalog.suite_or_metric(name)[0])
    return spec.mode not in (catalog.REFERENCE_FREE, catalog.LABEL, catalog.ANALYSIS)


def example_names(name: str) -> tuple[str, ...]:
    """The bundled example files of a module (under ``examples/``), prediction first."""
    pred, ref = _FILES[input_kind(name)]
    names = (pred, ref) if needs_reference(name) else (pred,)
    return names + (("ratings.csv",) if name in RATED_ANALYSES else ())


# ----------------------------------------------------------------------------- uploads -> inputs
def unpack(path: "str | Path", work_dir: "str | Path | None" = None) -> str:
    """An alpha clip as the module reads it: a PNG-sequence zip unpacked into a new folder (PNG
    members only, in name order, renamed ``000000.png ...``); a video or a folder is returned as is.

    Example:
        >>> import io, os
        >>> z = tempfile.mktemp(suffix=".zip")
        >>> with zipfile.ZipFile(z, "w") as zf:
        ...     zf.writestr("clip/000001.png", b"b"); zf.writestr("clip/000000.png", b"a"); zf.writestr("x.txt", b"")
        >>> sorted(os.listdir(unpack(z)))
        ['000000.png', '000001.png']
    """
    path = Path(path)
    if path.suffix.lower() != ".zip":
        return str(path)
    dest = Path(tempfile.mkdtemp(prefix="hugvis-alpha-", dir=work_dir))
    with zipfile.ZipFile(path) as archive:
        members = sorted((m for m in archive.infolist() if not m.is_dir() and m.filename.lower().endswith(".png")),
                         key=lambda m: m.filename)
        if not members:
            raise ValueError(f"{path.name} holds no PNG frame: zip the matte's 000000.png, 000001.png ... files")
        for index, member in enumerate(members):  # names are never used as paths: nothing can escape dest
            (dest / f"{index:06d}.png").write_bytes(archive.read(member))
    return str(dest)


def read_rows(path: "str | Path") -> dict[str, list]:
    """Stored result rows (``rows.parquet`` or the same columns as CSV) as columns of lists."""
    import pandas as pd

    from ..readers.csv_files import read_csv_table
    from ..readers.parquet_files import ParquetSchema, read_parquet_frame

    path = Path(path)
    # An upload that is cut short or not rows is one line naming it, not pyarrow's error.
    rows = ParquetSchema("result rows", {"value": "number"}, fix="upload the rows.parquet hugvis evaluate wrote")
    if path.suffix.lower() == ".parquet":
        frame = read_parquet_frame(path, rows)
    else:  # the same columns as CSV: its shape read strictly first (a ragged row, an open quote, a cut last
        read_csv_table(path, ("value",))  # line: one line naming it), then pandas types the columns as before
        frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    frame = frame.astype({c: "float64" for c in ("value",) if c in frame})
    return {c: [None if (isinstance(v, float) and v != v and c != "value") else v for v in frame[c]]
            for c in frame.columns}


def read_answers(path: "str | Path") -> dict[str, list]:
    """``predictions.jsonl`` (``{"clip_id", "input_setting", "answer"}`` per line): answers, the
    instructed emotion of each clip (from its id) as reference, and the input settings."""
    from ..datamodel.grid import ClipId

    from ..readers.json_files import iter_json_lines

    lines = [value for _, value in iter_json_lines(path)]  # strict: a duplicated "answer" names its line
    return {"predictions": [line["answer"] for line in lines],
            "references": [ClipId.parse(line["clip_id"]).emotion.value for line in lines],
            "input_settings": [line.get("input_setting") or "" for line in lines]}


def compute_inputs(name: str, prediction: "str | Path", reference: "str | Path | None" = None,
                   options: "dict[str, Any] | None" = None, work_dir: "str | Path | None" = None) -> dict[str, Any]:
    """The keyword arguments of ``module.compute`` for uploaded files.

    Args:
        name: the module.
        prediction: the prediction file (see :func:`example_names`).
        reference: the reference file, for modules that take one.
        options: an analysis's options (:data:`ANALYSIS_OPTIONS`); a ``ratings`` path is resolved
            next to ``prediction`` when relative.
        work_dir: where unpacked zips go (default: a new temporary folder).
    """
    kind = input_kind(name)
    if kind == "rows":
        chosen = dict(ANALYSIS_OPTIONS.get(name, {}) if options is None else options)
        if isinstance(chosen.get("ratings"), str) and not Path(chosen["ratings"]).is_absolute():
            chosen["ratings"] = str(Path(prediction).parent / chosen["ratings"])
        return {**read_rows(prediction), **chosen}
    if kind == "label":
        answers = read_answers(prediction)
        return answers if name == "emotion_accuracy" else {k: answers[k] for k in ("predictions", "references")}
    if needs_reference(name) and reference is None:
        raise ValueError(f"{name} compares a prediction with its reference: upload both")
    convert = (lambda p: unpack(p, work_dir)) if kind == "alpha" else str
    inputs: dict[str, Any] = {"predictions": [convert(prediction)]}
    if needs_reference(name):
        # a text reference (CER's target text) is the content of the uploaded UTF-8 text file
        inputs["references"] = [read_text(reference).strip() if kind == "speech_text" else convert(reference)]
    return inputs


def example_inputs(folder: "str | Path", name: "str | None" = None) -> dict[str, Any]:
    """``compute_inputs`` on a module folder's bundled examples.

    Example (needs the generated folders of this repository)::

        >>> example_inputs("metrics/mad")["references"]  # doctest: +SKIP
        ['/tmp/hugvis-alpha-.../']
    """
    folder = Path(folder)
    name = name or folder.name
    files = [folder / "examples" / f for f in example_names(name)]
    reference = files[1] if needs_reference(name) else None
    return compute_inputs(name, files[0], reference)
