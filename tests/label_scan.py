"""The label scan: every key the toolkit defines, looked for wherever a person reads.

A *key* is a name the code stores or computes with: a catalog metric or task name, a field of a catalog row, a MOS
criterion, a column of stored rows or of any table the statistics, the studies, the board or the release define (every
module constant named ``*_COLUMNS``), a field of the statistics engine's results, a reserved model name, and the clip
id's spelling of its parts (``actor_0001``, ``fearful``). The set is collected from the package itself
(:func:`toolkit_keys`), never written out by hand, so a key added tomorrow is scanned tomorrow.

Where a person reads, a key may not appear:

* **anywhere in prose**, a key that is no English word (it has ``_``, ``-`` or a digit, or it is a metric's name:
  ``n_ok``, ``acc_eq``, ``real-audio``, ``dtssd``), matched whole-word; ``N_ok`` is ``n_ok`` capitalised;
* **as a whole label** (a table's header or cell, a heading, a bold lead-in, an axis label or tick, a legend entry,
  a component's label or choice), any key, English word or not, spelled as the key (``emotion`` as a section
  heading, ``task`` as a column header, ``reference`` as a model choice); ``Emotion`` is a label.

Code is what a person types or opens, not a label: text in backticks and fenced blocks, paths and file names
(``fig8_emotion_difficulty.png``) are not scanned.

Example:
    >>> scan = Scan()
    >>> scan.markdown("report", "## emotion\\n\\n| task | Acc. (%) |\\n| --- | --- |\\n| emotion | 1 |\\n"
    ...               "run `hugvis evaluate audio_driven` for n_ok and acc_eq")
    >>> sorted(scan.found)
    ['acc_eq', 'emotion', 'n_ok', 'task']
    >>> Scan().found_in_prose("clip actor_0001_fearful_action_01_script_001 in fig8_emotion_difficulty.png")
    ['actor_0001', 'fearful']
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from functools import lru_cache

import hug_vis_dataset

#: Package parts that define no key a person could read (network graphs, generated kernels).
_SKIP_MODULES = ("hug_vis_dataset.models.", "_kernels", "winograd")


def _modules():
    for info in pkgutil.walk_packages(hug_vis_dataset.__path__, "hug_vis_dataset."):
        if not any(part in info.name for part in _SKIP_MODULES):
            yield info.name, importlib.import_module(info.name)


@lru_cache(maxsize=1)
def column_keys() -> dict[str, str]:
    """Every column key the package declares (a lowercase entry of a module constant named ``*_COLUMNS``) -> where."""
    keys: dict[str, str] = {}
    for name, module in _modules():
        for attr, value in vars(module).items():
            if attr.isupper() and attr.endswith("COLUMNS") and isinstance(value, (tuple, list)):
                for key in value:
                    if isinstance(key, str) and key and key == key.lower():
                        keys.setdefault(key, f"{name}.{attr}")
    return keys


@lru_cache(maxsize=1)
def toolkit_keys() -> dict[str, str]:
    """key -> what defines it, collected from the package."""
    from hug_vis_dataset import catalog
    from hug_vis_dataset.datamodel import results
    from hug_vis_dataset.scoring.store import FRAME_SCHEMA, ROW_SCHEMA

    keys: dict[str, str] = {}

    def add(names, where: str) -> None:
        for name in names:
            if isinstance(name, str) and name and name == name.lower():  # a capitalised name is a label already
                keys.setdefault(name, where)

    add((m.name for m in catalog.METRICS), "catalog metric")
    add(catalog.task_names(), "catalog task")
    add(catalog.SUITES, "catalog suite")
    add(catalog.PROTOCOLS, "catalog protocol")
    add((f.name for f in dataclasses.fields(catalog.MetricSpec)), "catalog metric field")
    add((f.name for f in dataclasses.fields(catalog.TaskSpec)), "catalog task field")
    add(catalog.MOS_CRITERIA, "MOS criterion")
    add(catalog.COLUMN_LABELS, "catalog column")
    for schema in (ROW_SCHEMA, FRAME_SCHEMA):
        add([*schema.required, *schema.optional], "stored-row column")
    add(results.RESULT_COLUMNS, "stored-row column")
    add(results.REFERENCE_MODELS, "reserved model")
    for key, where in column_keys().items():
        keys.setdefault(key, where)
    for name, module in _modules():
        if name.startswith("hug_vis_dataset.statistics."):
            for attr, value in vars(module).items():
                if dataclasses.is_dataclass(value) and getattr(value, "__module__", "") == name:
                    add((f.name for f in dataclasses.fields(value)), f"{name}.{attr} field")
    return keys


#: Keys that are English words: found only as a whole label (``task`` as a header), never in running text ("the
#: task's table"). A key not listed here is looked for everywhere: a new key that is a word is added here.
ENGLISH = frozenset("""
a against answer answers b baseline c call clip clips constrained coverage criterion d decimals definition delta description
detail difference discordant duration elapsed emotion error estimate exact extras flagged fps frame group height high
implementation intercept item judge key label left level link low mark matting metric mode model module motion n name
networks note origin outcome paradigm partial parts people prediction protocol rank ranked rater ratio reasons reference
resolution sample samples score set setting slope source status study system systems table task tasks text time transcript unit
value values
verdict weights why width word
""".split())


def _is_distinct(key: str) -> bool:
    return bool(re.search(r"[_\-\d]", key)) or key not in ENGLISH


@lru_cache(maxsize=1)
def _patterns() -> "tuple[re.Pattern, re.Pattern, frozenset]":
    keys = toolkit_keys()
    distinct = sorted((k for k in keys if _is_distinct(k)), key=len, reverse=True)
    underscored = [k for k in distinct if re.search(r"[_\-]", k)]
    plain = [k for k in distinct if k not in underscored]
    edge_before, edge_after = r"(?<![\w./\\-])", r"(?![\w/\\-]|\.\w)"
    anywhere = re.compile(edge_before + "(" + "|".join(map(re.escape, underscored)) + ")" + edge_after, re.I)
    metric_words = re.compile(edge_before + "(" + "|".join(map(re.escape, plain)) + ")" + edge_after)
    return anywhere, metric_words, frozenset(keys)


def strip_code(text: str) -> str:
    """``text`` without what a person types or opens: fenced blocks, backticked code, URLs and paths."""
    text = re.sub(r"```.*?```", " ", str(text), flags=re.S)
    text = re.sub(r"`[^`\n]*`", " ", text)
    text = re.sub(r"https?://\S+", " ", text)
    return re.sub(r"(?<![\w])(?:[\w.-]*/)+[\w.-]+|[\w-]+\.(?:png|svg|md|csv|json|jsonl|tex|html|parquet|wav|mp4)\b",
                  " ", text)


class Scan:
    """What was found where: ``found[key] = [where, ...]``."""

    def __init__(self) -> None:
        self.found: dict[str, list[str]] = {}

    def _hit(self, key: str, where: str) -> None:
        self.found.setdefault(key, []).append(where)

    def found_in_prose(self, text: str) -> list[str]:
        """The keys in running text (outside code)."""
        anywhere, metric_words, _ = _patterns()
        text = strip_code(text)
        hits = [m.lower() for m in anywhere.findall(text)] + metric_words.findall(text)
        hits += ["fearful"] * len(re.findall(r"(?i)(?<![a-z])fearful", text))
        hits += re.findall(r"(?<![\w])(?:actor|action|script)_\d+", text)
        return [h if not re.fullmatch(r"(actor|action|script)_\d+", h) else h.split("_")[0] + "_0001"
                for h in hits]

    def prose(self, where: str, *texts) -> None:
        for text in texts:
            for key in self.found_in_prose(str(text)):
                self._hit(key, where)

    def label(self, where: str, *texts) -> None:
        """Whole labels: any key spelled as the key, and keys inside them."""
        _, _, keys = _patterns()
        for text in texts:
            text = str(text)
            bare = re.sub(r"^[\s*_\\]+|[\s*_\\:.]+$", "", text)
            bare = re.sub(r"\s*[↑↓]\s*(\(.*\))?$", "", bare)  # a header's arrow and unit
            if bare in keys and len(bare) > 1 and not text.strip().startswith("`"):  # "a": a letter, not a key
                self._hit(bare, where)
            self.prose(where, text)

    def markdown(self, where: str, text: str) -> None:
        """Markdown: headings, bold lead-ins and table cells are labels; the rest prose."""
        text = re.sub(r"```.*?```", " ", str(text), flags=re.S)
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("#"):
                self.label(f"{where} heading", stripped.lstrip("#").strip())
            elif stripped.startswith("|") and not re.fullmatch(r"[\s|:\-]+", stripped):
                cells = re.split(r"(?<!\\)\|", stripped.strip("|"))
                self.label(f"{where} table", *(c.strip() for c in cells))
            for bold in re.findall(r"\*\*([^*]+)\*\*", stripped):
                self.label(f"{where} bold", bold)
            self.prose(where, stripped)

    def frame(self, where: str, frame) -> None:
        """A table's header (and index names) and every cell, as labels."""
        if frame is None or not hasattr(frame, "columns"):
            return
        self.label(f"{where} header", *(str(c) for c in frame.columns),
                   *(str(n) for n in getattr(frame.index, "names", []) if n))
        for value in frame.astype(str).to_numpy().ravel():
            self.label(f"{where} cell", value)

    def figure(self, where: str, figure) -> None:
        """A Matplotlib figure: its titles, axis labels, tick labels and legend entries."""
        suptitle = getattr(figure, "_suptitle", None)
        texts = [suptitle.get_text()] if suptitle is not None else []
        for ax in figure.axes:
            texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
            texts += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
            legend = ax.get_legend()
            texts += [t.get_text() for t in legend.get_texts()] if legend is not None else []
        self.label(f"{where} figure", *(t for t in texts if t))

    def report(self) -> dict[str, list[str]]:
        """``found`` with each key's places listed once, sorted."""
        return {k: sorted(set(v))[:8] for k, v in sorted(self.found.items())}
