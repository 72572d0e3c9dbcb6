"""Voice cloning (Table 9): UTMOS, DNSMOS (OVRL, plus SIG/BAK/P.808) and speaker similarity; beyond the
paper, CER and Distill-MOS.

DNSMOS's four scores come from one kernel call (read window by window), speaker similarity from
Resemblyzer's own preprocessing. The clip is decoded once (:meth:`VoiceCloningTask._audio_pass`) for
every other row: the rows the catalog calls per clip (UTMOS, and any new audio metric: one row and one
function, :mod:`hug_vis_dataset.tasks.dispatch`) get its 16 kHz mono float32 samples (the reference
recording too, when a row compares with it); CER's kernel gets the same samples and the clip's target
text (the ``text`` reference: the ``voice_cloning`` config's ``target_text``); Distill-MOS's kernel the
mono samples at the file's own rate, which it resamples as its package does.

Also the paper's "Real audio" row: each clip's prediction is another recording of the same actor
(:func:`hug_vis_dataset.metrics.voice.real_audio_pairs`), read from the reference source itself; its
CER compares that recording with what it says, the partner clip's target text (the index's payload).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from .. import catalog
from ..datamodel.grid import ClipId
from .base import ClipScores, SubmissionError, TaskScorer
from .dispatch import clip_values, error_text, frame_batch, needs_reference, rows_calling, rows_naming, setup_errors
from .submission import PredictionIndex

#: ``--predictions`` value (and CLI flag ``--real-audio``) that scores the release's own recordings.
REAL_AUDIO = "real-audio"


def _audio(source: str):
    """A file path, or (samples, rate) of a recording inside a dataset repo."""
    from ..references import is_row_locator, read_reference_audio

    return read_reference_audio(source) if is_row_locator(source) else (source, None)


def _decoded(source: str):
    """The clip's mono float32 samples at its own rate, checked (empty, NaN, clipping): its one decode."""
    from ..readers.media import read_audio
    from ..metrics.voice import check_samples, to_mono

    audio, rate = _audio(source)
    if rate is None:
        audio, rate = read_audio(audio, mono=True)
        what = f"audio file {source}"
    else:
        audio, what = to_mono(audio), "audio"
    check_samples(audio, what)
    return audio, int(rate)


_CER = "hug_vis_dataset.metrics.cer:cer_clip"
_DISTILL_MOS = "hug_vis_dataset.metrics.distill_mos:distill_mos_clip"


class VoiceCloningTask(TaskScorer):
    name = "voice_cloning"
    reference_kinds = ("audio",)
    kernels = {"hug_vis_dataset.metrics.voice:dnsmos": "_dnsmos",
               "hug_vis_dataset.metrics.voice:speaker_similarity": "_speaker",
               _CER: "_audio_pass", _DISTILL_MOS: "_audio_pass"}  # on the one decode of the per-clip rows
    passes = {catalog.PER_CLIP: "_audio_pass"}

    def reference(self, record) -> dict[str, str]:
        return {"audio": str(record.audio_path), "text": record.transcript}

    def index_from_references(self, refs, predictions) -> PredictionIndex:
        """The Real-audio row: each clip predicted by the same actor's next recording (an unpaired
        clip stays missing and is counted by the coverage report)."""
        from types import SimpleNamespace

        from ..metrics.voice import real_audio_pairs

        if str(predictions) != REAL_AUDIO:
            raise SubmissionError(f"task {self.name} has no reference-derived mode for {predictions!r}")
        records = [SimpleNamespace(cid=cid, clip_id=refs.record(cid).clip_id, audio_path=None)
                   for cid in refs.clip_ids()]
        pairs, _unpaired = real_audio_pairs(records)
        index = PredictionIndex()
        for pair in pairs:
            partner, cid = ClipId.parse(pair.partner_id), ClipId.parse(pair.clip_id)
            index.found[cid] = [refs.reference(partner)["audio"]]
            # what the partner recording says: its own target text (CER's reference for this row)
            index.payload[cid] = {"text": refs.reference(partner).get("text")}
        return index

    def score(self, job, models):
        """:meth:`TaskScorer.score`, with a Real-audio clip's target text replaced by what its prediction
        (the partner recording) says: the index's payload (part of the clip's fingerprint)."""
        said = job.payload.get("text") if isinstance(job.payload, dict) else None
        if said is not None:
            job = replace(job, reference={**job.reference, "text": said})
        return super().score(job, models)

    def note(self, prediction: str) -> str:
        """Stereo (or more) predictions are scored on their channel mean: said in the rows' ``error``."""
        from ..readers.media import downmix_note
        from ..references import is_row_locator

        return "" if is_row_locator(prediction) else (downmix_note(prediction) or "")

    def check(self, prediction: str, reference: Mapping[str, str], expected: Mapping[str, Any]) -> None:
        from ..readers.media import MediaError, audio_info
        from ..references import is_row_locator

        if is_row_locator(prediction):
            return  # a recording of the release itself (Real-audio row)
        try:
            frames, rate, _ = audio_info(prediction)
        except MediaError as err:
            raise SubmissionError(f"unreadable prediction: {err}") from None
        want = int(expected.get("sample_rate") or 0)
        if want and rate != want:
            raise SubmissionError(f"wrong sample rate: prediction is {rate} Hz, the release's clips are {want} Hz")
        if frames == 0:
            raise SubmissionError("empty audio: the prediction has no samples")

    def _dnsmos(self, prediction, reference, metrics, models, options) -> ClipScores:
        from ..metrics.voice import dnsmos

        scores = dnsmos(*_audio(prediction), device=models.device)
        return ClipScores({m: float(scores[m]) for m in metrics}, notes={"dnsmos_windows": scores["dnsmos_windows"]})

    def _speaker(self, prediction, reference, metrics, models, options) -> ClipScores:
        from ..metrics.voice import speaker_similarity

        pred, pred_rate = _audio(prediction)
        ref, ref_rate = _audio(reference["audio"])
        batch = int(options.get("batch_size") or 16)
        return ClipScores({"speaker_similarity": float(speaker_similarity(pred, ref, pred_rate, ref_rate,
                                                                          device=models.device, batch_partials=batch))})

    def _audio_pass(self, prediction, reference, metrics, models, options) -> ClipScores:
        """The clip decoded once for the per-clip rows (UTMOS ...: 16 kHz mono samples, and the reference
        recording when a row compares with it), CER's kernel (the same samples and the target text) and
        Distill-MOS's (the mono samples at the file's rate); a row whose function raises fails alone."""
        from ..metrics.voice import prepare_audio, resample_to

        audio, rate = _decoded(prediction)
        per_clip = rows_calling(metrics, catalog.PER_CLIP)
        # the 16 kHz samples, made only for the rows that read them (Distill-MOS resamples on its own)
        pred = resample_to(audio, rate) if per_clip or rows_naming(metrics, _CER) else None
        paired, ref, errors = [m for m in per_clip if needs_reference([m])], None, {}
        if paired:
            try:
                ref = prepare_audio(*_audio(reference["audio"]))
            except Exception as err:  # noqa: BLE001 - an unreadable reference fails the rows comparing with it
                errors = dict.fromkeys(paired, error_text(err))
        values, more = clip_values([m for m in per_clip if m not in errors], models, pred, ref)
        errors.update(more)
        batch = frame_batch(models, options)
        # each kernel's inputs after its networks: CER the 16 kHz samples and the text, Distill-MOS the file's rate
        inputs = {_CER: lambda: (pred, _target_text(reference), batch), _DISTILL_MOS: lambda: (audio, rate, batch)}
        for implementation, arguments in inputs.items():
            rows = rows_naming(metrics, implementation)
            if not rows:
                continue
            row = catalog.spec(rows[0])
            try:
                out = catalog.implementation_of(row)(*[models.get(kind) for kind in row.networks], *arguments())
                out = out if isinstance(out, dict) else {row.name: out}  # one row, or every row of the kernel
                values.update({m: float(out[m]) for m in rows})
            except setup_errors():
                raise
            except Exception as err:  # noqa: BLE001 - this kernel's rows fail, never their neighbours
                errors.update(dict.fromkeys(rows, error_text(err)))
        return ClipScores(values, errors=errors)


def _target_text(reference: Mapping[str, str]) -> str:
    """The clip's target text (CER's reference), or a clear error when the door gave none."""
    text = reference.get("text")
    if text is None:
        raise ValueError("no target text for this clip: CER compares the transcript with the clip's target_text "
                         "(the evaluate module's references are the target texts)")
    return str(text)
