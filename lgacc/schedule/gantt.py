"""Gantt drawings of simulated timelines, in the style of the paper's scheduling figures.

fig:gradient_accumulation's caption sets the conventions: one colour per layer,
a light shade for the forward pass and a dark one for the backward pass, and the
micro-batch index written in each block.  Each device's transfer streams are
drawn under its compute stream.  Figures are built with
:class:`matplotlib.figure.Figure` directly, never through pyplot's global state.
"""

from __future__ import annotations

import textwrap
from typing import Sequence

import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from .engine import Timeline
from .operations import Kind, Stream

#: Row heights, as fractions of a row's unit slot: compute rows are the main content.
_HEIGHT = {Stream.COMPUTE: 0.8, Stream.NETWORK: 0.55, Stream.HOST: 0.55, Stream.PIPELINE: 0.4}
_STREAM_LABEL = {Stream.COMPUTE: "compute", Stream.NETWORK: "network", Stream.HOST: "CPU-GPU", Stream.PIPELINE: "pipeline"}
_LIGHT = {Kind.FORWARD, Kind.RESTORE}
_SEND_COLOUR = "#9a9a9a"


def layer_colours(d_l: int) -> list[tuple[float, float, float]]:
    """One distinct colour per layer: tab10 without its grey (kept for the legend's shade
    swatches and pipeline sends) up to 9 layers, then evenly spaced hues."""
    palette = [c for n, c in enumerate(mpl.colormaps["tab10"].colors) if n != 7]
    if d_l <= len(palette):
        return [to_rgb(c) for c in palette[:d_l]]
    cmap = mpl.colormaps["turbo"]
    return [to_rgb(cmap(0.05 + 0.9 * i / (d_l - 1))) for i in range(d_l)]


def light(colour, amount: float = 0.55):
    """The forward-pass shade: the layer colour mixed with white."""
    return tuple(c + (1 - c) * amount for c in colour)


def _rows(timeline: Timeline) -> list[tuple[int, Stream]]:
    rows = []
    for device in timeline.schedule.devices:
        used = timeline.streams_used(device)
        rows += [(device, stream) for stream in Stream if stream is Stream.COMPUTE or stream in used]
    return rows


def draw_timeline(ax: Axes, timeline: Timeline, *, title: str = "", x_max: float | None = None) -> None:
    """Draw ``timeline`` on ``ax``: one row per used stream of each device, compute on top."""
    schedule = timeline.schedule
    colours = layer_colours(schedule.d_l)
    rows = _rows(timeline)
    position = {row: -n for n, row in enumerate(rows)}
    x_max = float(x_max if x_max is not None else timeline.step_time)
    # Only label blocks wide enough to hold a digit at the figure's scale.
    min_label_width = x_max / 90
    # Thin separators once blocks get narrow, or the white edges would swamp the colours.
    per_device = sum(op.is_compute for op in schedule.operations) / len(schedule.devices)
    edge_width = 0.6 if per_device <= 100 else 0.2
    for interval in timeline.intervals:
        op = interval.operation
        width = float(interval.end - interval.start)
        if width <= 0:
            continue
        height = _HEIGHT[op.stream]
        y = position[(op.device, op.stream)] - height / 2
        if op.kind is Kind.SEND:
            face = _SEND_COLOUR
        else:
            base = colours[op.layer]
            face = light(base) if op.kind in _LIGHT else base
        patch = Rectangle((float(interval.start), y), width, height, facecolor=face, edgecolor="white", linewidth=edge_width)
        if op.kind is Kind.RECOMPUTE:
            # Recomputation belongs to the backward pass (dark shade) but repeats the
            # forward's work: a faint hatch tells it apart without hiding the label.
            patch.set_hatch("//")
            patch.set_hatchcolor(light(face, 0.3))
            patch.set_hatch_linewidth(0.5)
        elif op.kind is Kind.WEIGHT_GRADIENT:
            # The weight-gradient half of a split backward pass (zero-bubble schedules).
            patch.set_hatch("..")
            patch.set_hatchcolor(light(face, 0.3))
            patch.set_hatch_linewidth(0.5)
        ax.add_patch(patch)
        if op.micro_batch is not None and width >= min_label_width and op.stream is not Stream.PIPELINE:
            dark = op.kind not in _LIGHT and op.kind is not Kind.SEND
            ax.text(
                float(interval.start) + width / 2, y + height / 2, str(op.micro_batch),
                ha="center", va="center", fontsize=7, color="white" if dark else "#222222",
            )
    ax.set_yticks([position[row] for row in rows])
    several = len(schedule.devices) > 1
    ax.set_yticklabels([f"device {d} {_STREAM_LABEL[s]}" if several else _STREAM_LABEL[s] for d, s in rows], fontsize=8)
    ax.set_ylim(-len(rows) + 0.45, 0.55)
    ax.set_xlim(0, x_max * 1.005)
    ax.axvline(float(timeline.step_time), color="#444444", linewidth=0.8, linestyle="--")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.tick_params(axis="y", length=0)
    ax.tick_params(axis="x", labelsize=8)
    if title:
        ax.set_title(title, fontsize=9.5, loc="left")


def legend_handles(timeline: Timeline, *, weight_gradients: bool | None = None) -> list[Patch]:
    """Layer colours, then the conventions for shades and hatching; ``weight_gradients``
    adds the split backward's weight-gradient hatch (default: if ``timeline`` has one)."""
    colours = layer_colours(timeline.schedule.d_l)
    shown = range(len(colours)) if len(colours) <= 12 else (0, len(colours) - 1)  # many layers: the two ends
    handles = [Patch(facecolor=colours[i], label=f"layer {i}") for i in shown]
    grey = (0.3, 0.3, 0.3)
    handles += [
        Patch(facecolor=light(grey), label="forward / restore"),
        Patch(facecolor=grey, label="backward / reduction"),
        _recompute_handle(grey),
    ]
    if weight_gradients is None:
        weight_gradients = _has_weight_gradients(timeline)
    if weight_gradients:
        handle = Patch(facecolor=grey, edgecolor="white", hatch="..", label="weight gradients (split backward)")
        handle.set_hatchcolor(light(grey, 0.3))
        handles.append(handle)
    if any(op.kind is Kind.SEND and op.duration > 0 for op in timeline.schedule.operations):
        handles.append(Patch(facecolor=_SEND_COLOUR, label="pipeline send"))
    return handles


def _has_weight_gradients(timeline: Timeline) -> bool:
    return any(op.kind is Kind.WEIGHT_GRADIENT for op in timeline.schedule.operations)


def _recompute_handle(colour) -> Patch:
    handle = Patch(facecolor=colour, edgecolor="white", hatch="//", label="recomputation")
    handle.set_hatchcolor(light(colour, 0.3))
    return handle


def comparison_figure(
    timelines: Sequence[Timeline], titles: Sequence[str], *, caption: str = "", width: float = 10.0
) -> Figure:
    """Timelines stacked top to bottom on a shared time axis (the standard schedule first)."""
    heights = [len(_rows(t)) for t in timelines]
    handles = legend_handles(timelines[0], weight_gradients=any(_has_weight_gradients(t) for t in timelines))
    columns = min(len(handles), 8, max(3, int(width * 0.7)))  # a narrow figure wraps its legend
    legend_inches = 0.45 + 0.2 * (-(-len(handles) // columns))
    caption = textwrap.fill(caption, width=int(15 * width))
    caption_inches = 0.2 * (caption.count("\n") + 1) if caption else 0
    height = 0.6 + 0.36 * sum(heights) + 0.5 * len(timelines) + legend_inches + caption_inches
    figure = Figure(figsize=(width, height))
    axes = figure.subplots(len(timelines), 1, sharex=True, gridspec_kw={"height_ratios": heights})
    axes = list(axes) if len(timelines) > 1 else [axes]
    x_max = max(float(t.step_time) for t in timelines)
    for ax, timeline, title in zip(axes, timelines, titles):
        draw_timeline(ax, timeline, title=title, x_max=x_max)
    axes[-1].set_xlabel("time (unit: forward pass of one layer for one micro-batch)", fontsize=8.5)
    figure.legend(
        handles=handles, loc="lower center", ncol=columns, fontsize=7.5, frameon=False, bbox_to_anchor=(0.5, 0.0),
    )
    if caption:
        figure.suptitle(caption, fontsize=9, x=0.01, ha="left")
    figure.tight_layout(rect=(0, (legend_inches - 0.15) / height, 1, 1))
    return figure
