"""Game records: written by the env and the tournament, replayed and verified on the engine,
and refused loudly when malformed or tampered with."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hanamikoji_env import engine, records
from hanamikoji_env.aec import env as make_env
from hanamikoji_env.aec import raw_env
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.records import RecordError, parse_line, verify
from hanamikoji_env.tournament import main as eval_main
from hanamikoji_env.tournament import run_tournament


def random_game(seed: int, round_limit: int | None = None) -> records.GameRecord:
    rng = np.random.default_rng(seed)
    e = raw_env(round_limit=round_limit)
    e.reset(seed=seed)
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return records.from_env(e, ("random", "random"), {"seed": seed})


def edited(record: records.GameRecord, edit) -> str:
    d = record.to_dict()
    edit(d)
    return json.dumps(d)


def test_random_games_round_trip_through_json_and_verify() -> None:
    for seed in range(40):
        record = random_game(seed, round_limit=None if seed % 4 else 2)
        again = parse_line(record.to_json())
        assert again == record
        verify(again)
        assert record.rounds == len(record.decks) == len(record.round_summaries)
        assert record.winner in (0, 1, -1)


def test_the_replay_reaches_the_same_positions_as_the_env() -> None:
    e = raw_env()
    e.reset(seed=11)
    rng = np.random.default_rng(0)
    seen = [e.game]
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            seen.append(e.game)
    record = records.from_env(e, ("a", "b"))
    assert records.replay(record) == seen


def test_a_game_ended_by_an_illegal_move_is_recorded_and_verified() -> None:
    e = make_env()
    e.reset(seed=3)
    e.step(0)  # Secret
    with pytest.warns(UserWarning, match="illegal"):
        e.step(14)  # a Gift answer while selecting: illegal
    record = records.from_env(e, ("a", "b"))
    assert record.illegal == (0, 14) and record.winner is None and record.rewards == (-1.0, 0.0)
    verify(parse_line(record.to_json()))
    legal = engine.legal_actions(records.replay(record)[-1])[0]
    with pytest.raises(RecordError, match="legal there"):
        verify(parse_line(edited(record, lambda d: d["result"].update(illegal=[0, legal]))))


def test_a_record_of_an_unfinished_game_is_refused() -> None:
    e = raw_env()
    e.reset(seed=1)
    with pytest.raises(RecordError, match="not over"):
        records.from_env(e, ("a", "b"))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["actions"].__setitem__(3, [d["actions"][3][0], 22]), "is illegal"),
        (lambda d: d["actions"].__setitem__(0, [1, d["actions"][0][1]]), "seat 0 is to move"),
        (lambda d: d["actions"].pop(), "end before the game"),
        (lambda d: d["actions"].append([0, 0]), "ended before action"),
        (lambda d: d["result"].update(winner=1 - d["result"]["winner"]), "replay gives winner"),
        (lambda d: d["result"].update(rounds=d["result"]["rounds"] + 1), "replay gives"),
        (lambda d: d["round_summaries"][0]["points"].__setitem__(0, 9), r"round_summaries\[0\]"),
        (lambda d: d["decks"].append(d["decks"][0]), "left over"),
        (lambda d: d["decks"].pop(), "no deck for round"),
    ],
)
def test_a_tampered_record_fails_verification_naming_the_mismatch(edit, message) -> None:
    record = next(r for r in map(random_game, range(100)) if r.rounds >= 2 and r.winner in (0, 1))
    with pytest.raises(RecordError, match=message):
        verify(parse_line(edited(record, edit)))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(schema="hanamikoji-record/9"), "schema must be"),
        (lambda d: d.update(extra=1), "unknown keys"),
        (lambda d: d.pop("decks"), "missing keys"),
        (lambda d: d.update(round_limit=True), "round_limit must be an int"),
        (lambda d: d.update(players=["a"]), "players must hold 2"),
        (lambda d: d.update(players=["a", "b" * 5000]), "at most 1000 characters"),
        (lambda d: d["decks"][0].__setitem__(0, 99), r"decks\[0\] \(round 1\)"),
        (
            lambda d: d["decks"][0].__setitem__(0, "x" * 900_000),
            r"deck\[0\] = 'xxx.*\.\.\.x*' is not a geisha",
        ),
        (lambda d: d.update(round_limit="r" * 900_000), "round_limit must be"),
        (lambda d: d["actions"].__setitem__(0, [0, 23]), "action must be an int in"),
        (lambda d: d["actions"].__setitem__(0, [0, 1.0]), "action must be an int in"),
        (lambda d: d["result"].update(rewards=[2, 0]), "must be -1, 0 or 1"),
        (lambda d: d.update(meta={f"k{i}": i for i in range(40)}), "at most 32 entries"),
        (lambda d: d.update(meta={"k": [1, 2]}), "string, number, bool or null"),
        (lambda d: d.update(actions=[[0, 0]] * (records.MAX_ACTIONS + 1)), "must hold 0..100000"),
    ],
)
def test_malformed_records_are_refused_with_the_field_named(edit, message) -> None:
    with pytest.raises(RecordError, match=message) as refused:
        parse_line(edited(random_game(5), edit))
    assert len(str(refused.value)) < 300  # a value quoted is an excerpt (a 900 KB one was echoed whole)


def test_untrusted_text_is_refused_before_parsing() -> None:
    with pytest.raises(RecordError, match="longer than"):
        parse_line("[" * (records.MAX_LINE_BYTES + 1))
    with pytest.raises(RecordError, match="not valid JSON"):
        parse_line("{")
    with pytest.raises(RecordError, match="NaN is not allowed"):
        parse_line('{"meta": NaN}')
    with pytest.raises(RecordError, match="must be a JSON object"):
        parse_line("[1, 2]")


def test_read_records_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text(random_game(1).to_json() + "\n\n" + "{oops\n")
    with pytest.raises(RecordError, match=r"games.jsonl:3: not valid JSON"):
        list(records.read_records(path))
    huge = tmp_path / "huge.jsonl"
    huge.write_bytes(b" " * (records.MAX_LINE_BYTES + 10))
    with pytest.raises(RecordError, match=r"huge.jsonl:1: longer than"):
        list(records.read_records(huge))


def test_the_verify_command_passes_good_files_and_fails_loudly(tmp_path: Path, capsys) -> None:
    good = tmp_path / "good.jsonl"
    assert records.write_records(good, [random_game(s) for s in range(5)]) == 5
    records.main(["verify", str(good)])
    assert "5 game(s) verified" in capsys.readouterr().out
    lines = good.read_text().splitlines()
    d = json.loads(lines[2])
    d["result"]["rewards"] = d["result"]["rewards"][::-1]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*lines[:2], json.dumps(d), *lines[3:]]) + "\n")
    with pytest.raises(SystemExit) as exit_:
        records.main(["verify", str(bad)])
    assert exit_.value.code == 1
    assert "bad.jsonl: game 3: the record says" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(SystemExit):
        records.main(["verify", str(empty)])
    assert "no game records" in capsys.readouterr().err


def test_verify_shows_its_progress_over_the_file_s_games(tmp_path: Path, monkeypatch) -> None:
    """A long file (1M games take most of an hour) shows a bar over its games on a terminal, each
    game counted as it is verified; ``--no-progress`` (or no terminal) shows none."""
    path = tmp_path / "games.jsonl"
    records.write_records(path, [random_game(s) for s in range(4)])
    bars = []

    def forced(path: Path, disable: bool | None):  # as on a terminal: None shows the bar
        bars.append((disable, shown(path, False if disable is None else disable)))
        return bars[-1][1]

    shown = records._progress
    monkeypatch.setattr(records, "_progress", forced)
    records.main(["verify", str(path)])
    disable, bar = bars[-1]
    assert disable is None and bar.total == 4 and bar.n == 4
    records.main(["verify", str(path), "--no-progress"])
    assert bars[-1][0] is True


def test_tournament_saves_every_game_in_order_and_they_verify(tmp_path: Path) -> None:
    players = [parse_player("random"), parse_player("heuristic")]
    results = run_tournament(players, 6, seed=4, workers=1, progress=False, save_games=tmp_path / "g")
    saved = list(records.read_records(tmp_path / "g" / "games.jsonl"))
    assert len(saved) == 6
    for r in saved:
        verify(r)
        assert set(r.players) == {"random", "heuristic"} and r.meta["source"] == "hanamikoji-eval"
    # each deal twice, seats swapped: the same first deck, players in swapped seats
    assert saved[0].decks[0] == saved[1].decks[0] and saved[0].players == saved[1].players[::-1]
    wins = sum((r.winner == r.players.index("random")) + 0.5 * (r.winner == -1) for r in saved)
    assert results["pairs"][0]["win_rate"] == pytest.approx(wins / 6)
    # the same games without records
    assert run_tournament(players, 6, seed=4, workers=1, progress=False)["pairs"] == results["pairs"]


def test_eval_cli_checks_the_save_games_folder_before_playing(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SystemExit) as exit_:
        eval_main(["--players", "random", "heuristic", "--games", "2", "--save-games", str(blocker)])
    assert exit_.value.code == 2
    assert "--save-games" in capsys.readouterr().err and not (tmp_path / "file" / "games.jsonl").exists()
