"""``fig:scaling_Ethernet``: as ``fig:scaling_limited`` over 25 Gb/s Ethernet per GPU instead of InfiniBand (sec:slow_network).

The paper's dotted line (the improved method without the state partition) is
not drawn: :func:`lgacc.search.fastest` has no option to search the improved
method with ``partitioned=False`` (the evaluator has one).
"""

from __future__ import annotations

from matplotlib.figure import Figure

from ..artifacts import Artifact
from ..hardware import Hardware
from ..scaling import scaling_sweep
from .fig_scaling_limited import memory_time_figure

LABEL = "fig:scaling_Ethernet"
CAPTION = ("Approximate minimal memory usage and training time for selected training methods, "
           "with a 25 Gb/s Ethernet connection.")


def build(hardware: Hardware, progress: bool = False) -> Figure:
    return memory_time_figure(scaling_sweep(hardware, "ethernet", progress=progress), hardware, CAPTION)


ARTIFACT = Artifact(
    label=LABEL,
    title="Memory and training time along the X family over 25 Gb/s Ethernet",
    kind="figure",
    build=build,
    page="fig_scaling_Ethernet",
    description=CAPTION + " The non-partitioned improved variant (the paper's dotted line) is not drawn: the search cannot select it yet.",
)
