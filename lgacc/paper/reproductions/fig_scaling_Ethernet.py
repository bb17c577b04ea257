"""``fig:scaling_Ethernet``: as ``fig:scaling_limited`` over 25 Gb/s Ethernet per GPU instead of InfiniBand (sec:slow_network).

The dotted line is the improved method (layered gradient accumulation and
modular pipeline) without the state partition, :data:`lgacc.scaling.NOT_PARTITIONED`:
"For the smallest models, the partition can be avoided to further reduce the
training time at a minimal memory cost (dotted line)".  Its configurations come
from :func:`lgacc.search.fastest` with ``partitioned=False``, the same rules as
the other curves; it is drawn only where it is faster than the partitioned improved method
(:func:`lgacc.scaling.unpartitioned_helps`), so the figure shows for which models the sweep finds
the paper's statement true.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from lgacc.model.hardware import Hardware, load_hardware
from lgacc.scaling import NOT_PARTITIONED, scaling_sweep, unpartitioned_helps

from ..artifacts import Artifact
from ..printed import PAPER_HARDWARE
from .fig_scaling_limited import memory_time_figure

LABEL = "fig:scaling_Ethernet"
CAPTION = ("Approximate minimal memory usage and training time for selected training methods, "
           "with a 25 Gb/s Ethernet connection.")


def ethernet_words(hardware: Hardware) -> str:
    """The Ethernet share per GPU in words: the spec's own name for the link when it gives one
    (``Ethernet (50 Gb/s)``), else the rate each way in decimal Gb/s; the paper's 25 Gb/s on its hardware."""
    named = dict(hardware.link_names).get("ethernet")
    if named:
        return f"an {named} connection per GPU" if named.lower().startswith("ethernet") else f"a {named} connection"
    if hardware == load_hardware(PAPER_HARDWARE):
        return "a 25 Gb/s Ethernet connection"
    return f"a {hardware.ethernet_bandwidth_bytes_per_s / 2 * 8 / 1e9:.3g} Gb/s (decimal, each way) Ethernet connection"


def caption(hardware: Hardware) -> str:
    """The paper's caption with this hardware's Ethernet share (:data:`CAPTION` on the paper's hardware)."""
    return CAPTION.replace("a 25 Gb/s Ethernet connection", ethernet_words(hardware))


def build(hardware: Hardware, progress: bool = False) -> Figure:
    frame = scaling_sweep(hardware, "ethernet", progress=progress)
    plain = frame[(frame.method == NOT_PARTITIONED) & frame.feasible.astype(bool)].copy()
    # blank the models where the partition costs nothing, so the dotted line breaks there
    plain.loc[~plain.x.isin(unpartitioned_helps(frame).x), ["memory_gib", "time_days"]] = float("nan")
    dotted = plain
    return memory_time_figure(frame[frame.method != NOT_PARTITIONED], hardware, caption(hardware), dotted=dotted,
                              dotted_label="improved, not partitioned, where faster (dotted)")


ARTIFACT = Artifact(
    label=LABEL,
    title="Memory and training time along the X family over 25 Gb/s Ethernet",
    kind="figure",
    build=build,
    page="fig_scaling_Ethernet",
    description=CAPTION + " Dotted: the improved method without the state partition (search with partitioned=False), "
                            "where it is faster than with the partition.",
)
