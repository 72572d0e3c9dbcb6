"""The metric table: one typed row per metric and per cross-task analysis, and one per task.

Every fact *about* a metric lives here once: its name (which is also the evaluate module folder
``metrics/<name>/`` and the ``metric`` value of stored result rows), the paper's label, the tasks
it serves, its mode, direction, range, unit and the one rule that converts a stored value to the
paper's unit, the aggregation protocol of its task table, the pretrained files it needs, the paper
table that reports it and the function that computes it (so a metric is one row + one function).
Per-task metric lists, the task scorers' dispatch, report and Space tables, the dataset card's
evaluation section, the evaluate modules and their cards, the weights -> metrics mapping and the
accepted upload suffixes are all derived from these rows (``tests/test_catalog.py`` checks that the
table, the ``metrics/`` folders and the weights registry agree).

Units contract (one rule): a stored per-clip value is what the library's metric function returns
(matting errors already carry RVM's scaling, e.g. MAD x1e3); the paper's number is
``stored value x paper_scale``. Only emotion accuracy has ``paper_scale != 1`` (per-clip
correctness 0/1, printed in %).

Example:
    >>> spec("dtssd").higher_is_better, spec("dtssd").tasks
    (False, ('matting',))
    >>> table_metrics("vision_driven")
    ('lpips', 'csim', 'psnr', 'ssim', 'fid')
    >>> to_paper_units("emotion_accuracy", 0.75)
    75.0
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable

from .column_labels import COLUMN_LABELS, MOS_CRITERIA, SOURCE_LABELS  # noqa: F401 (part of the catalog)

# Modes: how a metric consumes its inputs.
FRAME_PAIRED = "frame-paired"  # generated frame i vs reference frame i (PSNR, SSIM, LPIPS, matting errors)
CLIP_PAIRED = "clip-paired"  # a clip vs one reference item (CSIM vs the source portrait, speaker similarity)
REFERENCE_FREE = "reference-free"  # the prediction alone (UTMOS, DNSMOS, Sync)
LABEL = "label"  # a predicted label vs the clip's instructed emotion
SET_LEVEL = "set"  # one value per system over all its clips (FID)
REFERENCE_ONLY = "reference-only"  # statistics of the reference data itself (motion U_s, V_s)
ANALYSIS = "analysis"  # a cross-task analysis over stored rows
MODES = (FRAME_PAIRED, CLIP_PAIRED, REFERENCE_FREE, LABEL, SET_LEVEL, REFERENCE_ONLY, ANALYSIS)

# Calls: how a task scorer calls the function a per-clip row names (MetricSpec.call; tasks/dispatch.py).
PER_FRAME = "per-frame"  # fn(pred_chunk, ref_chunk) -> a value per frame pair; clip value = exact mean over frames
PER_CLIP = "per-clip"  # fn(pred) (reference-free) or fn(pred, ref) -> the clip's value (audio: 16 kHz mono)
KERNEL = "kernel"  # the task's own pass calls it; the rows naming one kernel are computed by one call
PER_TRACK = "per-track"  # fn(pred_track[, ref_track]) on the clip's landmark tracks (metrics/human_tracks.py)
CALLS = (PER_FRAME, PER_CLIP, KERNEL, PER_TRACK)

# Per-clip reducers (how a clip's frames/windows become its value) and table protocols.
RVM = "rvm"  # RobustVideoMatting's spreadsheet average (per frame index, then over indices)
CLIP = "clip"  # mean over clips of per-clip values
#: What each protocol's headline value is, in words (every door that prints one labels it so).
PROTOCOL_WORDS = {RVM: "RVM's average: for each frame index the mean over the clips that have it, then the mean "
                       "over frame indices (dtSSD counts 0 at frame 0)",
                  CLIP: "the mean over clips of each clip's own value (its mean over its frames)"}
SET = "set"  # the set-level value as stored
RATIO = "ratio"  # corpus ratio: sum over clips of one stored row / sum of another (MetricSpec.ratio_of; CER)
PROTOCOLS = (RVM, CLIP, SET, RATIO)


@dataclass(frozen=True)
class MetricSpec:
    """One metric or analysis.

    Attributes:
        name: machine name = evaluate folder = ``metric`` of stored rows.
        label: the paper's column header (``dtSSD``).
        tasks: the tasks whose rows carry it (CSIM serves two); ``()`` for analyses.
        mode: one of :data:`MODES`.
        higher_is_better: direction of improvement (analyses: of their headline number).
        value_range: range of the stored value (``inf`` where unbounded).
        unit: what the stored value is, in words.
        paper_scale: paper value = stored value x paper_scale.
        protocol: the task table's aggregation of this metric (:data:`RVM`, :data:`CLIP`, :data:`SET`,
            :data:`RATIO`).
        weights: names in the weights registry (:mod:`hug_vis_dataset.weights`) it needs.
        paper_table: where the paper reports it.
        in_table: a column of its task's paper table (DNSMOS SIG/BAK/P.808 are stored, not printed).
        module: it has an evaluate module (reference statistics do not).
        description: one line for cards and listings.
        definition: the exact definition, written into the module card.
        reference_urls: the reference implementation(s) it was checked against.
        extras: ``hug-vis`` extras its computation imports beyond the base package (a published
            module Space installs them, :mod:`hug_vis_dataset.publish.release_info`).
        unit_short: the unit as a column header shows it (``×1e3``, ``dB``); empty when the label
            says it all.
        decimals: the paper's printed decimals for the metric's values of 1 or more; a value below 1
            gets one more (``0.044``, not ``0.04``), as the leaderboard prints (:meth:`printed`).
        implementation: the function computing it, ``"module:function"`` (:func:`implementation_of`),
            so a metric or an analysis is one row plus one function: a per-clip metric's in
            :mod:`hug_vis_dataset.metrics`, called by its task scorer as :attr:`call` says
            (:mod:`hug_vis_dataset.tasks.dispatch`); an analysis's in :mod:`hug_vis_dataset.analyses`.
        call: :data:`PER_FRAME` (on each chunk of the task's one decode; the clip value is the exact
            mean), :data:`PER_CLIP` (once per decoded clip) or :data:`KERNEL` (the task's own pass; the
            rows naming one kernel are computed by one call); empty for analyses.
        networks: the model kinds (:data:`hug_vis_dataset.tasks.models.LOADERS`) its function is given
            first, loaded once per process; a missing one fails (or stops the door on) this row only. A
            :data:`PER_TRACK` row's function gets the tracks instead: its networks are the landmark parts
            the video pass runs to build them (``human_pose``, ``human_hands``, ``human_face``).
        counted_alone: a failure of this row leaves the clip's other rows counted (the human-motion rows:
            a clip whose reference shows no hand has no hand fidelity, but its PSNR still counts);
            :func:`hug_vis_dataset.scoring.aggregate.counted_rows`.
        range_is_bound: the stored value can never leave ``value_range`` (a stored run with a value
            outside it is damaged). False where the range is the nominal scale of a network's
            prediction that can fall outside it (DNSMOS's fitted polynomials, UTMOS's regression
            head): only finiteness is then required.
        predicts_mos: the MOS criterion a MOS-scale metric predicts (ITU-T P.1401, metrics/p1401.py): ``_NAT``,
            the naturalness MOS the study rates as Emotion Naturalness (DNSMOS SIG/BAK: scales it does not rate).
        ratio_of: under :data:`RATIO`, the stored rows ``(numerator, denominator)`` whose sums over
            a model's clips give its table value (CER: total edits / total target characters); the
            per-clip value is their quotient.
        beyond_paper: a column the paper does not report (printed beside its task's paper table,
            never among the paper's columns: the report's "beyond the paper" table).
        reference_kind: what a paired row compares with when it is not its task's reference media
            (``text``: the clip's target text), so the evaluate door's ``references`` are that.
    """

    name: str
    label: str
    tasks: tuple[str, ...]
    mode: str
    higher_is_better: bool
    value_range: tuple[float, float]
    unit: str
    paper_scale: float = 1.0
    protocol: str = CLIP
    weights: tuple[str, ...] = ()
    paper_table: str = ""
    in_table: bool = True
    module: bool = True
    description: str = ""
    definition: str = ""
    reference_urls: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()
    unit_short: str = ""
    range_is_bound: bool = True
    decimals: int = 2
    implementation: str = ""
    call: str = ""
    networks: tuple[str, ...] = ()
    predicts_mos: str = ""
    ratio_of: tuple[str, ...] = ()
    beyond_paper: bool = False
    reference_kind: str = ""
    counted_alone: bool = False

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"{self.name}: mode {self.mode!r} is not one of {MODES}")
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"{self.name}: protocol {self.protocol!r}")
        if (self.protocol == RATIO) != (len(self.ratio_of) == 2):
            raise ValueError(f"{self.name}: protocol {RATIO!r} needs ratio_of=(numerator row, denominator row), "
                             "and only it takes ratio_of")
        if self.beyond_paper and self.paper_table:
            raise ValueError(f"{self.name}: a column beyond the paper has no paper table")
        module, colon, function = self.implementation.partition(":")
        if not (colon and function.isidentifier() and all(part.isidentifier() for part in module.split("."))):
            raise ValueError(f"{self.name}: implementation {self.implementation!r} does not name its function "
                             "as 'package.module:function'")
        if self.mode == ANALYSIS and (self.call or self.networks):
            raise ValueError(f"{self.name}: an analysis is called by analyses.run: no call or networks")
        if self.mode != ANALYSIS and self.call not in CALLS:
            raise ValueError(f"{self.name}: call {self.call!r} is not one of {CALLS} (how its task scorer calls "
                             f"{self.implementation})")

    def printed(self, value: float) -> str:
        """A value (paper units) as tables print it: :attr:`decimals`, one more below 1; a column whose values
        cannot leave [-1, 1] (a bounded range, in paper units) prints every value with that one more, so its
        1.0 reads 1.000 beside 0.990, not 1.00.

        Example:
            >>> spec("grad").printed(10.431), spec("grad").printed(0.0441), spec("csim").printed(0.9041)
            ('10.43', '0.044', '0.904')
            >>> spec("speaker_similarity").printed(1.0), spec("grad").printed(0.0)
            ('1.000', '0.00')
        """
        value = float(value)
        bounded = self.range_is_bound and max(map(abs, self.value_range)) * self.paper_scale <= 1
        places = self.decimals if (abs(value) >= 1 or value == 0) and not bounded else self.decimals + 1
        return f"{value:.{places}f}"

    @property
    def arrow(self) -> str:
        """``↑`` or ``↓``."""
        return direction_arrow(self.higher_is_better)

    @property
    def header(self) -> str:
        """The column header of leaderboards: label, arrow and short unit (``MAD ↓ (×1e3)``)."""
        return column_header(self.label, self.higher_is_better, self.unit_short)


def direction_arrow(higher_is_better: bool) -> str:
    """``↑`` when higher is better, else ``↓``."""
    return "↑" if higher_is_better else "↓"


def column_header(label: str, higher_is_better: bool, unit_short: str = "") -> str:
    """A leaderboard column's header: label, direction arrow and short unit.

    Example:
        >>> column_header("ID Similarity", True, MOS_SCALE_TEXT)
        'ID Similarity ↑ (1-5)'
    """
    return f"{label} {direction_arrow(higher_is_better)}" + (f" ({unit_short})" if unit_short else "")


#: The scale of mean opinion scores, rated (the MOS study) and predicted (UTMOS, DNSMOS).
MOS_SCALE: tuple[int, int] = (1, 5)
MOS_SCALE_TEXT = f"{MOS_SCALE[0]}-{MOS_SCALE[1]}"


@dataclass(frozen=True)
class TaskSpec:
    """One task of the benchmark (a dataset config and a scorer).

    Attributes:
        name: task name (= dataset config = ``task`` of stored rows).
        label: human name.
        paper_table: the paper's objective table number (``None`` for reference statistics).
        mos_table: the paper's MOS table number, if any.
        prediction: the submission layout of one clip, in words (help texts, Space).
        prediction_suffixes: accepted file suffixes of one clip's prediction.
        prediction_dirs: a clip's prediction may be a folder (PNG frames).
        example_tree: an example submission folder, one entry per line.
        counted_per_metric: a clip whose reference leaves a metric undefined leaves that metric alone (counted_rows).
        samples: a clip may hold several samples (``<clip_id>/sample_<k>``: :mod:`hug_vis_dataset.tasks.submission`).
    """

    name: str
    label: str
    paper_table: "int | None"
    mos_table: "int | None" = None
    prediction: str = ""
    prediction_suffixes: tuple[str, ...] = ()
    prediction_dirs: bool = False
    example_tree: tuple[str, ...] = field(default_factory=tuple)
    counted_per_metric: bool = False
    samples: bool = False


_CLIP = "actor_0001_happy_action_01_script_001"

TASKS: tuple[TaskSpec, ...] = (
    TaskSpec("emotion", "Multimodal emotion recognition", 4, None,
             "predictions.jsonl: one JSON line per clip and input setting: "
             '{"clip_id", "input_setting", "answer"}', (".jsonl",),
             example_tree=("predictions.jsonl",)),
    TaskSpec("audio_driven", "Audio-driven video generation", 5, 6,
             "<clip_id>.mp4: the generated video, as many frames as the reference video (any size)",
             (".mp4", ".mkv", ".mov"), example_tree=(f"{_CLIP}.mp4", "actor_0001_happy_action_01_script_002.mp4"), samples=True),
    TaskSpec("vision_driven", "Vision-driven video generation", 7, 8,
             "<clip_id>.mp4: the generated video, same frame count and size as the reference video",
             (".mp4", ".mkv", ".mov"), example_tree=(f"{_CLIP}.mp4", "actor_0001_happy_action_01_script_002.mp4"), samples=True),
    TaskSpec("voice_cloning", "Voice cloning", 9, 10,
             "<clip_id>.wav (or .flac): the cloned speech at the release's sample rate",
             (".wav", ".flac"), example_tree=(f"{_CLIP}.wav", "actor_0001_happy_action_01_script_002.wav"), samples=True),
    TaskSpec("matting", "Video matting", 11, None,
             "<clip_id>/000000.png ... (8-bit gray PNGs) or <clip_id>.mp4|.mkv|.mov (lossless gray video); "
             "frame count and size equal to the reference alpha",
             (".mp4", ".mkv", ".mov"), prediction_dirs=True,
             example_tree=(f"{_CLIP}/000000.png", f"{_CLIP}/000001.png", "actor_0001_happy_action_01_script_002.mkv"),
             samples=True),
    TaskSpec("matting_boundary", "Boundary-aware matting errors (finding iii)", None, None,
             "the matting submission: <clip_id>/000000.png ... or <clip_id>.mp4|.mkv|.mov (lossless gray video)",
             (".mp4", ".mkv", ".mov"), prediction_dirs=True,
             example_tree=(f"{_CLIP}/000000.png", f"{_CLIP}/000001.png"), counted_per_metric=True, samples=True),
    TaskSpec("motion", "Reference motion statistics (Fig. 11)", None),
)

_RVM_URL = "https://github.com/PeterL1n/RobustVideoMatting/blob/master/evaluation/evaluate_lr.py"
_SKIMAGE = "https://scikit-image.org/docs/stable/api/skimage.metrics.html"
_MATTING_DEF = ("Alpha mattes read as 8-bit gray and divided by 255; per frame {what}; the clip value is the "
                "mean over its frames; Table 11 aggregates under RVM's protocol: for each frame index the mean "
                "over the clips that have it, then the mean over frame indices.")

_M = "hug_vis_dataset.metrics."  # where the per-clip rows' functions live
# DNSMOS's four scores: one call of the DNS-Challenge scorer.
_NAT = "emotion_naturalness"  # the MOS criterion the MOS-scale predictors predict (MetricSpec.predicts_mos)
_DNSMOS = dict(weights=("dnsmos_sig_bak_ovr", "dnsmos_p808"), reference_urls=("https://github.com/microsoft/DNS-Challenge",),
               range_is_bound=False, implementation=_M + "voice:dnsmos", call=KERNEL)
# CER's three rows: one kernel call (one transcript) gives the quotient and its two integers.
_WHISPER = ("whisper_large_v3", "whisper_large_v3_config", "whisper_large_v3_generation", "whisper_large_v3_tokenizer")
_CIRCULAR = dict(paper_scale=100.0, beyond_paper=True, module=False, counted_alone=True, call=KERNEL,
                 implementation=_M + "emotion:parse_answer")
_CER = dict(weights=_WHISPER, beyond_paper=True, reference_kind="text", implementation=_M + "cer:cer_clip",
            call=KERNEL, networks=("asr",),
            reference_urls=("https://github.com/BytedanceSpeech/seed-tts-eval", "https://huggingface.co/openai/whisper-large-v3"))
# Table 11's five errors: one fused kernel (RVM's evaluation), aggregated under RVM's protocol.
_TABLE_11 = dict(protocol=RVM, paper_table="Table 11", reference_urls=(_RVM_URL,),
                 implementation=_M + "matting:score_matting_clip", call=KERNEL)

INF = float("inf")
_GEN = ("audio_driven", "vision_driven")
_POSE = ("mediapipe_pose_detection", "mediapipe_pose_landmark_full")
_HANDS = ("mediapipe_hand_recrop", "mediapipe_hand_landmark_full")
_FACE = ("mediapipe_face_detection_short_range", "mediapipe_face_detection_full_range", "mediapipe_face_landmark")
_HUMAN_DOC = " Formula, units and normalisation: docs/HUMAN_METRICS.md."


def _human_rows() -> tuple["MetricSpec", ...]:
    """The human-motion rows (issue 53): MediaPipe's pose, hand and face models on every frame of the one
    decode (:mod:`hug_vis_dataset.tasks.human_pass`), each row one function of the landmark tracks in
    :mod:`hug_vis_dataset.metrics.human_motion`. Name, label, tasks, mode, higher is better, range, unit, short
    unit, parts, definition."""
    rows = (
        ("person_missing", "No person", _GEN, REFERENCE_FREE, False, 100.0, "% of frames with no person found", "%",
         ("human_pose",), "share of the generated video's frames in which the pose detector and landmark model "
         "find no person"),
        ("face_missing", "No face", _GEN, REFERENCE_FREE, False, 100.0, "% of frames with no face found", "%",
         ("human_pose", "human_face"), "share of the generated video's frames in which no face mesh is found"),
        ("body_jitter", "Jitter", _GEN, REFERENCE_FREE, False, INF, "shoulder widths per frame^2", "SW/f²",
         ("human_pose",), "mean over frames t of the mean over visible upper-body landmarks k (pose 0-22) of "
         "|p_k(t+1) - 2 p_k(t) + p_k(t-1)| / S(t), S = shoulder width"),
        ("bone_length_variation", "Bone CV", _GEN, REFERENCE_FREE, False, INF,
         "% coefficient of variation of arm bone lengths", "%", ("human_pose",),
         "mean over the four arm bones of std/mean over frames of the bone's length / S(t), x100"),
        ("joint_angle_violations", "Joint viol.", _GEN, REFERENCE_FREE, False, 100.0,
         "% of elbow and wrist angles outside the human range", "%", ("human_pose",),
         "share of measured elbow and wrist interior angles (pose world landmarks) below the least a human joint "
         "allows"),
        ("finger_angle_violations", "Finger viol.", ("vision_driven",), REFERENCE_FREE, False, 100.0,
         "% of finger joint angles outside the human range", "%", ("human_pose", "human_hands"),
         "share of measured finger joint interior angles (hand world landmarks) below the least a human joint allows"),
        ("akd", "AKD", ("vision_driven",), FRAME_PAIRED, False, INF, "shoulder widths", "SW", ("human_pose",),
         "mean over frames of the mean over upper-body landmarks visible in the reference of |p_pred - p_ref| / "
         "S_ref(t)"),
        ("akd_drift", "AKD drift", ("vision_driven",), FRAME_PAIRED, False, (-INF, INF),
         "shoulder widths per second", "SW/s", ("human_pose",),
         "least-squares slope of the per-frame AKD against time"),
        ("hand_recall", "Hands found", ("vision_driven",), FRAME_PAIRED, True, 100.0,
         "% of the reference's hands found", "%", ("human_pose", "human_hands"),
         "of the (frame, hand) pairs where the reference shows that hand, the share where the generated video "
         "shows it too"),
        ("hand_keypoint_distance", "Hand KD", ("vision_driven",), FRAME_PAIRED, False, INF, "palm lengths", "PL",
         ("human_pose", "human_hands"), "where both show a hand: mean over its 21 landmarks of |(h_i - h_0) - "
         "(r_i - r_0)| / |r_9 - r_0| (wrist-relative shape, reference palm length)"),
        ("lmd", "LMD", _GEN, FRAME_PAIRED, False, INF, "eye widths", "EW", ("human_pose", "human_face"),
         "mean over frames with a face in both of the mean distance between the 40 lip points, each face's lips "
         "centred, rotated level with its outer eye corners (33, 263) and divided by their distance"),
        ("mouth_audio_offset", "Mouth-audio lag", ("audio_driven",), CLIP_PAIRED, False, (0.0, float(15)),
         "frames of lag (absolute)", "frames", ("human_pose", "human_face"),
         "|L| maximising the Pearson correlation of the mouth opening (inner lips 13-14 / eye width) at t with "
         "the driving audio's RMS during frame t - L, L in -15..15"),
        ("mouth_audio_sync", "Mouth-audio r", ("audio_driven",), CLIP_PAIRED, True, (-1.0, 1.0), "Pearson correlation at the lag",
         "", ("human_pose", "human_face"), "that largest correlation (a mouth that does not follow the audio: near 0)"),
    )
    return tuple(
        MetricSpec(name, label, tasks, mode, better, bound if isinstance(bound, tuple) else (0.0, bound), unit,
                   weights=_POSE + (_HANDS if "human_hands" in parts else ()) + (_FACE if "human_face" in parts else ()),
                   beyond_paper=True, implementation=_M + f"human_motion:{name}",
                   call=PER_TRACK, networks=parts, counted_alone=True, unit_short=short,
                   reference_kind="audio" if name.startswith("mouth_audio") else "",
                   description=f"{label}: {unit}, from MediaPipe's landmarks ({'higher' if better else 'lower'} is "
                               "better).",
                   definition=f"{text[0].upper()}{text[1:]}; frames where a part is missing are counted in the "
                              "row's remark and left out, a clip with none fails with its reason." + _HUMAN_DOC,
                   reference_urls=("https://github.com/google-ai-edge/mediapipe",), extras=("human", "video"))
        for name, label, tasks, mode, better, bound, unit, short, parts, text in rows)

METRICS: tuple[MetricSpec, ...] = (
    # ---------------------------------------------------------------- matting (Table 11)
    MetricSpec("mad", "MAD", ("matting",), FRAME_PAIRED, False, (0.0, 1000.0), "mean |alpha error| x1e3", **_TABLE_11,
               description="Mean absolute difference of alpha mattes x1e3 (RVM evaluation).",
               definition=_MATTING_DEF.format(what="MAD = mean |p - t| x 1e3")),
    MetricSpec("mse", "MSE", ("matting",), FRAME_PAIRED, False, (0.0, 1000.0), "mean squared alpha error x1e3",
               **_TABLE_11, description="Mean squared difference of alpha mattes x1e3 (RVM evaluation).",
               definition=_MATTING_DEF.format(what="MSE = mean (p - t)^2 x 1e3")),
    MetricSpec("dtssd", "dtSSD", ("matting",), FRAME_PAIRED, False, (0.0, float("inf")),
               "RMS of the temporal-derivative error x1e2", **_TABLE_11,
               description="Temporal coherence: RMS of the frame-difference error x1e2 (RVM evaluation).",
               definition=_MATTING_DEF.format(
                   what="dtSSD = sqrt(sum(((p_t - p_{t-1}) - (t_t - t_{t-1}))^2) / n_pixels) x 1e2 for frames "
                        "t >= 1 (RVM counts 0 at frame 0)")),
    MetricSpec("grad", "Grad", ("matting",), FRAME_PAIRED, False, (0.0, float("inf")),
               "sum of squared Gaussian-gradient differences / 1000", **_TABLE_11,
               description="Gradient error: Gaussian derivative (sigma 1.4) magnitude difference, sum of squares / 1000.",
               definition=_MATTING_DEF.format(
                   what="both mattes min-max normalised (RVM low-resolution script), Gaussian first-derivative "
                        "filters sigma 1.4, Grad = sum (|grad p| - |grad t|)^2 / 1000")),
    MetricSpec("conn", "Conn", ("matting",), FRAME_PAIRED, False, (0.0, float("inf")),
               "connectivity error sum / 1000", **_TABLE_11,
               description="Connectivity error over thresholds 0..1 step 0.1, sum / 1000 (RVM evaluation).",
               definition=_MATTING_DEF.format(
                   what="the largest 4-connected region of both mattes above each threshold 0, 0.1, ..., 1 gives "
                        "the connectivity level; Conn = sum |phi(p) - phi(t)| (phi = 1 - d, d < 0.15 -> 0) / 1000")),
    # ---------------------------------------------------------------- generation (Tables 5, 7)
    MetricSpec("lpips", "LPIPS", ("vision_driven",), FRAME_PAIRED, False, (0.0, float("inf")), "LPIPS distance",
               weights=("alexnet", "lpips_alex_linear"), paper_table="Table 7",
               implementation=_M + "frames:lpips_frames", call=PER_FRAME, networks=("lpips",),
               description="LPIPS v0.1 (AlexNet) between generated and reference frames, mean over frames.",
               definition="lpips 0.1.4, AlexNet backbone with the v0.1 linear heads, inputs x / 127.5 - 1, spatial "
                          "average per frame; frame i of the prediction vs frame i of the reference video; the clip "
                          "value is the mean over frames.",
               reference_urls=("https://github.com/richzhang/PerceptualSimilarity",)),
    MetricSpec("csim", "CSIM", ("audio_driven", "vision_driven"), CLIP_PAIRED, True, (-1.0, 1.0), "cosine similarity",
               weights=("arcface_det_10g", "arcface_w600k_r50"), paper_table="Tables 5, 7",
               implementation=_M + "identity:CsimAccumulator", call=KERNEL, networks=("face_detector", "face_embedder"),
               description="ArcFace identity similarity of every generated frame to the clip's source portrait.",
               definition="insightface buffalo_l: SCRFD det_10g finds the largest face of each generated frame, "
                          "5-point similarity alignment to 112x112, ArcFace w600k_r50 embedding; CSIM of a frame = "
                          "cosine to the embedding of the source portrait (the clip's `source_frame`: the first "
                          "frame of the reference video); the clip value is the mean over frames with a face "
                          "(frames without a face are counted, not scored). Audio- and vision-driven generation "
                          "use this one definition.",
               reference_urls=("https://github.com/deepinsight/insightface",)),
    MetricSpec("psnr", "PSNR", ("vision_driven",), FRAME_PAIRED, True, (0.0, 100.0), "dB", paper_table="Table 7",
               implementation=_M + "frames:psnr_frames", call=PER_FRAME,
               description="Peak signal-to-noise ratio (dB) per RGB frame, data range 255, capped at 100 dB.",
               definition="PSNR = 10 log10(255^2 / MSE) with one MSE over the three RGB channels of a frame "
                          "(skimage.metrics.peak_signal_noise_ratio, data_range=255); identical frames are capped "
                          "at 100 dB; the clip value is the mean over frames.", reference_urls=(_SKIMAGE,)),
    MetricSpec("ssim", "SSIM", ("vision_driven",), FRAME_PAIRED, True, (-1.0, 1.0), "SSIM index", paper_table="Table 7",
               implementation=_M + "frames:ssim_frames", call=PER_FRAME,
               description="Gaussian-window SSIM (Wang et al. 2004) per RGB channel, averaged, per frame.",
               definition="skimage.metrics.structural_similarity with data_range=255, gaussian_weights=True, "
                          "sigma=1.5 (11 taps), use_sample_covariance=False, K1=0.01, K2=0.03, per RGB channel "
                          "then averaged; the map is averaged over the valid interior (5-pixel border cropped); "
                          "the clip value is the mean over frames.", reference_urls=(_SKIMAGE,)),
    MetricSpec("fid", "FID", ("vision_driven",), SET_LEVEL, False, (0.0, float("inf")), "Frechet distance",
               protocol=SET, weights=("inception_fid",), paper_table="Table 7",
               implementation=_M + "fid:fid_from_stats", call=KERNEL, networks=("inception",),
               description="Frechet Inception distance over all frames of a system vs all reference frames.",
               definition="Inception-v3 pool3 (2048-d, the FID weights of pytorch-fid/torch-fidelity) features of "
                          "every frame of every generated clip vs every frame of the reference videos, Frechet "
                          "distance of the two Gaussians in float64 (sqrtm with eps 1e-6 fallback). One value per "
                          "system; unstable below 2048 frames.",
               reference_urls=("https://github.com/mseitzer/pytorch-fid",)),
    MetricSpec("sync_c", "Sync-C", ("audio_driven",), REFERENCE_FREE, True, (0.0, float("inf")),
               "SyncNet confidence", weights=("syncnet_v2", "arcface_det_10g"), paper_table="Table 5",
               implementation=_M + "sync:syncnet_from_detections", call=KERNEL, networks=("syncnet", "face_detector"),
               description="SyncNet lip-sync confidence: median minus minimum mean distance over offsets.",
               definition="Video resampled to 25 fps, face track (SCRFD), 224x224 mouth-centred crops in 5-frame "
                          "windows vs 13-d MFCC (100 Hz, 20 per window) of the 16 kHz mono audio; per offset in "
                          "-15..15 the mean L2 distance over frames; Sync-C = median - min over offsets; mean over "
                          "face tracks.", reference_urls=("https://github.com/joonson/syncnet_python",)),
    MetricSpec("sync_d", "Sync-D", ("audio_driven",), REFERENCE_FREE, False, (0.0, float("inf")),
               "SyncNet distance", weights=("syncnet_v2", "arcface_det_10g"), paper_table="Table 5",
               implementation=_M + "sync:syncnet_from_detections", call=KERNEL, networks=("syncnet", "face_detector"),
               description="SyncNet lip-sync distance: minimum over offsets of the mean distance.",
               definition="As Sync-C; Sync-D = min over offsets of the mean L2 distance; mean over face tracks.",
               reference_urls=("https://github.com/joonson/syncnet_python",)),
    # ---------------------------------------------------------------- voice cloning (Table 9)
    MetricSpec("utmos", "UTMOS", ("voice_cloning",), REFERENCE_FREE, True, (1.0, 5.0), "predicted MOS, 1-5 scale (unclipped)",
               weights=("utmos22_strong",), paper_table="Table 9",
               implementation=_M + "voice:utmos_clip", call=PER_CLIP, networks=("utmos",),
               description="UTMOS22 strong learner (SpeechMOS) naturalness MOS prediction, reference-free.",
               definition="16 kHz mono; wav2vec 2.0 + BLSTM UTMOS22 strong learner; score = 2 x frame mean + 3.",
               reference_urls=("https://github.com/tarepan/SpeechMOS",), range_is_bound=False, predicts_mos=_NAT),
    MetricSpec("dnsmos", "DNSMOS", ("voice_cloning",), REFERENCE_FREE, True, (1.0, 5.0), "P.835 OVRL, MOS-scale fit (unclipped)",
               **_DNSMOS, paper_table="Table 9", predicts_mos=_NAT,
               description="DNSMOS P.835 OVRL (overall quality), mean over 9.01 s windows, reference-free.",
               definition="microsoft/DNS-Challenge dnsmos_local.py: 16 kHz, clips shorter than 9.01 s tiled, "
                          "9.01 s windows with 1 s hop, sig_bak_ovr.onnx raw scores mapped by the P.835 "
                          "polynomials; the clip value is the mean OVRL over windows."),
    MetricSpec("dnsmos_sig", "DNSMOS SIG", ("voice_cloning",), REFERENCE_FREE, True, (1.0, 5.0), "P.835 SIG, MOS-scale fit (unclipped)",
               **_DNSMOS, paper_table="", in_table=False, description="DNSMOS P.835 SIG (speech signal quality).",
               definition="As DNSMOS; the SIG output."),
    MetricSpec("dnsmos_bak", "DNSMOS BAK", ("voice_cloning",), REFERENCE_FREE, True, (1.0, 5.0), "P.835 BAK, MOS-scale fit (unclipped)",
               **_DNSMOS, paper_table="", in_table=False, description="DNSMOS P.835 BAK (background noise quality).",
               definition="As DNSMOS; the BAK output."),
    MetricSpec("dnsmos_p808", "DNSMOS P.808", ("voice_cloning",), REFERENCE_FREE, True, (1.0, 5.0), "P.808 MOS prediction (unclipped)",
               **_DNSMOS, paper_table="", in_table=False, description="DNSMOS P.808 MOS (model_v8).", predicts_mos=_NAT,
               definition="As DNSMOS; model_v8.onnx on a 120-band mel spectrogram (n_fft 321, hop 160)."),
    MetricSpec("speaker_similarity", "Speaker Sim.", ("voice_cloning",), CLIP_PAIRED, True, (0.0, 1.0),
               "cosine similarity", weights=("resemblyzer_encoder",), paper_table="Table 9",
               implementation=_M + "voice:speaker_similarity", call=KERNEL,
               description="Resemblyzer speaker-embedding cosine similarity, generated vs reference audio.",
               definition="Resemblyzer preprocess_wav (16 kHz, -30 dBFS, VAD trimming) and embed_utterance "
                          "(1.6 s partials at 1.3 per second, mean then L2 norm); similarity = dot product of the "
                          "generated and the clip's reference recording embeddings.",
               reference_urls=("https://github.com/resemble-ai/Resemblyzer",)),
    # ---------------------------------------------------------------- voice cloning, beyond the paper (issue 46)
    MetricSpec("cer", "CER", ("voice_cloning",), CLIP_PAIRED, False, (0.0, float("inf")),
               "character error rate (edits / target characters)", paper_scale=100.0, protocol=RATIO,
               ratio_of=("cer_edits", "cer_ref_chars"), **_CER,
               description="Character error rate of a Whisper large-v3 transcript of the generated speech against "
                           "the clip's target text (Seed-TTS-eval normalisation), corpus-level.",
               definition="The generated audio (16 kHz mono) is transcribed by Whisper large-v3 (transformers; greedy, "
                          "forced <|zh|><|transcribe|><|notimestamps|>; 30 s windows). Transcript and target text "
                          "are normalised in this order: full-width to half-width (U+FF01-U+FF5E, U+3000), "
                          "traditional to simplified Chinese (zhconv, zh-cn, as Seed-TTS-eval), every Unicode "
                          "punctuation character (P*) and ASCII symbol of string.punctuation removed, every "
                          "whitespace removed; case kept. Per clip: CER = Levenshtein distance over characters / "
                          "normalised target length (stored with its two integers, cer_edits and cer_ref_chars). "
                          "Table value: corpus CER = total edits / total target characters over the ok clips, "
                          "printed in %. Whisper large-v3, not Seed-TTS-eval's Paraformer-zh: it runs through "
                          "transformers, already a dependency, and its Hub files are pinned by commit and "
                          "sha256; its Mandarin CERs are higher than Paraformer's, so compare systems scored "
                          "here with each other and with the Real-audio row (the recogniser's floor on the "
                          "release's own recordings)."),
    MetricSpec("cer_edits", "CER edits", ("voice_cloning",), CLIP_PAIRED, False, (0.0, float("inf")),
               "character edits (Levenshtein) of the normalised transcript", in_table=False, module=False, **_CER,
               description="CER's numerator: character edits between the normalised transcript and target text.",
               definition="As CER; the Levenshtein distance (substitutions, deletions, insertions) of the clip."),
    MetricSpec("cer_ref_chars", "CER target characters", ("voice_cloning",), CLIP_PAIRED, True,
               (1.0, float("inf")), "characters of the normalised target text", in_table=False, module=False,
               **_CER, description="CER's denominator: characters of the clip's normalised target text.",
               definition="As CER; the length of the normalised target text of the clip."),
    MetricSpec("distill_mos", "Distill-MOS", ("voice_cloning",), REFERENCE_FREE, True, MOS_SCALE,
               "predicted MOS, 1-5", weights=("distill_mos_v7",), beyond_paper=True,
               implementation=_M + "distill_mos:distill_mos_clip", call=KERNEL, networks=("distill_mos",),
               description="Distill-MOS (ICASSP 2025) speech-quality MOS prediction, reference-free.",
               definition="The distillmos package's ConvTransformerSQAModel with its shipped distill_mos_v7 weights, "
                          "as its README scores a file: mono samples (channel mean), resampled to 16 kHz with "
                          "torchaudio.transforms.Resample when at another rate, zero-padded to one 7.68 s segment "
                          "or cut into ceil((n - 122880) / 16000) + 1 evenly spread 7.68 s segments, each scaled "
                          "to peak 1; score = 1 + 4 x sigmoid output; the clip value is the mean over segments.",
               reference_urls=("https://github.com/microsoft/Distill-MOS",), predicts_mos=_NAT),
    # ---------------------------------------------------------------- generation, beyond the paper (issue 53)
    *_human_rows(),
    # ---------------------------------------------------------------- emotion (Table 4)
    MetricSpec("emotion_accuracy", "Acc. (%)", ("emotion",), LABEL, True, (0.0, 1.0), "per-clip correctness (0/1)",
               paper_scale=100.0, paper_table="Table 4", implementation=_M + "emotion:parse_answer", call=KERNEL,
               description="Seven-class emotion recognition accuracy; unparsed answers count as wrong.",
               definition="Per clip and input setting: 1 when the answer, parsed for one of the seven emotion words "
                          "(English or Chinese, negations skipped), names the clip's instructed emotion, else 0 "
                          "(unparsed answers are 0 and flagged). Accuracy = mean over clips x 100."),
    # Beyond the paper (issue 54): the question under reordered options (predict emotion --circular K), no module.
    MetricSpec("emotion_circular_accuracy", "Circular acc. (%)", ("emotion",), LABEL, True, (0.0, 1.0),
               "per-clip correctness under every option order (0/1)", **_CIRCULAR,
               description="Share of clips answered right under every order of the options (circular evaluation).",
               definition="Per clip and setting asked under K option orders (the seven emotions rotated by floor(j x "
                          "7 / K), j < K; optionally both prompt languages): 1 when every answer names its emotion."),
    MetricSpec("emotion_flip_rate", "Flip rate (%)", ("emotion",), LABEL, False, (0.0, 1.0),
               "per-clip answer change with the option order (0/1)", **_CIRCULAR,
               description="Share of clips whose answer changes with the order of the options (position bias).",
               definition="Per clip and setting asked under two option orders or more: 1 when, in some prompt "
                          "language, the parsed answers (unparsed: an answer of its own) differ, else 0; x 100."),
    # ---------------------------------------------------------------- reference statistics (Fig. 11 inputs)
    MetricSpec("motion_u", "U_s", ("motion",), REFERENCE_ONLY, True, (0.0, 1.0), "mean |alpha change| per frame",
               module=False, paper_table="Eq. 5", implementation=_M + "matting:motion_stats", call=KERNEL,
               description="Mean over t of the mean absolute inter-frame change of the reference alpha."),
    MetricSpec("motion_v", "V_s", ("motion",), REFERENCE_ONLY, True, (0.0, float("inf")),
               "mean centroid displacement (pixels)", module=False, paper_table="Eq. 6",
               implementation=_M + "matting:motion_stats", call=KERNEL,
               description="Mean displacement of the reference foreground centroid between frames."),
    # ---------------------------------------------------------------- cross-task analyses (section 4.3)
    MetricSpec("emotion_difficulty", "D_{e,k}", (), ANALYSIS, False, (0.0, 1.0), "normalised difficulty",
               paper_table="Fig. 8 (Eq. 1-2)", implementation="hug_vis_dataset.analyses:emotion_difficulty",
               description="Per-metric emotion difficulty, model-averaged and min-max normalised over the seven emotions.",
               definition="Per-clip values oriented so that larger is harder (retain, negate or 1 - value), "
                          "averaged per model and emotion (Eq. 1), averaged over models, then min-max normalised "
                          "over the seven emotions (Eq. 2)."),
    MetricSpec("difficulty_agreement", "Spearman rho", (), ANALYSIS, True, (-1.0, 1.0), "rank correlation",
               paper_table="Fig. 9 (Eq. 3)", implementation="hug_vis_dataset.analyses:difficulty_agreement",
               description="Spearman rank correlation between the emotion difficulty profiles of metric pairs.",
               definition="Spearman rho between the seven-emotion difficulty profiles D_{.,k} of every metric pair."),
    MetricSpec("source_difficulty", "Z_s", (), ANALYSIS, False, (float("-inf"), float("inf")), "z-score",
               paper_table="Fig. 10 (Eq. 4)", implementation="hug_vis_dataset.analyses:source_difficulty",
               description="Clip-level difficulty of audio-driven vs vision-driven generation on common valid clips.",
               definition="Per regime, each per-clip metric is z-scored over the common valid clips, oriented so "
                          "that larger is harder and averaged over metrics and models (Eq. 4)."),
    MetricSpec("motion_difficulty", "D_motion", (), ANALYSIS, True, (0.0, 1.0), "mean percentile rank",
               paper_table="Fig. 11 (Eq. 5-6)", implementation="hug_vis_dataset.analyses:motion_difficulty",
               description="Mean percentile rank of the reference's alpha change U_s and centroid shift V_s, "
                           "and its relation to model-averaged dtSSD.",
               definition="D_motion = mean of the percentile ranks of U_s and V_s over the clips analysed; its "
                          "Spearman rho and OLS fit against per-clip dtSSD averaged over the matting models."),
)

# The optional dependencies each metric's computation imports (setup.cfg extras).
_EXTRAS: dict[str, tuple[str, ...]] = {
    "lpips": ("torch", "video"), "fid": ("torch", "video"), "csim": ("video",),
    "sync_c": ("torch", "video", "audio"), "sync_d": ("torch", "video", "audio"),
    "utmos": ("torch", "audio"), "speaker_similarity": ("torch", "audio"),
    "dnsmos": ("audio",), "dnsmos_sig": ("audio",), "dnsmos_bak": ("audio",), "dnsmos_p808": ("audio",),
    "cer": ("torch", "audio"), "cer_edits": ("torch", "audio"), "cer_ref_chars": ("torch", "audio"),
    "distill_mos": ("torch", "audio"),
}
# How a header shows each metric's unit (the paper's scaling of Table 11, dB). Only values bound to
# the MOS scale show "(1-5)": a network's prediction on that scale is not clipped to it (DNSMOS maps
# its raw outputs by dnsmos_local.py's polynomials, which give e.g. 0.69 for non-speech), so a
# "(1-5)" header over it would promise a range its values leave.
_UNIT_SHORT: dict[str, str] = {"mad": "×1e3", "mse": "×1e3", "dtssd": "×1e2", "grad": "÷1e3", "conn": "÷1e3", "psnr": "dB",
                               "cer": "%"}
METRICS = tuple(replace(m, extras=_EXTRAS.get(m.name, m.extras),
                        unit_short=_UNIT_SHORT.get(m.name) or m.unit_short
                        or (MOS_SCALE_TEXT if m.value_range == MOS_SCALE and m.range_is_bound else ""))
                for m in METRICS)

# ---------------------------------------------------------------- boundary-aware matting (finding iii)
#: Band half-widths in pixels at 1080p (scaled with the frame height) and the region names.
BOUNDARY_BAND_WIDTHS: tuple[float, ...] = (5.0, 10.0, 20.0)
BOUNDARY_REGIONS: tuple[str, ...] = (*(f"band_{w:g}" for w in BOUNDARY_BAND_WIDTHS), "thin", "bulk", "moving")
BOUNDARY_ERRORS: tuple[str, ...] = ("mad", "mse", "grad", "dtssd")
_REGION_WORDS = {"thin": "thin structures (foreground minus its opening with a 16 px disk at 1080p)",
                 "bulk": "the thick foreground (foreground minus the thin structures)",
                 "moving": "pixels where the reference alpha changes from the previous frame",
                 **{f"band_{w:g}": f"the band within {w:g} px (at 1080p) of the reference's transition region"
                    for w in BOUNDARY_BAND_WIDTHS}}
_ERROR_UNITS = {"mad": ("MAD", "mean |alpha error| in the region x1e3"),
                "mse": ("MSE", "mean squared alpha error in the region x1e3"),
                "grad": ("Grad", "mean squared gradient-magnitude error in the region x1e3"),
                "dtssd": ("dtSSD", "RMS temporal-derivative error in the region x1e2")}
METRICS = METRICS + tuple(
    MetricSpec(f"{error}_{region}", f"{_ERROR_UNITS[error][0]} ({region.replace('_', ' ')})", ("matting_boundary",),
               FRAME_PAIRED, False, (0.0, float("inf")), _ERROR_UNITS[error][1], module=False,
               implementation=_M + "boundary:score_boundary_clip", call=KERNEL,
               description=f"{_ERROR_UNITS[error][0]} restricted to {_REGION_WORDS[region]}.",
               definition=_M + "boundary: regions defined on the reference alpha only, each "
                          "error normalised by the region's area per frame; a frame where the region is empty "
                          "is left out and counted; the clip value is the mean over the other frames.")
    for region in BOUNDARY_REGIONS for error in BOUNDARY_ERRORS)

# ---------------------------------------------------------------- findings over stored rows (issue 15)
METRICS = METRICS + (
    MetricSpec("metric_mos_agreement", "rho (metric, MOS)", (), ANALYSIS, True, (-1.0, 1.0), "rank correlation",
               implementation="hug_vis_dataset.analyses:metric_mos_agreement",
               description="System-level Spearman/Kendall agreement of each automatic metric with each MOS "
                           "criterion, and agreement at the top (same best system, top-k overlap, pairwise "
                           "ranking accuracy among the MOS top-k vs all pairs).",
               definition="Metric means and MOS means per system (lower-is-better metrics negated, so +1 is "
                          "agreement); actor-clustered bootstrap intervals from per-clip rows; runs on the "
                          "paper's Tables 5-10 alone (docs/FINDINGS.md). Pairwise source: with pairwise "
                          "answers, the Bradley-Terry strengths per criterion against the MOS and each metric "
                          "(docs/MOS.md)."),
    MetricSpec("human_metric_agreement", "SPA", (), ANALYSIS, True, (0.0, 1.0), "soft pairwise accuracy",
               implementation="hug_vis_dataset.analyses:human_metric_agreement",
               description="Metrics and human judgment jointly: SPA (all pairs, people's top-k) with intervals, "
                           "acc_eq, tau-b, PERM-BOTH, ITU-T P.1401, the joint table with discordant pairs.",
               definition="Per system pair, one-sided mid-p values (paired sign-flip tests flipping whole actors) "
                          "under people and the metric; SPA = 1 - mean |p_h - p_m| (docs/FINDINGS.md).",
               reference_urls=("https://github.com/google-research/mt-metrics-eval",)),
    MetricSpec("variance_decomposition", "share of variance", (), ANALYSIS, True, (0.0, 1.0), "share of the total",
               implementation="hug_vis_dataset.analyses:variance_decomposition",
               description="Share of a metric's per-clip variance explained by actor, emotion, action (in emotion), "
                           "script, model, emotion x model and actor x model.",
               definition="Sums of squares of the balanced grid from marginal means; on an incomplete grid a "
                          "sequential (type I) regression with the same terms, reported as such."),
    MetricSpec("neighbour_significance", "p (neighbours)", (), ANALYSIS, False, (0.0, 1.0), "p-value",
               implementation="hug_vis_dataset.analyses:neighbour_significance",
               description="Paired test between each system and the next one of a leaderboard, actors resampled "
                           "as clusters: which neighbours are not distinguishable at 95%.",
               definition="Sign-flip permutation test of the per-clip differences with whole actors flipped "
                          "(exact when 2^actors <= resamples) and an actor-bootstrap interval; fewer than 6 "
                          "actors cannot reach p < 0.05 and say so (n/a)."),
    MetricSpec("detectable_difference", "MDD", (), ANALYSIS, False, (0.0, float("inf")),
               "minimum detectable difference (paper units)",
               implementation="hug_vis_dataset.analyses:detectable_difference",
               description="Smallest difference between two systems on a metric that the grid detects at "
                           "alpha = 0.05 with 80% power (actors as clusters), at the rows' actor count and at "
                           "smaller ones; which leaderboard neighbours are closer than that.",
               definition="Per neighbour pair, the per-clip differences' between-actor and within-actor "
                          "variances (one-way ANOVA estimators), pooled over pairs; MDD = lambda x SE with "
                          "SE^2 = (sigma_b^2 sum n_a^2 + sigma_w^2 n) / n^2 and lambda solving the power "
                          "equation of the cluster-robust t test (noncentral t on A - 1 df; Satterthwaite for "
                          "unequal clips per actor); hug_vis_dataset.metrics.power."),
)

# Modules that compute several metrics of one family in one pass (their own evaluate folder).
SUITES: dict[str, tuple[str, ...]] = {
    "matting": ("mad", "mse", "dtssd", "grad", "conn"),
    "syncnet": ("sync_c", "sync_d"),
    "boundary_matting": tuple(f"{e}_{r}" for r in BOUNDARY_REGIONS for e in BOUNDARY_ERRORS),
}

_BY_NAME = {m.name: m for m in METRICS}
METRIC_NAMES: frozenset[str] = frozenset(_BY_NAME)
_TASK_BY_NAME = {t.name: t for t in TASKS}
if len(_BY_NAME) != len(METRICS) or set(SUITES) & set(_BY_NAME):
    raise RuntimeError("metric names must be unique and differ from suite names")
for _row in METRICS:  # a corpus ratio's two rows are per-clip rows of its task, computed with it
    if _row.ratio_of and not all(r in _BY_NAME and _BY_NAME[r].tasks == _row.tasks
                                 and _BY_NAME[r].implementation == _row.implementation for r in _row.ratio_of):
        raise RuntimeError(f"{_row.name}: ratio_of {_row.ratio_of} must name rows of its task computed by its function")


def spec(name: str) -> MetricSpec:
    """The row of one metric or analysis.

    Raises:
        KeyError: unknown name (the message lists the known ones).
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(sorted(_BY_NAME))}") from None


def label_of(name: str) -> str:
    """How a person reads a key: a metric's label, a MOS criterion's or a column's (:mod:`.column_labels`), else
    the name as given (a model, a name from a stored file).

    >>> label_of("speaker_similarity"), label_of("n_ok"), label_of("lip_sync"), label_of("clone_good")
    ('Speaker Sim.', 'Clips scored', 'Lip Synchronization', 'clone_good')
    """
    return _BY_NAME[name].label if name in _BY_NAME else MOS_CRITERIA.get(name) or COLUMN_LABELS.get(name) or str(name)


def implementation_of(row: "str | MetricSpec") -> Callable[..., Any]:
    """The function a row names (:attr:`MetricSpec.implementation`), imported now; ``KeyError`` for
    an unknown name, ``ValueError`` (one line naming the row) when its module or function does not exist.

    Example:
        >>> implementation_of("psnr").__name__, implementation_of("mad") is implementation_of("dtssd")
        ('psnr_frames', True)
    """
    import importlib

    row = row if isinstance(row, MetricSpec) else spec(row)
    module, _, function = row.implementation.partition(":")
    try:
        return getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"{row.name}: implementation {row.implementation!r} does not resolve "
                         f"({type(err).__name__}: {err})") from None


def task(name: str) -> TaskSpec:
    """The row of one task; ``ValueError`` naming the known tasks otherwise."""
    try:
        return _TASK_BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; choose one of {', '.join(sorted(_TASK_BY_NAME))}") from None


def task_names(with_paper_table: bool = False) -> tuple[str, ...]:
    """Task names in paper order (Table 4 first); only tasks with an objective table when asked."""
    return tuple(t.name for t in TASKS if t.paper_table is not None or not with_paper_table)


def metrics_of(task_name: str) -> tuple[MetricSpec, ...]:
    """Every metric stored for a task, in the paper table's column order."""
    return tuple(m for m in METRICS if task_name in m.tasks)


def clip_metrics(task_name: str) -> tuple[str, ...]:
    """Per-clip metrics of a task (what its scorer writes per clip)."""
    return tuple(m.name for m in metrics_of(task_name) if m.mode != SET_LEVEL)


def set_metrics(task_name: str) -> tuple[str, ...]:
    """Set-level metrics of a task (one value per system)."""
    return tuple(m.name for m in metrics_of(task_name) if m.mode == SET_LEVEL)


def table_metrics(task_name: str) -> tuple[str, ...]:
    """The columns of a task's paper table, in the paper's order (the catalog lists metrics so)."""
    return tuple(m.name for m in metrics_of(task_name) if m.in_table and not m.beyond_paper)


def beyond_paper_metrics(task_name: str) -> tuple[str, ...]:
    """The columns printed beside a task's paper table, never among its columns (the paper does not
    report them: Table 9's CER and Distill-MOS).

    Example:
        >>> beyond_paper_metrics("voice_cloning"), beyond_paper_metrics("matting")
        (('cer', 'distill_mos'), ())
    """
    return tuple(m.name for m in metrics_of(task_name) if m.in_table and m.beyond_paper)


def analyses() -> tuple[MetricSpec, ...]:
    """The cross-task analyses."""
    return tuple(m for m in METRICS if m.mode == ANALYSIS)


def module_names() -> tuple[str, ...]:
    """Every evaluate module folder: metrics and analyses with a module, then the suites."""
    return tuple(m.name for m in METRICS if m.module) + tuple(SUITES)


def suite_or_metric(name: str) -> tuple[str, ...]:
    """The metrics a module computes: a suite's members or the metric itself."""
    return SUITES[name] if name in SUITES else (spec(name).name,)


def task_protocol(task_name: str) -> str:
    """The aggregation protocol of a task's table: ``rvm`` when its metrics declare it (matting)."""
    return RVM if any(m.protocol == RVM for m in metrics_of(task_name)) else CLIP


def extras_of(names: Iterable[str]) -> tuple[str, ...]:
    """The ``hug-vis`` extras the given metrics (or a suite's members) need, sorted."""
    return tuple(sorted({e for name in names for member in suite_or_metric(name) for e in spec(member).extras}))


def to_paper_units(name: str, value: float) -> float:
    """The one conversion rule: stored value x ``paper_scale``."""
    return float(value) * spec(name).paper_scale


def weights_of(names: Iterable[str]) -> tuple[str, ...]:
    """Pretrained files the given metrics need, without repeats, in first-use order."""
    return tuple(dict.fromkeys(weight for name in names for weight in spec(name).weights))  # dict keeps order


def metrics_needing(weight: str) -> tuple[str, ...]:
    """The metrics a pretrained file serves (the weights registry reads this)."""
    return tuple(m.name for m in METRICS if weight in m.weights)


def paper_table_of(task_name: str) -> str:
    """``"Table 11"`` for matting, ``""`` for a task without a paper table."""
    number = task(task_name).paper_table
    return f"Table {number}" if number is not None else ""
