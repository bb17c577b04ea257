"""The measured-runs page's figures: predicted against measured step time, log axes, a marker per source."""

from __future__ import annotations

import pandas as pd

__all__ = ["plot_comparison", "plot_both_models"]

MARKERS = "osD^vP*Xh<>"


def _axes(frame: pd.DataFrame, columns: list[str], ylabel: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.4, 5.4))
    values = pd.concat([frame["measured_step_s"], *(frame[c] for c in columns)])
    low, high = values.min() / 1.5, values.max() * 1.5
    axis.plot([low, high], [low, high], color="grey", linewidth=1, label="predicted = measured")
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlim(low, high)
    axis.set_ylim(low, high)
    axis.set_xlabel("measured step time (s)")
    axis.set_ylabel(ylabel)
    axis.grid(True, which="major", alpha=0.3)
    return figure, axis, plt


def plot_comparison(frame: pd.DataFrame, convention: str = "physical"):
    """The ideal model's prediction against the measured step time, one marker per publication."""
    figure, axis, plt = _axes(frame, [f"predicted_{convention}_s"], f"predicted step time, {convention} convention (s)")
    for i, (publication, rows) in enumerate(frame.groupby("publication", sort=True)):
        axis.scatter(rows["measured_step_s"], rows[f"predicted_{convention}_s"], marker=MARKERS[i % len(MARKERS)],
                     s=48, label=publication)
    axis.legend(fontsize=8, loc="upper left")
    figure.tight_layout()
    plt.close(figure)
    return figure


def plot_both_models(frame: pd.DataFrame):
    """Per dense bf16 run, the ideal bound (open marker) and the calibrated prediction (filled marker, same shape)
    against the measurement: one marker shape per source, log axes (the MoE and FP8 runs are reported apart)."""
    if "extended" in frame.columns:
        frame = frame[~frame["extended"].astype(bool)]
    figure, axis, plt = _axes(frame, ["predicted_physical_s", "expected_step_s"], "predicted step time (s)")
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (publication, rows) in enumerate(frame.groupby("publication", sort=True)):
        marker, color = MARKERS[i % len(MARKERS)], colors[i % len(colors)]
        axis.scatter(rows["measured_step_s"], rows["expected_step_s"], marker=marker, s=42, color=color,
                     label=publication)
        axis.scatter(rows["measured_step_s"], rows["predicted_physical_s"], marker=marker, s=42,
                     facecolors="none", edgecolors=color)
    axis.scatter([], [], marker="o", facecolors="none", edgecolors="black", label="open: ideal bound (paper's model)")
    axis.scatter([], [], marker="o", color="black", label="filled: calibrated prediction")
    axis.legend(fontsize=8.5, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1, frameon=False)
    figure.set_size_inches(6.4, 8.2)
    figure.tight_layout()
    plt.close(figure)
    return figure
