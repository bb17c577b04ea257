"""``fig:scaling_unlimited``: as ``fig:scaling_limited`` with no node-size limit (NVLink tensor parallelism at any degree)."""

from __future__ import annotations

from matplotlib.figure import Figure

from lgacc.model.hardware import Hardware
from lgacc.scaling import scaling_sweep

from ..artifacts import Artifact
from .fig_scaling_limited import memory_time_figure, paper_model_range

LABEL = "fig:scaling_unlimited"
CAPTION = "Approximate minimal memory usage and training time for selected training methods."


def build(hardware: Hardware, progress: bool = False) -> Figure:
    return memory_time_figure(scaling_sweep(hardware, "unlimited", progress=progress), hardware,
                              CAPTION + " (No node-size limit.)", paper_range=paper_model_range(LABEL), mark_ends=True)


ARTIFACT = Artifact(
    label=LABEL,
    title="Memory and training time along the X family, no node-size limit",
    kind="figure",
    build=build,
    page="fig_scaling_unlimited",
    description=CAPTION + " The node-size limit is removed: tensor parallelism runs over NVLink at any degree the 25 % "
                          "overhead cap allows; memory is an output, the band above the GPU's memory is shaded.",
)
