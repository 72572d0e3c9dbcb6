"""HUG-VIS Speaker Similarity as an evaluate module; the metric lives in ``hug_vis_dataset.metrics.voice``."""

import evaluate

from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.evaluate_support import PATH_PAIR_FEATURES
from hug_vis_dataset.metrics.voice import evaluate_speaker_similarity

_DESCRIPTION = """Resemblyzer speaker similarity (GE2E utterance embeddings after preprocess_wav, cosine) of generated speech to the recorded reference audio of the same performance (HUG-VIS Table 9). Weights ship in the resemblyzer wheel; runs offline."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): generated speech files.
    references (list of str): the recorded reference audio of the same clip, paired by position.
Returns:
    speaker_similarity (mean over clips), per_clip (float or None per input), failed, errors
Examples:
    >>> module = evaluate.load("metrics/speaker_similarity")
    >>> module.compute(predictions=["gen/clip.wav"], references=["release/audio/actor_0001/happy/action_01/script_001.wav"])  # doctest: +SKIP
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SpeakerSimilarity(evaluate.Metric):
    def _info(self):
        return metric_module_info("speaker_similarity", _DESCRIPTION, PATH_PAIR_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, predictions, references):
        return evaluate_speaker_similarity(predictions, references)
