"""Hostile or broken files and arguments: every one is a one-line error naming the input, never a
traceback, an overflow or a memory bomb (the server's own tests are in test_play.py and
test_serve_load.py; checkpoints and SB3 zips in test_nn.py and test_sb3_bot.py)."""

from __future__ import annotations

import pytest
import torch

from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.records import main as records_main
from hanamikoji_env.tournament import run_tournament
from hanamikoji_env.training.config import Config, load_config
from hanamikoji_env.training.ppo import CHECKPOINT, train
from hanamikoji_env.training.train import main as train_main

TINY = {
    "num_envs": 8,
    "rollout_steps": 8,
    "hidden": 16,
    "num_minibatches": 2,
    "eval_games": 2,
    "total_decisions": 10**6,
}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"schema": ' + "9" * 5000 + "}", "games.jsonl:1: a number of 5000 digits is not allowed"),
        ('{"schema": NaN}', "games.jsonl:1: NaN is not allowed in a game record"),
        ('{"schema": 1e400}', "games.jsonl:1: "),
    ],
)
def test_record_files_fail_in_one_line_naming_the_line(tmp_path, capsys, line, message) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(SystemExit) as stop:
        records_main(["verify", str(path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 1 and len(err) == 1 and message in err[0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("learning_rate: " + "9" * 400, r"'learning_rate': an integer of 400 digits \(at most 30\)"),
        ("bot_shares: {random: " + "9" * 400 + "}", r"'random': an integer of 400 digits \(at most 30\)"),
        ("1: 2\nfoo: 3", r"unknown keys \['1', 'foo'\]"),
        ("[" * 100_000, "not valid YAML: nested too deeply"),
    ],
)
def test_hostile_configs_are_value_errors(tmp_path, text, message) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text + "\n")
    with pytest.raises(ValueError, match=message):
        load_config(path)


def _loaders() -> list[tuple[str, str, int | None, object]]:
    """Every reader of a file from outside: (its name, the file name it reads, its size limit, a
    call reading ``path``)."""
    from hanamikoji_env.bots.mlp import MAX_MLP_BYTES, load_mlp
    from hanamikoji_env.nn import MAX_CHECKPOINT_BYTES, load_checkpoint
    from hanamikoji_env.records import read_records
    from hanamikoji_env.training.config import MAX_CONFIG_BYTES, read_yaml
    from hanamikoji_env.training.plot import MAX_CURVE_BYTES, read_curves
    from hanamikoji_env.training.run_folder import read_saved_config

    loaders = [
        ("checkpoint", "policy.pt", MAX_CHECKPOINT_BYTES, load_checkpoint),
        ("OpenSpiel policy", "average.mlp", MAX_MLP_BYTES, load_mlp),
        ("game records", "games.jsonl", None, lambda path: list(read_records(path))),
        ("config", "run.yaml", MAX_CONFIG_BYTES, read_yaml),
        ("curve", "curve.csv", MAX_CURVE_BYTES, lambda path: read_curves([path])),
        ("run config", "config.json", MAX_CONFIG_BYTES, lambda path: read_saved_config(path.parent)),
    ]
    try:
        from hanamikoji_env.bots.sb3 import MAX_UNPACKED_BYTES, SB3Bot
    except ImportError:  # the sb3 extra: its own test file skips without it
        return loaders
    return [*loaders, ("Stable-Baselines3 model", "model.zip", MAX_UNPACKED_BYTES, SB3Bot)]


@pytest.mark.parametrize("kind", ["pipe", "folder", "sparse"])
def test_every_reader_of_outside_files_refuses_a_pipe_a_folder_or_an_oversized_file_unread(
    tmp_path, kind
) -> None:
    """One gate before every reader (``files.check_untrusted``): a named pipe would hang its reader
    for ever, a folder fail deep inside it, a sparse file larger than the kind's limit be read
    whole (records are read a line at a time, so only their kind is checked).  Each is refused
    in one line naming the file, at once."""
    import os
    import threading

    tried = 0
    for name, filename, limit, read in _loaders():
        folder = tmp_path / name.replace(" ", "_")
        folder.mkdir()
        path = folder / filename
        if kind == "pipe":
            os.mkfifo(path)
        elif kind == "folder":
            path.mkdir()
        elif limit is None:
            continue
        else:
            with path.open("wb") as f:
                f.truncate(limit + 1)
        outcome: list[BaseException | None] = []

        def attempt(read=read, path=path, outcome=outcome) -> None:
            try:
                read(path)
                outcome.append(None)
            except Exception as e:
                outcome.append(e)

        reader = threading.Thread(target=attempt, daemon=True)  # a pipe opened for reading blocks
        reader.start()
        reader.join(timeout=10)
        if reader.is_alive():  # let the stuck reader go: open the pipe's other end and close it
            if kind == "pipe":
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            pytest.fail(f"the {name} reader hung on a {kind}")
        error = outcome[0]
        assert isinstance(error, ValueError), (name, error)
        message = str(error)
        assert "\n" not in message and len(message) < 300 and str(path) in message, (name, message)
        expected = "refused unread" if kind == "sparse" else "does not exist"  # a curve's folder: a run's
        assert expected in message, (name, message)
        tried += 1
    assert tried >= 5


def test_a_run_folder_that_cannot_be_made_is_one_line(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    overrides = [f"{k}={v}" for k, v in TINY.items()] + [f"runs_dir={blocker}/runs"]
    with pytest.raises(SystemExit) as stop:
        train_main(["--no-progress", *overrides])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1 and err[0].startswith("error: ") and str(blocker) in err[0]


@pytest.mark.slow
def test_resuming_a_damaged_checkpoint_is_one_line(tmp_path, capsys) -> None:
    cfg = Config.from_dict({**TINY, "runs_dir": str(tmp_path), "run_name": "run"})
    run_dir = tmp_path / "run"
    train(cfg, run_dir, progress=False, stop_after=1)
    data = torch.load(run_dir / CHECKPOINT, weights_only=True)
    data["optimizer"]["state"] = {0: {"exp_avg": torch.zeros(3)}}  # the wrong shapes for the network
    data["rng"] = {"bit_generator": "nonsense"}
    torch.save(data, run_dir / CHECKPOINT)
    capsys.readouterr()  # what the first run said
    with pytest.raises(SystemExit) as stop:
        train_main(["--resume", str(run_dir), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1
    assert f"{run_dir / CHECKPOINT} cannot be resumed: a saved state in it is damaged" in err[0]


def test_a_tournament_too_large_to_list_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="games must be at most 10,000,000 per pair"):
        run_tournament([parse_player("random"), parse_player("heuristic")], 10**12, progress=False)


def test_ctrl_c_in_training_is_one_line(tmp_path, capsys, monkeypatch) -> None:
    import hanamikoji_env.training.train as cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "train", interrupted)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        cli.main(["--no-progress", *[f"{k}={v}" for k, v in TINY.items()], "run_name=stopped"])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 130 and len(err) == 1
    assert err[0].startswith("interrupted: nothing was saved yet")


@pytest.mark.skipif(torch.cuda.is_available(), reason="the error is for a machine without CUDA")
def test_a_device_this_machine_lacks_is_one_line(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        train_main(["--no-progress", *[f"{k}={v}" for k, v in TINY.items()], "device=cuda"])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and err == [
        "error: device 'cuda': CUDA is not available on this machine (use auto or cpu)"
    ]


def test_no_error_message_quotes_a_value_whole() -> None:
    """An error quotes what it refuses through ``excerpt.short`` (bounded time and length): a
    ``{value!r}`` in a raise echoed a 900 KB record field, or a 40 MB line for a 1 KB nested
    checkpoint value.  Only module constants (``{SCHEMA!r}``, ``{__name__!r}``), slices
    (``{text[:40]!r}``) and clipped text (``{clip(text, 50)!r}``) may be quoted as they are."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    whole = []
    for path in [*(root / "hanamikoji_env").rglob("*.py"), *(root / "training").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            for part in ast.walk(node.exc):
                if isinstance(part, ast.FormattedValue) and part.conversion == ord("r"):
                    value = part.value
                    constant = isinstance(value, ast.Name) and (
                        value.id.isupper() or value.id.startswith("__")
                    )
                    sliced = isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice)
                    clipped = isinstance(value, ast.Call) and ast.unparse(value.func) == "clip"
                    if not (constant or sliced or clipped):
                        whole.append(f"{path.relative_to(root)}:{part.lineno}: {ast.unparse(value)}")
    assert not whole, whole
