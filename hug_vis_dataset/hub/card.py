"""The dataset card (``README.md``) of the Hub repo: YAML front matter plus prose.

The YAML declares one config per task (``configs:`` with ``data_files``), the features of each
(``dataset_info``), license, gating and task categories; the prose gives the grid, Table 1, the
per-config schema, the alpha storage choice with its measurements, how to load and evaluate each
task, and the citation. Everything in it is derived from the build, so the card is deterministic.

Example:
    >>> front = card_front_matter({"matting": 3}, {"matting": 1000})
    >>> front["configs"][0]["data_files"]
    [{'split': 'test', 'path': 'data/matting/test-*.parquet'}]
    >>> front["dataset_info"][0]["splits"]
    [{'name': 'test', 'num_bytes': 1000, 'num_examples': 3}]
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .. import catalog
from ..presentation.citation import CITATION, HOMEPAGE, links_markdown
from ..datamodel.grid import EMOTION_NAMES, TABLE1
from ..readers.hub_access import HUB_DATASET_ID
from .alpha import ALPHA_CODECS
from .build_info import VIEWER_ROW_GROUP_BYTES, BuildOptions, BuildReport
from .schema import COLUMN_SPECS, CONFIG_COLUMNS, CONFIG_PURPOSE, DEFAULT_CONFIG, features

if TYPE_CHECKING:  # pragma: no cover
    from ..datamodel.release import ClipRecord

PRETTY_NAME = "HUG-VIS: Human-centered Understanding and Generation in VISual intelligence"
REPO_ID = HUB_DATASET_ID
PROJECT_URL = HOMEPAGE  # the paper's project page (one set of links: citation.py)

TASK_CATEGORIES = ["video-classification", "audio-classification", "image-to-video", "text-to-speech",
                   "image-segmentation"]

# Gating: the recordings show identifiable actors, so access requires accepting research terms.
GATED_PROMPT = (
    "HUG-VIS contains video and voice recordings of identifiable professional actors. Access is granted "
    "for non-commercial research only. You agree not to redistribute the data, not to use it to identify, "
    "impersonate or clone the voice or likeness of any actor outside the benchmark protocol, and to cite "
    "the HUG-VIS paper in any publication that uses it."
)
GATED_FIELDS = {
    "Name": "text",
    "Affiliation": "text",
    "Country": "country",
    "Intended use": "text",
    "I agree to use this dataset for non-commercial research only": "checkbox",
    "I agree not to use the recordings to impersonate or clone any actor outside the benchmark": "checkbox",
}

# Alpha codec measurement (scripts/bench_dataset.py --alpha-codecs: the 60 mattes, 320x180, of the
# first clip of the synthetic grid; 2-core x86_64, torchcodec 0.17 + FFmpeg 5.1, one decoder
# thread, best of 3). Timings are not measured at build time so the card stays byte-identical.
ALPHA_MEASUREMENT: tuple[tuple[str, float, float, bool], ...] = (
    # codec, size relative to the release PNGs, decode ms for 60 frames, bit-exact
    ("ffv1", 0.89, 40.3, True),
    ("png-mov", 1.20, 54.5, True),
    ("x264rgb-qp0", 1.77, 92.9, True),
    ("x264rgb-qp0-fast", 2.57, 41.0, True),
)




def _size_category(n: int) -> str:
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < bound:
            return label
    return "100K<n<1M"


def uncompressed_bytes(repo_dir: "str | Path", shards: "Sequence") -> int:
    """Size of the shards' data once decoded from Parquet (the row groups' uncompressed size, as the
    Parquet footers record it): the card's ``dataset_size``; the shard files' size is ``download_size``."""
    from .loading import open_shard  # the footer checked against its config's schema

    total = 0
    for shard in shards:
        meta = open_shard(Path(repo_dir) / shard.file).metadata
        total += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return total


def card_front_matter(rows: dict[str, int], num_bytes: dict[str, int],
                      data_bytes: "dict[str, int] | None" = None) -> dict:
    """The YAML front matter as a dict (configs in the given order; ``clips`` is the default).

    ``num_bytes`` is each config's compressed shard size (what a download fetches); ``data_bytes``
    its uncompressed size (default: the same, when unknown)."""
    data_bytes = data_bytes or num_bytes
    configs = []
    infos = []
    for name in rows:
        entry = {"config_name": name, "data_files": [{"split": "test", "path": f"data/{name}/test-*.parquet"}]}
        if name == DEFAULT_CONFIG:
            entry["default"] = True
        configs.append(entry)
        infos.append({
            "config_name": name,
            "features": features(name)._to_yaml_list(),
            "splits": [{"name": "test", "num_bytes": int(data_bytes[name]), "num_examples": int(rows[name])}],
            "download_size": int(num_bytes[name]),
            "dataset_size": int(data_bytes[name]),
        })
    return {
        "pretty_name": PRETTY_NAME,
        "language": ["zh"],
        "license": "other",
        "license_name": "hug-vis-research-license",
        "license_link": HOMEPAGE,
        "task_categories": TASK_CATEGORIES,
        "tags": ["emotion-recognition", "talking-head", "video-generation", "voice-cloning", "video-matting",
                 "benchmark", "zero-shot"],
        "size_categories": [_size_category(max(rows.values(), default=0))],
        "extra_gated_prompt": GATED_PROMPT,
        "extra_gated_fields": GATED_FIELDS,
        "configs": configs,
        "dataset_info": infos,
    }


def _table1() -> str:
    lines = ["| Emotion | Movement style | Action templates | Illustrative prompt |", "| --- | --- | --- | --- |"]
    for design in TABLE1.values():
        lines.append(f"| {design.emotion.value} | {design.movement_style} | {'; '.join(design.action_templates)} "
                     f"| {design.illustrative_prompt} |")
    return "\n".join(lines)


def _schema(config: str) -> str:
    feats = features(config)
    lines = ["| column | feature | meaning |", "| --- | --- | --- |"]
    for column in CONFIG_COLUMNS[config]:
        feature = feats[column]
        kind = type(feature).__name__
        if kind == "Value":
            kind = f"Value({feature.dtype})"
        elif kind == "ClassLabel":
            kind = f"ClassLabel({len(feature.names)})"
        lines.append(f"| `{column}` | {kind} | {COLUMN_SPECS[column][1]} |")
    return "\n".join(lines)


def _grid_summary(records: "Sequence[ClipRecord]") -> str:
    actors = sorted({r.cid.actor_id for r in records})
    emotions = [e for e in EMOTION_NAMES if any(r.cid.emotion.value == e for r in records)]
    actions = sorted({r.cid.action_id for r in records})
    scripts = sorted({r.cid.script_id for r in records})
    return (f"This build holds {len(records)} clips: {len(actors)} actor(s), {len(emotions)} emotion(s) "
            f"({', '.join(emotions)}), {len(actions)} action(s) and {len(scripts)} script(s) per emotion.")


def _evaluation(config: str) -> str:
    """How to score a task: its evaluate modules (from the catalog) and the ``hugvis evaluate`` line."""
    metrics = catalog.table_metrics(config)
    task, mos = catalog.task(config), catalog.task(config).mos_table
    table = f"Table {task.paper_table}" + (f", MOS Table {mos}" if mos else "")
    loads = "\n".join(f'{m} = evaluate.load("hugvis/{m}")' for m in metrics)
    return (f"**{config}** ({table}): metrics {', '.join(f'`{m}`' for m in metrics)}.\n\n"
            f"```python\nimport evaluate\n{loads}\n```\n\n"
            f"```bash\nhugvis evaluate {config} --predictions PRED_DIR --model NAME --dataset {REPO_ID} --out RESULTS\n```\n")


def storage_section(report: "BuildReport") -> str:
    """The card's "Storage" section: media repeated across configs and the size after chunk-level dedup.

    Empty when the build did not measure it (``measure_storage=False``).
    """
    storage = report.storage
    if storage is None:
        return ""
    *configs, total = storage.table_rows()
    rows = "\n".join(f"| `{c}` | {size} | {media} | {shared} |" for c, size, media, shared in configs)
    chunker = storage.chunker
    sizes = "/".join(f"{chunker[k] // 1024}" for k in ("min_size", "avg_size", "max_size")) if chunker else ""
    lines = "\n".join(f"- {line}" for line in storage.summary_lines())
    return f"""
## Storage

Every config embeds the media it needs, so the same video, audio and alpha bytes sit in several
configs (and `vision_driven` stores each video twice). The Hub keeps repo files in chunk-level
deduplicated (Xet) storage, which stores a repeated chunk once, and `hf_xet` downloads it once.
Measured on this build (`hugvis storage-report REPO_DIR`; content-defined chunks of
{sizes} KiB min/target/max, `hug_vis_dataset.hub.cdc`):

| config | MiB | media MiB | media also in another config |
| --- | --- | --- | --- |
{rows}
| **{total[0]}** | {total[1]} | {total[2]} | {total[3]} |

{lines}

Media cells are stored uncompressed and without dictionary encoding, each as one Parquet value, so
a medium's bytes appear unchanged in every config; what chunk-level dedup cannot share is about
one chunk at each edge of a media column chunk, which larger row groups make rarer.
"""


# Quoted from the paper (shared/reference): sections 3.3-3.4 and the Statements and Declarations.
CREATION_AND_CONSIDERATIONS = """
## Dataset Creation

### Curation rationale

The paper: "This design deliberately trades environmental diversity for controlled correspondence:
because the same assignment recurs for every actor, any difference we observe downstream can be
attributed to the actor, the model, or the evaluation metric rather than to a mismatch in the
underlying material."

### Source data

Recorded in a studio (paper section 3.3): "Every performance is captured with a fixed frontal
green-screen setup under controlled lighting and a seated half-body framing", "Video is recorded at
1920 × 1080 and 240 FPS (released at 30 FPS), and accompanied by synchronized denoised audio."
"30 professional actors completed the full grid and passed the retention criteria. This cohort is
gender balanced, has a mean age of roughly 20 years, and contributed about four hours of recording
per actor." Each performance starts at rest, delivers the assigned Mandarin prompt with its action
template, and returns to the resting pose.

### Annotations

Alpha mattes (paper section 3.4): "The mattes are produced using the professional software Adobe
Premiere Pro through a two-stage process: chroma-key initialization followed by sequence-level
refinement. During refinement, particular attention is paid to hair, fingers, and clothing, as
well as to regions affected by self-occlusion and motion blur."

Text: each clip carries the assigned Mandarin prompt and its verified verbatim transcript (paper
Table 2). Quality assurance: "eight professional volunteers conduct a quality assessment. Each
video clip is reviewed to verify strict alignment among the RGB, audio, text, and alpha mattes",
including audio-visual synchronization and "the accuracy of the textual descriptions"; a clip that
fails "is either discarded or returned for reprocessing". The paper does not say how the transcripts
were first produced.

## Considerations for Using the Data

### Personal and sensitive information

Every clip shows an identifiable person's face, body and voice. The paper: "Before recording, all
actors provided written informed consent for research capture and for the authorized use of their
identifiable likeness, voice, and performed behavior." and "Publication and demonstration of
identifiable examples are allowed for research purposes covered by the participating actors'
written authorizations." Nothing beyond the research use those authorizations cover is granted.

### Risks: voice cloning and face reenactment

Two of the benchmark's tasks, voice cloning and human video generation, are exactly the techniques
that impersonate a person. Outputs of systems evaluated on HUG-VIS reproduce the actors' voices and
likenesses: keep them within the benchmark protocol, do not publish them as the actors' own speech
or behaviour, and never use the recordings to clone or reenact an actor outside it (the access
terms forbid it).

### Bias and limitations

The cohort is 30 gender-balanced professional actors with a mean age of roughly 20 years, speaking
Mandarin in one studio with one frontal green-screen setup: results do not transfer to other ages,
languages, viewpoints, lighting or backgrounds. Emotions are instructed and acted (seven categories),
not spontaneous.
"""


def render_card(records: "Sequence[ClipRecord]", report: "BuildReport", options: "BuildOptions") -> str:
    """The full ``README.md`` text for a finished build."""
    import yaml

    rows = dict(report.rows)
    num_bytes = {c: sum(s.bytes for s in report.shards[c]) for c in rows}
    data_bytes = {c: uncompressed_bytes(report.repo_dir, report.shards[c]) for c in rows}
    front = yaml.safe_dump(card_front_matter(rows, num_bytes, data_bytes), sort_keys=False, allow_unicode=True,
                           width=100)

    alpha_config = "matting" if "matting" in report.shards else ("clips" if "clips" in report.shards else None)
    png_bytes = 0
    for r in records:
        png_bytes += sum(p.stat().st_size for p in r.alpha_matte_path.iterdir() if p.is_file())
    alpha_bytes = sum(s.alpha_bytes for s in report.shards.get(alpha_config, [])) if alpha_config else 0
    codec = ALPHA_CODECS[options.alpha_codec]
    measured = "\n".join(f"| {name}{' (chosen)' if name == options.alpha_codec else ''} | {size:.2f}x | {ms:.0f} ms "
                         f"| {'yes' if exact else 'no'} |" for name, size, ms, exact in ALPHA_MEASUREMENT)
    config_sections = "\n\n".join(f"### `{c}`\n\n{CONFIG_PURPOSE[c]}.\n\n{_schema(c)}" for c in rows)
    size_lines = "\n".join(f"| `{c}` | {rows[c]} | {len(report.shards[c])} | {num_bytes[c] / 2**20:.1f} MiB |"
                           for c in rows)
    excluded = ""
    if report.excluded:
        items = "\n".join(f"- `{clip}`: {'; '.join(msgs)}" for clip, msgs in sorted(report.excluded.items()))
        excluded = (f"\n### Clips left out\n\n{len(report.excluded)} clip(s) failed validation "
                    f"(`hugvis validate`) and are not in this build:\n\n{items}\n")
    evaluation = "\n".join(_evaluation(c) for c in catalog.task_names(with_paper_table=True) if c in rows)
    ratio = f"{alpha_bytes / png_bytes:.2f}x" if png_bytes and alpha_bytes else "n/a"
    synthetic = ("\n> **Synthetic data.** This repo was built from a tree written by `hugvis synth` (the toolkit's "
                 "test grid), not from the HUG-VIS recordings; scores on it are never ranked with the paper's.\n"
                 if report.synthetic else "")

    return f"""---
{front}---

# {PRETTY_NAME}
{synthetic}
HUG-VIS is a condition-aligned benchmark for human-centered understanding and generation: 30
professional actors each perform the same 280 emotion-action-prompt assignments (7 emotions x 4
action templates x 10 Mandarin scripts), giving 8,400 seated half-body clips with synchronized
RGB video, noise-suppressed audio, the assigned prompt with its verbatim transcript, and a
per-frame alpha matte. Four tasks are evaluated on this one grid under a zero-shot protocol, so
every clip belongs to the single split `test`: multimodal emotion recognition, human video
generation (audio-driven and vision-driven), voice cloning and human video matting.

{_grid_summary(records)} Every row of every config carries `clip_id`, `actor_id`, `emotion`,
`action_id` and `script_id`, so any result joins back to the grid.

## The grid (paper Table 1)

{_table1()}

Emotion labels are a `ClassLabel` with the names {', '.join(EMOTION_NAMES)} (ids 0-6 in this
order). The release spells Afraid as `fearful` in clip ids.

## Dataset Structure

Load one config per task; all share the split `test`.

```python
from datasets import load_dataset
ds = load_dataset("{REPO_ID}", "matting", split="test")                    # or streaming=True
row = ds[0]
video = row["video"]                  # torchcodec VideoDecoder
alpha = row["alpha_matte"][:][:, 0]   # uint8 (T, H, W): channel 0 of the lossless matte video
```

or, from a local copy, `hug_vis_dataset.hub.load_config(REPO_DIR, "matting")`.

| config | rows | shards | size |
| --- | --- | --- | --- |
{size_lines}

{config_sections}

Media are embedded as bytes, so the repo is self-contained: video and audio exactly as
released (H.264 MP4, 16-bit PCM WAV; `Audio` decodes WAV samples to float32 = int16 / 32768 at
the file's own rate), the source frame as a lossless PNG of the first video frame. The
generation configs store the clip's own recording as both driving signal and reference
(self-reenactment), so `vision_driven` carries the same video bytes twice.
{excluded}
## Alpha storage

Alpha mattes are stored losslessly as one `{codec.name}` video per clip (`{codec.codec}`,
`{codec.pix_fmt}`, in `{codec.container}`); decoded through `datasets.Video` (torchcodec) they equal
the release PNGs bit for bit (8-bit values; torchcodec returns three equal channels, take channel 0).
In this build the alpha videos take {alpha_bytes / 2**20:.2f} MiB against {png_bytes / 2**20:.2f} MiB of
release PNGs ({ratio}). Candidates measured (`scripts/bench_dataset.py --alpha-codecs` on 60 synthetic 320x180 mattes;
size relative to the PNG sequence, torchcodec decode time with one thread):

| codec | size vs PNGs | decode (60 frames) | bit-exact |
| --- | --- | --- | --- |
{measured}

FFV1 is the smallest bit-exact candidate and decodes fastest. `Video` columns are declared with
`num_ffmpeg_threads=0` (FFmpeg chooses the thread count; frames do not depend on it): iterating the
`matting` config through `datasets` then takes about as long as decoding the release MP4s with PyAV
and the PNGs with OpenCV (ratio 1.0x on the synthetic grid, `scripts/bench_dataset.py`).

## Evaluating each task

Every metric is an `evaluate` module that calls the `hug_vis_dataset` library; the `hugvis evaluate`
command joins a submission (one prediction per `clip_id`) to this dataset and writes per-clip rows.

{evaluation}
## Files and integrity

Shards are at most about {options.shard_bytes / 2**20:.0f} MiB with row groups of at most
{options.row_group_bytes / 2**20:.0f} MiB (uncompressed) or {options.max_rows_per_group} rows, sized for streaming and
under the dataset viewer's {VIEWER_ROW_GROUP_BYTES / 2**20:.0f} MiB row-group limit.
`manifest.json` lists every shard with its rows, first and last clip and sha256;
`checksums.sha256` checks with `sha256sum -c checksums.sha256`. Built by
`hugvis build RELEASE_DIR REPO_DIR` (hug-vis).
{storage_section(report)}
{CREATION_AND_CONSIDERATIONS}
## Licensing and access

Access is gated: the recordings show identifiable actors and are released for non-commercial
research only, under the HUG-VIS research license ({PROJECT_URL}). The paper: "Access is granted
after application review and is limited to non-commercial academic research under the recipient
data-use agreement." On the Hub, the access form below asks for the terms to be accepted; requests
are reviewed against them.

## Citation

```bibtex
{CITATION}
```

{links_markdown()}
"""
