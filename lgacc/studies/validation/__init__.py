"""The resource models against published training runs (``data/validation/*.yaml``).

Both models meet every run: the paper's **ideal** model, which should be an upper bound on speed
(its kernels at peak), and the **calibrated** model (:mod:`lgacc.model.calibrated`), a prediction
whose two global parameters are fitted on these runs only.  One module per job:

* :mod:`.runs` -- the run files, read and checked; each run's reading of what its source does not
  state (named, with its reason, and bracketed);
* :mod:`.measured` -- the measured step time and the work both sides count;
* :mod:`.ideal` -- the ideal model's step time for a run (both overlap conventions, each
  data-parallel network reading the ideal model offers);
* :mod:`.calibrated` -- the calibrated model on the runs: stacked predictions, the fit (Nelder-Mead),
  leave one publication out;
* :mod:`.onefactor` -- the ideal model with one fitted kernel efficiency (the earlier calibration);
* :mod:`.tables` -- the comparison frame, per-publication errors and the summary;
* :mod:`.figures` -- predicted against measured, log axes, a marker per source;
* :mod:`.fit` -- the fit kept as data (``python -m lgacc.studies.validation.fit --write``);
* :mod:`.chapter` -- the measured-runs chapter's sentences, each from the frame and its summary;
* :mod:`.peers` -- side by side with the peer tools (their own predictions of the same runs);
* :mod:`.recipe_effects` -- how much each unstated choice of the recipe moves the prediction.

Runs with experts, context parallelism or FP8 (issue #36: ``n_e``, ``n_c``, ``precision`` in a run file) are
evaluated by both models' sparse extension, never fitted on, and reported apart (:func:`.tables.extension_errors`);
every number that existed before them reads the dense bf16 runs only.
"""

from .figures import plot_both_models, plot_comparison
from .ideal import CONVENTIONS, DP_NETWORKS, predicted_step_time
from .measured import PASSES, measured_step_time, megatron_step_flops, source_step_flops, work_flops
from .onefactor import calibration_summary, fit_kernel_efficiency, leave_one_publication_out
from .peers import side_by_side, side_by_side_markdown, tool_errors
from .runs import DATA_DIR, NOT_STATED, Run, load_runs
from .tables import CALCULON_ERROR, by_publication, comparison, frame_for, summary

__all__ = [
    "DATA_DIR", "NOT_STATED", "CONVENTIONS", "DP_NETWORKS", "PASSES", "Run", "load_runs", "source_step_flops",
    "measured_step_time", "megatron_step_flops", "work_flops", "predicted_step_time", "comparison", "frame_for",
    "summary", "by_publication", "CALCULON_ERROR", "fit_kernel_efficiency", "leave_one_publication_out",
    "calibration_summary", "plot_comparison", "plot_both_models", "side_by_side", "side_by_side_markdown", "tool_errors",
]
