"""Learning curves as pictures: ``curve.csv`` of one or several runs drawn on one figure.

    hanamikoji-plot runs/league runs/league_control --out curves.png
    hanamikoji-plot runs/quick --columns heuristic search

Each run's greedy win rates (the ``vs_*`` columns of its ``curve.csv``, draws half) against
its wall time trained and against its learner decisions, a line per run and opponent: one run's
opponents in colours; several runs, a colour per run and a line style per opponent.
Training writes ``curve.png`` beside ``curve.csv`` with the same drawing after every evaluation.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path
from typing import Any

from hanamikoji_env.files import check_untrusted, replace_atomically

PICTURE = "curve.png"
"""The picture of a run's curve that training writes beside ``curve.csv``."""
CURVE = "curve.csv"
"""A run's learning curve, in its folder (written by :class:`~hanamikoji_env.training.monitor.Curve`)."""
MAX_CURVE_BYTES = 64 * 2**20
"""A ``curve.csv`` larger than this is refused (a run writes about 60 bytes an evaluation)."""

Curves = dict[str, dict[str, list[tuple[float, float, float]]]]
"""Run label -> opponent -> (hours, million decisions, win rate) points."""


def read_curves(run_dirs: list[Path], columns: list[str] | None = None) -> Curves:
    """The win-rate columns (all, or ``columns``: opponents without ``vs_``) of each run's
    ``curve.csv``; ``ValueError`` in one line for a missing, oversized or malformed file."""
    curves: Curves = {}
    for run, label in zip(run_dirs, labels(run_dirs), strict=True):
        path = run / CURVE if run.is_dir() else run
        if not path.exists():
            raise ValueError(f"{path} does not exist: give run folders (each holds {CURVE}) or curve files")
        check_untrusted(path, "curve file", MAX_CURVE_BYTES, ValueError)
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            rows = list(csv.DictReader(f))
        header = list(rows[0]) if rows else []
        if not {"seconds", "decisions"} <= set(header):
            raise ValueError(f"{path} has no seconds and decisions columns: it is not a run's {CURVE}")
        wanted = [c for c in header if c.startswith("vs_") and (columns is None or c[3:] in columns)]
        if not wanted:
            raise ValueError(f"{path} has none of the columns {columns}; it has {[c[3:] for c in header if c.startswith('vs_')]}")  # fmt: skip
        curves[label] = {c[3:]: [] for c in wanted}
        for k, row in enumerate(rows, start=2):
            try:
                hours, millions = float(row["seconds"]) / 3600, float(row["decisions"]) / 1e6
                points = {c: float(row[c]) for c in wanted}
            except (TypeError, ValueError):
                raise ValueError(f"{path} line {k}: not a number where one belongs") from None
            for c, rate in points.items():
                if math.isfinite(rate):
                    curves[label][c[3:]].append((hours, millions, rate))
    return curves


def labels(run_dirs: list[Path]) -> list[str]:
    """A legend label per run: its folder's name, with as many parent folders as it takes to
    tell apart runs of the same name (``algorithms/ppo-v2``, ``algorithms_long/ppo-v2``)."""
    folders = [(run if run.is_dir() else run.parent).resolve() for run in run_dirs]
    for depth in range(1, 1 + max((len(f.parts) for f in folders), default=1)):
        names = ["/".join(f.parts[-depth:]) for f in folders]
        if len(set(names)) == len(names):
            return names
    return [f"{name} ({k + 1})" for k, name in enumerate(names)]  # the same folder given twice


STYLES = ["-", "--", ":", "-."]
"""Line styles, one per opponent where several runs share the figure."""


def figure(curves: Curves) -> Any:
    """The matplotlib figure of :func:`draw`: one run's opponents in colours; several runs, a
    colour per run and a line style per opponent, the legend beside the plots."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True, layout="constrained")
    several = len(curves) > 1
    opponents = list(dict.fromkeys(o for per_run in curves.values() for o in per_run))
    palette = plt.get_cmap("tab10" if len(curves) <= 10 else "tab20").colors
    for r, per_run in enumerate(curves.values()):
        for opponent, points in per_run.items():
            if not points:
                continue
            o = opponents.index(opponent)
            color = palette[r % len(palette)] if several else f"C{o % 10}"
            style = STYLES[o % len(STYLES)] if several else "-"
            hours, millions, rates = zip(*points, strict=True)
            for ax, x in zip(axes, (hours, millions), strict=True):
                ax.plot(x, rates, style, color=color, marker=".", markersize=3, label=f"vs {opponent}")
    axes[0].set(xlabel="wall time trained (hours)", ylabel="greedy win rate (draws half)", ylim=(0, 1))
    axes[1].set(xlabel="learner decisions (millions)")
    for ax in axes:
        ax.axhline(0.5, color="grey", linewidth=0.5)
        ax.grid(alpha=0.3)
    if several:
        handles = [Line2D([], [], color=palette[r % len(palette)], label=run) for r, run in enumerate(curves)]
        handles += [Line2D([], [], color="black", linestyle=STYLES[o % len(STYLES)], label=f"vs {opponent}")
                    for o, opponent in enumerate(opponents)]  # fmt: skip
        fig.legend(handles=handles, fontsize=7, loc="outside right center")
    else:
        axes[1].legend(fontsize=7, loc="lower right")
    return fig


def draw(curves: Curves, out: Path) -> None:
    """The curves on one figure, win rate against hours and against million decisions, as PNG."""
    import matplotlib.pyplot as plt

    fig = figure(curves)
    replace_atomically(out, lambda tmp: fig.savefig(tmp, format="png", dpi=100))
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="hanamikoji-plot",
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("runs", nargs="+", type=Path, help=f"run folders (or their {CURVE} files)")
    parser.add_argument("--out", type=Path, default=Path("curves.png"), help="the PNG to write")
    parser.add_argument("--columns", nargs="+", help="only these opponents (default: every vs_ column)")
    args = parser.parse_args(argv)
    try:
        curves = read_curves(args.runs, args.columns)
    except ValueError as e:
        parser.error(str(e))
    draw(curves, args.out)
    print(f"wrote {args.out} ({', '.join(curves)})", file=sys.stderr)


if __name__ == "__main__":
    main()
