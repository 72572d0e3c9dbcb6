"""What the benchmark scripts measure, as library code; the scripts in ``scripts/`` keep their command lines.

* the device check (``scripts/device_check.py``, docs/PERFORMANCE.md, "GPU: the device check"): every network
  metric scored on the CPU and on the GPU by one command. :mod:`~hug_vis_dataset.benchmarks.device_check` runs it,
  over :mod:`~hug_vis_dataset.benchmarks.device_wheels` (the wheels carried to the GPU machine),
  :mod:`~hug_vis_dataset.benchmarks.device_doors` (the clips, the networks, each metric's door and network
  function), :mod:`~hug_vis_dataset.benchmarks.device_measure` (timing, differences against the tolerances, one
  metric on both devices), :mod:`~hug_vis_dataset.benchmarks.device_runs` (``hugvis evaluate`` end to end and its
  workers) and :mod:`~hug_vis_dataset.benchmarks.device_summary` (the JSON and Markdown it writes).

The simulated full-grid results store that ``scripts/bench_report.py`` times is :mod:`hug_vis_dataset.synth.fullgrid`
(synthetic data, beside the rest of ``synth/``).
"""
