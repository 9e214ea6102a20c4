"""hanamikoji-plot: runs' curve.csv files as one figure, and one-line errors for what is not one."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from hanamikoji_env.training.plot import main, read_curves

HEADER = "seconds,update,decisions,phase,vs_heuristic,vs_search\n"


def run_folder(tmp_path: Path, name: str, rows: list[str]) -> Path:
    run = tmp_path / name
    run.mkdir()
    (run / "curve.csv").write_text(HEADER + "".join(f"{r}\n" for r in rows))
    return run


def test_curves_are_read_per_run_and_opponent_in_hours_and_millions(tmp_path) -> None:
    a = run_folder(tmp_path, "a", ["3600.0,100,2000000,ppo,0.800,0.550", "7200.0,200,4000000,ppo,0.850,nan"])
    curves = read_curves([a], ["search"])
    assert curves == {"a": {"search": [(1.0, 2.0, 0.55)]}}  # NaN (not measured then) left out
    assert read_curves([a])["a"]["heuristic"] == [(1.0, 2.0, 0.8), (2.0, 4.0, 0.85)]


def test_the_command_draws_several_runs_on_one_png(tmp_path, capsys) -> None:
    a = run_folder(tmp_path, "league", ["600.0,10,100000,ppo,0.7,0.5", "1200.0,20,200000,ppo,0.8,0.6"])
    b = run_folder(tmp_path, "control", ["600.0,10,150000,ppo,0.6,0.4"])
    out = tmp_path / "both.png"
    main([str(a), str(b / "curve.csv"), "--out", str(out)])
    with Image.open(out) as image:
        assert image.format == "PNG" and image.size == (1200, 450)
    assert "league, control" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        ("a,b\n1,2\n", "has no seconds and decisions columns"),
        (HEADER + "x,1,2,ppo,0.5,0.5\n", "line 2: not a number"),
        ("seconds,update,decisions,phase\n1,1,1,ppo\n", "has none of the columns"),
    ],
)
def test_what_is_not_a_curve_is_one_line(tmp_path, capsys, content: str | None, message: str) -> None:
    run = tmp_path / "r"
    run.mkdir()
    if content is not None:
        (run / "curve.csv").write_text(content)
    with pytest.raises(SystemExit) as exit_:
        main([str(run), "--out", str(tmp_path / "x.png")])
    assert exit_.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_several_runs_get_a_colour_each_and_each_opponent_a_line_style(tmp_path) -> None:
    import matplotlib.pyplot as plt

    from hanamikoji_env.training.plot import figure

    rows = ["600.0,10,100000,ppo,0.7,0.5", "1200.0,20,200000,ppo,0.8,0.6"]
    runs = [run_folder(tmp_path, f"run{k}", rows) for k in range(12)]
    fig = figure(read_curves(runs))
    lines = [line for line in fig.axes[0].get_lines() if line.get_label().startswith("vs ")]
    assert len(lines) == 12 * 2
    colours = [line.get_color() for line in lines]
    styles = [line.get_linestyle() for line in lines]
    assert len({str(c) for c in colours[0::2]}) == 12  # a colour per run ...
    assert colours[0::2] == colours[1::2]  # ... shared by its opponents
    assert set(styles[0::2]) == {"-"} and set(styles[1::2]) == {"--"}  # a style per opponent
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == [f"run{k}" for k in range(12)] + ["vs heuristic", "vs search"]
    plt.close(fig)
    one = figure(read_curves(runs[:1]))
    assert len({str(line.get_color()) for line in one.axes[0].get_lines()[:2]}) == 2  # one run: by colour
    plt.close(one)


def test_runs_of_the_same_name_are_told_apart_not_overwritten(tmp_path) -> None:
    """A row rerun for longer lives in another folder under the same name: both curves are kept,
    each labelled with the parent folder that tells them apart."""
    (tmp_path / "rows").mkdir()
    (tmp_path / "rows_long").mkdir()
    short = run_folder(tmp_path / "rows", "ppo-v2", ["600.0,10,100000,ppo,0.3,0.1"])
    long = run_folder(
        tmp_path / "rows_long", "ppo-v2", ["600.0,10,100000,ppo,0.4,0.2", "1200.0,20,200000,ppo,0.5,0.2"]
    )
    other = run_folder(tmp_path, "sb3", ["600.0,10,100000,ppo,0.2,0.1"])
    curves = read_curves([short, long, other / "curve.csv"], ["heuristic"])
    assert list(curves) == ["rows/ppo-v2", "rows_long/ppo-v2", f"{tmp_path.name}/sb3"]
    assert len(curves["rows_long/ppo-v2"]["heuristic"]) == 2 and len(curves["rows/ppo-v2"]["heuristic"]) == 1
    assert list(read_curves([short, other])) == ["ppo-v2", "sb3"]  # names alone where they differ
    assert read_curves([]) == {}  # no runs, no curves (as before labels were added)


def test_the_command_draws_without_torch(tmp_path) -> None:
    """Drawing a CSV needs matplotlib alone: ``hanamikoji-plot`` runs where torch is missing."""
    import subprocess
    import sys

    a = run_folder(tmp_path, "run", ["600.0,10,100000,ppo,0.7,0.5"])
    code = (
        "import sys; sys.modules['torch'] = None\n"  # any import of torch now fails
        "from hanamikoji_env.training.plot import main\n"
        f"main([{str(a)!r}, '--out', {str(tmp_path / 'c.png')!r}])\n"
        "assert 'torch' not in [m for m in sys.modules if sys.modules[m] is not None]"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "c.png").is_file()
