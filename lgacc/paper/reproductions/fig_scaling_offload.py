"""``fig:scaling_offload``: arithmetic intensity and bandwidth needed to offload the state and the checkpoints (sec:fast_checkpoints).

Data: :func:`lgacc.scaling.offload_sweep`.  The paper reuses the caption of
``fig:scaling_constant_time`` for this figure (a copy error in the source); the
caption below describes what is drawn, and the printed one is kept in ``PRINTED_CAPTION``.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from lgacc.model.hardware import GIB, Hardware
from lgacc.scaling import METHODS, offload_sweep

from ..artifacts import Artifact
from .fig_scaling_limited import COLORS, FONT_PT, MARKER, WIDTH_IN

LABEL = "fig:scaling_offload"
PRINTED_CAPTION = ("Required memory to compute ratio for training a transformer in one month, as a function of the model size. "
                   "The dotted line shows a faster training scheme which is already possible on A100s.")
CAPTION = ("Arithmetic intensity (left) and bandwidth per GPU (right) needed to offload the training state (solid) "
           "and the activation checkpoints (dashed), against the link thresholds.")
LINKS = {"cpu_gpu": "CPU-GPU", "nvme": "NVMe", "ethernet": "Ethernet", "hdd": "Hard drive"}


def build(hardware: Hardware, progress: bool = False) -> Figure:
    frame = offload_sweep(hardware, progress=progress)
    from matplotlib.lines import Line2D

    figure = Figure(figsize=(WIDTH_IN, 8.2), layout="constrained")
    nu_ax, bw_ax = figure.subplots(2, 1, sharex=True)
    for method in METHODS:
        rows = frame[frame.method == method]
        color = COLORS[method]
        nu_ax.plot(rows.p, rows.nu_state, "-", color=color, **MARKER)
        nu_ax.plot(rows.p, rows.nu_checkpoint, "--", color=color, **MARKER)
        bw_ax.plot(rows.p, rows.bandwidth_state_bytes_per_s / GIB, "-", color=color, **MARKER)
        bw_ax.plot(rows.p, rows.bandwidth_checkpoint_bytes_per_s / GIB, "--", color=color, **MARKER)
    handles = [Line2D([], [], color=COLORS[m], **MARKER, label=m) for m in METHODS]
    handles += [Line2D([], [], color="black", ls="-", label="training state"),
                Line2D([], [], color="black", ls="--", label="activation checkpoints")]
    for i, (link, name) in enumerate(LINKS.items()):
        style = dict(color="grey", lw=1, ls=(0, (1 + i, 2)))
        nu_ax.axhline(hardware.threshold(link), **style)
        nu_ax.annotate(name, (0.01, hardware.threshold(link)), xycoords=("axes fraction", "data"), ha="left",
                       va="bottom", fontsize=FONT_PT - 1, color="dimgrey")
        bw_ax.axhline(hardware.bandwidth(link) / GIB, **style)
        bw_ax.annotate(name, (0.01, hardware.bandwidth(link) / GIB), xycoords=("axes fraction", "data"), ha="left",
                       va="bottom", fontsize=FONT_PT - 1, color="dimgrey")
    for ax in (nu_ax, bw_ax):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=FONT_PT)
    for ax in (nu_ax, bw_ax):
        ax.set_xlabel("Model size p (parameters)", fontsize=FONT_PT)
    nu_ax.set_ylabel("Arithmetic intensity (flop/B)", fontsize=FONT_PT)
    bw_ax.set_ylabel("Bandwidth per GPU (GiB/s)", fontsize=FONT_PT)
    figure.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=FONT_PT - 1, frameon=False)
    figure.suptitle(CAPTION.replace("(left)", "(top)").replace("(right)", "(bottom)"), fontsize=FONT_PT, wrap=True)
    return figure


ARTIFACT = Artifact(
    label=LABEL,
    title="Offloading the state and the activation checkpoints: intensity and bandwidth",
    kind="figure",
    build=build,
    page="fig_scaling_offload",
    description=CAPTION + " Offloading is free of overhead where the intensity is above a link's threshold. "
    "(The paper prints the caption of fig:scaling_constant_time under this figure.)",
)
