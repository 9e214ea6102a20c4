"""A tournament's outputs: the table on the terminal, ``results.json``, ``pairs.csv``, the
heatmap, and the check that an output folder can be written before any game."""

from __future__ import annotations

import csv
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from hanamikoji_env.files import replace_atomically

GAMES_FILE = "games.jsonl"
"""The game records' file in ``--save-games``."""


def format_table(results: dict[str, Any]) -> str:
    w = max(12, *(len(p) + 2 for p in results["players"]))
    lines = [f"{'player A':<{w}}{'player B':<{w}}{'W':>6}{'D':>5}{'L':>6}{'win rate A':>12}  95% CI"]
    for r in results["pairs"]:
        lines.append(
            f"{r['a']:<{w}}{r['b']:<{w}}{r['wins']:>6}{r['draws']:>5}{r['losses']:>6}"
            f"{r['win_rate']:>12.3f}  [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]"
        )
    lines.append("")
    lines.append(
        f"Bradley-Terry ratings (Elo scale, {results['elo_anchor']} = 0; 95% interval by a bootstrap over games):"
    )
    for name, e in sorted(results["elo"].items(), key=lambda x: -x[1]):
        lo, hi = results["elo_ci95"][name]
        lines.append(f"  {name:<{w}}{e:>8.0f}  [{lo:.0f}, {hi:.0f}]")
    return "\n".join(lines)


def check_writable(out: Path, option: str = "--out") -> None:
    """``ValueError`` unless ``out`` is (or can be made) a folder this process can write files in."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"{option} {out} exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as e:
        raise ValueError(f"{option} {out} is not a writable folder ({e.strerror or e})") from None


def write_outputs(results: dict[str, Any], out: Path) -> None:
    """``results.json``, ``pairs.csv`` and ``heatmap.png`` in ``out``, each written to a temporary
    file renamed into place: a failure (a full disk) leaves each file whole or as it was, and
    ``OSError`` names the file."""
    out.mkdir(parents=True, exist_ok=True)
    replace_atomically(out / "results.json", lambda tmp: tmp.write_text(json.dumps(results, indent=2)))
    replace_atomically(out / "pairs.csv", lambda tmp: _write_pairs(results, tmp))
    replace_atomically(out / "heatmap.png", lambda tmp: heatmap(results, tmp))


_PAIR_COLUMNS = [
    "a",
    "b",
    "games",
    "wins",
    "draws",
    "losses",
    "win_rate",
    "ci95_low",
    "ci95_high",
    "elo_a",
    "elo_b",
]


def _write_pairs(results: dict[str, Any], path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(_PAIR_COLUMNS)
        for r in results["pairs"]:
            writer.writerow(
                [
                    r["a"],
                    r["b"],
                    r["games"],
                    r["wins"],
                    r["draws"],
                    r["losses"],
                    f"{r['win_rate']:.4f}",
                    f"{r['ci95'][0]:.4f}",
                    f"{r['ci95'][1]:.4f}",
                    f"{results['elo'][r['a']]:.1f}",
                    f"{results['elo'][r['b']]:.1f}",
                ]
            )


def heatmap(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = results["players"]
    m = np.array([[np.nan if x is None else x for x in row] for row in results["win_rate_matrix"]])
    fig, ax = plt.subplots(figsize=(1.2 * len(names) + 2.5, 1.0 * len(names) + 1.8))
    im = ax.imshow(m, vmin=0, vmax=1, cmap="cividis")  # readable with any colour vision, and in grey
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            if not np.isnan(m[i, j]):
                ink = "white" if m[i, j] < 0.5 else "black"  # cividis is dark below the middle
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=9, color=ink)
    ax.set_title(f"win rate of row vs column ({results['games_per_pair']} games per pair)")
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.savefig(
        path, dpi=110, bbox_inches="tight", format="png"
    )  # long player names widen the figure, not clip
    plt.close(fig)
