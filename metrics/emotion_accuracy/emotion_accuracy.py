"""HUG-VIS seven-class emotion recognition accuracy (paper Table 4) as an evaluate module.

The parser and the scoring live in ``hug_vis_dataset.metrics.emotion``; this file only adapts them.
"""

import evaluate

from hug_vis_dataset.evaluate_support import LABEL_PAIR_FEATURES
from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.emotion import emotion_accuracy

_DESCRIPTION = """Seven-class emotion recognition accuracy on HUG-VIS (Happy, Angry, Sad, Afraid, Disgusted,
Surprised, Neutral). Predictions may be labels or free-text answers of multimodal LLMs in English or Chinese;
a documented parser maps them to a class or to `unparsed` (counted wrong and reported)."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): labels or free-text answers ("The speaker sounds furious.", "她看起来很害怕").
    references (list of str): emotion labels or aliases ("Happy", "fearful", "惊讶").
    input_settings (list of str, optional): input setting per example ("Video + Text"); adds `by_input_setting`.
Returns:
    accuracy (fraction), per_emotion_accuracy, per_emotion_f1, macro_f1, confusion_matrix (rows = reference,
    columns = prediction, in `labels` order), unparsed (count), n, correct[, by_input_setting].
Examples:
    >>> module = evaluate.load("metrics/emotion_accuracy")
    >>> module.compute(predictions=["Emotion: Surprise", "not angry"], references=["Surprised", "Angry"])["accuracy"]
    0.5
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class EmotionAccuracy(evaluate.Metric):
    def _info(self):
        return metric_module_info("emotion_accuracy", _DESCRIPTION, LABEL_PAIR_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, predictions, references, input_settings=None):
        return emotion_accuracy(predictions, references, input_settings=input_settings)
