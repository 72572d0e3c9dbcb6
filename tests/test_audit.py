"""hugvis audit robustness: deterministic transforms that change only what they say, shifts equal to
the metric computed by hand on the transformed media, pseudo-systems never ranked or analysed, and the
detectable_difference module door equal to the library function."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.audit import transforms as tr
from hug_vis_dataset.readers.media import iter_alpha_frames, video_info, write_video

RNG = np.random.default_rng(0)


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    path = tmp_path_factory.mktemp("v") / "clip.mp4"
    frames = np.clip(RNG.normal(128, 40, (12, 36, 64, 3)), 0, 255).astype(np.uint8)
    t = np.arange(16000 * 12 // 30) / 16000
    write_video(path, [frames], fps=30, audio=(0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32))
    return path


@pytest.mark.parametrize("name", [t.name for t in tr.TRANSFORMS])
def test_video_transforms_keep_count_rate_size_and_are_byte_deterministic(video, tmp_path, name):
    a = tr.transform_video_file(video, tmp_path / f"a{tr.output_suffix(name)}", name)
    b = tr.transform_video_file(video, tmp_path / f"b{tr.output_suffix(name)}", name)
    assert a.read_bytes() == b.read_bytes()
    src, out = video_info(video), video_info(a)
    assert (out.frames, out.width, out.height) == (src.frames, src.width, src.height)
    assert out.fps == pytest.approx(src.fps)
    frames, _, audio, rate = tr.read_video(a)
    orig, _, orig_audio, orig_rate = tr.read_video(video)
    assert rate == orig_rate and audio.shape == orig_audio.shape
    if tr.get(name).medium == "audio":  # the picture is stored losslessly: untouched
        assert np.array_equal(frames, orig)
    elif name == "shift_1frame":  # exactly one frame of delay, nothing else
        assert np.array_equal(frames[1:], orig[:-1]) and np.array_equal(frames[0], orig[0])
    elif name == "fps_30_25_30":  # only whole frames repeated or dropped
        picks = [next(i for i in range(len(orig)) if np.array_equal(f, orig[i])) for f in frames]
        # by hand: 12 frames -> 10 at 25 fps taking floor(j * 6/5 + 1/2), back to 12 taking floor(k * 5/6 + 1/2)
        down = [int(j * 6 / 5 + 0.5) for j in range(10)]
        assert picks == [down[int(k * 5 / 6 + 0.5)] for k in range(12)] == [0, 1, 2, 4, 4, 5, 6, 7, 8, 10, 10, 11]
    else:
        assert not np.array_equal(frames, orig)


def test_frame_and_audio_operations_by_hand():
    a = np.arange(12, dtype=np.uint8)[:, None, None] * np.ones((1, 4, 4), np.uint8)
    # 30 -> 25 fps: frame j at j/25 s takes round(j * 1.2); back to 30: round(j / 1.2)
    down = tr.resample_frame_rate(a, 30, 25)
    assert down[:, 0, 0].tolist() == [round(j * 1.2 + 1e-9) for j in range(10)] == [0, 1, 2, 4, 5, 6, 7, 8, 10, 11]
    assert tr.fps_roundtrip(a, 30).shape == a.shape
    x = np.arange(1000, dtype=np.float32)
    shifted = tr.shift_audio(x, 16000)
    assert np.array_equal(shifted[:640], np.zeros(640)) and np.array_equal(shifted[640:], x[:360])
    assert tr.scale_roundtrip(np.zeros((2, 36, 64, 3), np.uint8)).shape == (2, 36, 64, 3)


@pytest.mark.parametrize("name", ["aac_128k", "mp3_128k", "opus_64k"])
def test_audio_codecs_keep_rate_length_alignment_and_are_deterministic(name):
    t = np.arange(16000) / 16000
    x = (0.3 * np.sin(2 * np.pi * (200 + 800 * t) * t)).astype(np.float32)
    y = tr.process_audio(x, 16000, name)
    assert y.shape == x.shape and np.array_equal(y, tr.process_audio(x, 16000, name))
    lag = int(np.argmax(np.correlate(y[2000:12000], x[2000:12000], "full"))) - 9999
    assert lag == 0  # the decoder removed the codec's priming samples
    snr = 10 * np.log10((x ** 2).sum() / ((y - x) ** 2).sum())
    assert 15 < snr < 80  # lossy, but the same signal


@pytest.mark.parametrize("name", ["h264_crf23", "h265_crf28", "vp9_crf32"])
def test_alpha_codec_roundtrip_is_deterministic_and_keeps_shape(name):
    alpha = np.clip(RNG.normal(128, 60, (6, 36, 64)), 0, 255).astype(np.uint8)
    out = tr.process_alpha(alpha, name, 30)
    assert out.shape == alpha.shape and out.dtype == np.uint8
    assert np.array_equal(out, tr.process_alpha(alpha, name, 30)) and not np.array_equal(out, alpha)
    # the gray <-> limited-range luma mapping alone loses at most one level
    assert np.abs(tr._yuv_to_gray(tr._gray_to_yuv(alpha[0])[:36]).astype(int) - alpha[0]).max() <= 1


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("rel")
    synthesize(root, actors=2, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.3, size=(64, 36),
               systems=False, progress=False)
    return root


def test_shift_equals_the_metric_computed_by_hand(release, tmp_path):
    from hug_vis_dataset.audit.robustness import audit_robustness
    from hug_vis_dataset.references import open_reference_source
    from hug_vis_dataset.references.readers import iter_reference_alpha

    res = audit_robustness("matting", release, tmp_path / "audit", transforms=["shift_1frame", "h264_crf23"],
                           n_boot=50)
    refs = open_reference_source(release, "matting")
    by_hand = {"shift_1frame": [], "h264_crf23": []}
    for cid in refs.clip_ids():
        truth = np.concatenate(list(iter_reference_alpha(refs.reference(cid)["alpha"]))).astype(np.float64) / 255
        shifted = np.concatenate([truth[:1], truth[:-1]])
        by_hand["shift_1frame"].append(np.abs(shifted - truth).mean() * 1e3)
        folder = tmp_path / "audit" / "variants" / "matting" / "reference" / "h264_crf23" / refs.record(cid).clip_id
        coded = np.concatenate(list(iter_alpha_frames(folder))).astype(np.float64) / 255
        by_hand["h264_crf23"].append(np.abs(coded - truth).mean() * 1e3)
    table = res.table.set_index(["metric", "transform"])
    for name, values in by_hand.items():
        assert table.loc[("mad", name), "shift"] == pytest.approx(np.mean(values), rel=1e-9)
        assert table.loc[("mad", name), "n_clips"] == len(values)
    assert table.loc[("mad", "identity"), "shift"] == 0.0 and table.loc[("mad", "identity"), "value"] == 0.0
    gaps = res.table.set_index(["metric", "transform"]).loc[("mad", "shift_1frame")]
    from hug_vis_dataset.audit.robustness import paper_gaps

    assert gaps["gaps_below"] == sum(g < abs(gaps["shift"]) for g in paper_gaps("matting", "mad"))
    assert (tmp_path / "audit" / "robustness_matting.md").read_text().count("| MAD |") == 3
    # the pseudo-systems are stored in the audit's own root, under reserved names
    assert sorted(p.name for p in (tmp_path / "audit" / "results" / "matting").iterdir()) == [
        "audit@h264_crf23", "audit@identity", "audit@shift_1frame"]


def test_pseudo_systems_never_enter_rankings_or_analyses():
    from hug_vis_dataset import modules
    from hug_vis_dataset.reporting import findings as report_findings
    from hug_vis_dataset.datamodel.results import reference_rows

    rows = []
    for model, base in (("sys_a", 1.0), ("sys_b", 3.0), ("audit@h264_crf23", 0.5), ("audit@identity", 0.0)):
        for a in range(1, 9):
            for s in (1, 2):
                rows.append({"model": model, "task": "matting", "clip_id": f"actor_{a:04d}_happy_action_01_script_00{s}",
                             "metric": "mad", "value": base + 0.1 * a + 0.05 * s, "status": "ok", "actor_id": a})
    frame = pd.DataFrame(rows)
    assert reference_rows(frame["model"]).sum() == 32
    sig, _ = report_findings.significance_frame(frame, "matting")
    mdd, _ = report_findings.detectable_frame(frame, "matting")
    var, _, _ = report_findings.variance_frame(frame, "matting")
    assert set(sig["Model"]) | set(sig["Next model"]) == {"sys_a", "sys_b"}
    assert mdd.loc[0, "Neighbour verdicts"] == "1 separable, 0 not separable, 0 cannot tell" and len(var)
    out = modules.compute("neighbour_significance", **frame.to_dict("list"), metric_name="mad", n_resamples=99)
    assert {t["model"] for t in out["tests"]} | {t["next_model"] for t in out["tests"]} == {"sys_a", "sys_b"}


def test_detectable_difference_module_equals_library_function():
    from hug_vis_dataset import modules
    from hug_vis_dataset.metrics.power import detectable_differences

    rng = np.random.default_rng(3)
    rows = [{"model": m, "task": "vision_driven", "clip_id": f"actor_{a:04d}_sad_action_01_script_00{s}",
             "metric": "psnr", "value": float(v + rng.normal(0, 1)), "status": "ok"}
            for m, v in (("x", 30.0), ("y", 29.5), ("z", 25.0)) for a in range(1, 11) for s in (1, 2, 3)]
    rows.append({**rows[0], "model": "real-audio"})
    frame = pd.DataFrame(rows)
    out = modules.compute("detectable_difference", **frame.to_dict("list"), metric_name="psnr")
    ref = detectable_differences(frame[frame["model"] != "real-audio"], higher_is_better=True)
    assert out["pooled"]["mdd"] == pytest.approx(ref["pooled"]["mdd"], rel=1e-12)
    assert [p["mdd"] for p in out["pairs"]] == pytest.approx([p["mdd"] for p in ref["pairs"]], rel=1e-12)
    assert out["by_actors"] == pytest.approx(ref["by_actors"])


def test_cli_audit_of_a_submission_equals_the_shift_computed_by_hand(release, tmp_path, capsys):
    """``hugvis audit robustness matting --predictions DIR`` end to end through the real command line:
    the transforms act on the submission, each shift is against the submission as submitted
    (``audit@pred-identity``), and equals MAD worked by hand on the files the audit wrote."""
    import json

    from hug_vis_dataset.cli import main
    from hug_vis_dataset.readers.media import write_alpha_pngs
    from hug_vis_dataset.references import open_reference_source
    from hug_vis_dataset.references.readers import iter_reference_alpha

    refs = open_reference_source(release, "matting")
    truth, submitted = {}, {}
    for cid in refs.clip_ids():
        clip_id = refs.record(cid).clip_id
        alpha = np.concatenate(list(iter_reference_alpha(refs.reference(cid)["alpha"])))
        # A submission that is off by a blur-like offset: every shift below is measured from it.
        pred = np.clip(alpha.astype(np.int16) + np.where(alpha > 127, -20, 15), 0, 255).astype(np.uint8)
        write_alpha_pngs(tmp_path / "pred" / clip_id, [pred])
        truth[clip_id], submitted[clip_id] = alpha.astype(np.float64) / 255, pred.astype(np.float64) / 255
    out = tmp_path / "audit"
    assert main(["audit", "robustness", "matting", "--dataset", str(release), "--out", str(out), "--predictions",
                 str(tmp_path / "pred"), "--transforms", "shift_1frame,h264_crf23", "--n-boot", "50",
                 "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "processed submission vs the submission as submitted" in printed
    saved = json.loads((out / "robustness_matting_predictions.json").read_text())
    assert saved["source"] == "predictions" and saved["task"] == "matting"
    rows = {(r["metric"], r["transform"]): r for r in saved["rows"]}

    def mad(a, b):
        return float(np.abs(a - b).mean() * 1e3)

    base = {c: mad(submitted[c], truth[c]) for c in truth}
    by_hand = {"identity": [0.0 for c in truth],
               "shift_1frame": [mad(np.concatenate([submitted[c][:1], submitted[c][:-1]]), truth[c]) - base[c]
                                for c in truth],
               "h264_crf23": [mad(np.concatenate(list(iter_alpha_frames(
                   out / "variants" / "matting" / "predictions" / "h264_crf23" / c))).astype(np.float64) / 255,
                   truth[c]) - base[c] for c in truth]}
    for name, shifts in by_hand.items():
        row = rows[("mad", name)]
        assert row["shift"] == pytest.approx(np.mean(shifts), rel=1e-9, abs=1e-12)
        assert row["n_clips"] == len(truth)
        assert f"| MAD | {name} | " in printed
    assert rows[("mad", "identity")]["value"] == pytest.approx(np.mean(list(base.values())), rel=1e-9)
    assert rows[("mad", "shift_1frame")]["shift"] > 0 and rows[("mad", "h264_crf23")]["shift"] != 0
    assert rows[("mad", "shift_1frame")]["ci_low"] <= rows[("mad", "shift_1frame")]["shift"] <= \
        rows[("mad", "shift_1frame")]["ci_high"]
    # The submission's pseudo-systems are stored under reserved names in the audit's own root.
    assert sorted(p.name for p in (out / "results" / "matting").iterdir()) == [
        "audit@pred-h264_crf23", "audit@pred-identity", "audit@pred-shift_1frame"]


def test_voice_cloning_variants_are_the_submission_layout_with_only_the_named_change(release, tmp_path):
    """The audio audit's variants (what the voice scorer then scores): one WAV per clip at the
    reference's rate and length; the 40 ms shift exact, the codecs close to but not equal to the
    reference, and a second run byte-identical."""
    from hug_vis_dataset.audit.robustness import write_variants
    from hug_vis_dataset.readers.media import read_audio
    from hug_vis_dataset.references import open_reference_source
    from hug_vis_dataset.references.readers import read_reference_audio

    names = ["identity", "mp3_128k", "shift_40ms"]
    folders = write_variants("voice_cloning", release, tmp_path / "a", names)
    again = write_variants("voice_cloning", release, tmp_path / "b", names)
    refs = open_reference_source(release, "voice_cloning")
    clips = [refs.record(cid).clip_id for cid in refs.clip_ids()]
    for name in names:
        assert sorted(p.stem for p in folders[name].glob("*.wav")) == sorted(clips)
    for cid, clip_id in zip(refs.clip_ids(), clips):
        ref, rate = read_reference_audio(refs.reference(cid)["audio"])
        out = {n: read_audio(folders[n] / f"{clip_id}.wav") for n in names}
        for name, (audio, got_rate) in out.items():
            assert got_rate == rate and audio.shape == ref.shape, name
            assert (folders[name] / f"{clip_id}.wav").read_bytes() == (again[name] / f"{clip_id}.wav").read_bytes()
        assert np.allclose(out["identity"][0], ref, atol=1 / 32768)
        lag = round(0.040 * rate)
        assert np.allclose(out["shift_40ms"][0][lag:], ref[:-lag], atol=1 / 32768)
        assert np.all(out["shift_40ms"][0][:lag] == 0)
        coded = out["mp3_128k"][0]
        assert not np.array_equal(coded, ref) and np.corrcoef(coded, ref)[0, 1] > 0.9


def test_report_audit_puts_the_noise_floor_table_in_the_findings(release, tmp_path):
    """``hugvis report RESULTS --audit AUDIT`` (what ``hugvis demo --audit`` calls): the audit's table in
    the Findings section, its numbers those of the audit's JSON, the pseudo-systems not in the task table."""
    import json

    from hug_vis_dataset.cli import main
    from hug_vis_dataset.scoring.runner import evaluate_submission

    audit = tmp_path / "audit"
    assert main(["audit", "robustness", "matting", "--dataset", str(release), "--out", str(audit), "--transforms",
                 "shift_1frame", "--n-boot", "20", "--no-progress"]) == 0
    variant = audit / "variants" / "matting" / "reference" / "shift_1frame"
    evaluate_submission("matting", variant, "shifted", release, tmp_path / "res", progress=False)
    assert main(["report", str(tmp_path / "res"), "--out", str(tmp_path / "rep"), "--n-boot", "20", "--no-figures",
                 "--audit", str(audit)]) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    findings, floor = text.index("## Findings"), text.index("### Noise floor under ordinary processing")
    assert findings < floor and "\n## " not in text[findings + 1:floor]  # a subsection of the Findings
    row = next(r for r in json.loads((audit / "robustness_matting.json").read_text())["rows"]
               if (r["metric"], r["transform"]) == ("mad", "shift_1frame"))
    assert f"| MAD | shift_1frame | {row['value']:.4g} | {row['shift']:.4g} [" in text
    table = text[text.index("## Video matting"):findings]
    assert "audit@" not in table and "| shifted |" in table
