"""``fig:scaling_constant_time``: memory-to-compute ratio needed to train in one month ("There is no memory wall").

Data: :func:`lgacc.scaling.constant_time_sweep` (see its docstring for the
reading of the dotted line).  Ratio in GB of memory per Tflop/s of peak compute;
the hardware's own ratio (80 GB / 312 Tflop/s for the A100) is the grey line.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from lgacc.model.hardware import GIB, Hardware
from lgacc.scaling import METHODS, constant_time_sweep

from ..artifacts import Artifact
from .fig_scaling_limited import COLORS, FONT_PT, MARKER, WIDTH_IN

LABEL = "fig:scaling_constant_time"
CAPTION = ("Required memory to compute ratio for training a transformer in one month, as a function of the model size. "
           "The dotted line shows a faster training scheme which is already possible on A100s.")
#: Display unit: GiB of memory per Tflop/s of peak compute.
UNIT = GIB / 1e12


def build(hardware: Hardware, progress: bool = False) -> Figure:
    frame = constant_time_sweep(hardware, progress=progress)
    figure = Figure(figsize=(WIDTH_IN, 5.2), layout="constrained")
    ax = figure.subplots()
    for method in METHODS:
        rows = frame[(frame.method == method) & frame.feasible.astype(bool)]
        ax.plot(rows.p, rows.ratio_s / UNIT, "-", color=COLORS[method], label=method, **MARKER)
    rows = frame[frame.method == "improved (A100 now)"]
    ax.plot(rows.p, rows.ratio_s / UNIT, ":", color=COLORS["improved"], lw=2,
            label="improved, fastest on A100s (trains in under a month)")
    ratio = float(frame.gpu_ratio_s.iloc[0]) / UNIT
    ax.axhline(ratio, color="grey", lw=1)
    ax.annotate(f"{hardware.name}: {ratio:.3g} GiB per Tflop/s", (0.98, ratio), xycoords=("axes fraction", "data"),
                ha="right", va="bottom", fontsize=FONT_PT - 1, color="dimgrey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Model size p (parameters)", fontsize=FONT_PT)
    ax.set_ylabel("Memory / compute (GiB per Tflop/s)", fontsize=FONT_PT)
    ax.tick_params(labelsize=FONT_PT)
    ax.grid(True, alpha=0.3)
    figure.legend(loc="outside lower center", ncol=2, fontsize=FONT_PT - 1, frameon=False)
    figure.suptitle(CAPTION, fontsize=FONT_PT, wrap=True)
    return figure


ARTIFACT = Artifact(
    label=LABEL,
    title="Memory-to-compute ratio needed to train in one month",
    kind="figure",
    build=build,
    page="fig_scaling_constant_time",
    description=CAPTION + " Data and pipeline parallelism as large as the critical batch allows, tensor parallelism scaled "
    "(without overhead) to reach one month; the dotted line is the fastest improved configuration on A100s where it trains within a month.",
)
