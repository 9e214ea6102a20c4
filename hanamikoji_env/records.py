"""Game records: one game per line of JSON, replayable and verifiable on the engine of record.

A record holds everything needed to replay a game exactly: the rules option
(``round_limit``), the deck of every round that was dealt, every action id with
the seat that took it, the players (specs, in seat order), the result and the
public summary of every scoring.  A file of records is JSON lines
(``games.jsonl``), written by ``hanamikoji-eval --save-games DIR``, by
``hanamikoji-play --record FILE`` and by the browser board's download::

    {"schema": "hanamikoji-record/1", "env_version": "0.1.0", "rules_version": 1, "round_limit": null,
     "players": ["heuristic", "search"], "decks": [[3, 0, 5, ...], ...],
     "actions": [[0, 2], [0, 4], ...],
     "result": {"winner": 1, "rewards": [-1.0, 1.0], "rounds": 3, "illegal": null},
     "round_summaries": [{"round": 1, "markers": [...], ...}, ...], "meta": {"seed": 0}}

``rules_version`` is the rules the game was played under
(:data:`hanamikoji_env.rules.RULES_VERSION`; records written before it was
recorded are rules 1, the only rules there were), and :func:`verify` refuses a
record of other rules.  ``result.winner`` is 0 or 1, -1 for a draw (round limit only), or null when an
illegal move ended the game (``env()``'s convention: the mover gets -1), and
then ``result.illegal`` is that ``[seat, action]``.  ``result`` itself is null for a
game stopped before its end (a person quitting ``hanamikoji-play``): the record
holds what was played, and :func:`verify` checks that it replays and does not end.

A record is untrusted input: :func:`parse_record` checks the schema, every type
and every bound before anything is replayed, and lines over 1 MiB are refused
unread.  :func:`verify` replays a record on the engine and raises
:class:`RecordError` on any mismatch (an illegal action, a deck left over or
missing, a different result or scoring).  From the command line::

    python -m hanamikoji_env.records verify runs/eval/games.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hanamikoji_env import engine
from hanamikoji_env._version import __version__
from hanamikoji_env.actions import NUM_ACTIONS, action_name
from hanamikoji_env.excerpt import short
from hanamikoji_env.files import check_untrusted, replace_atomically
from hanamikoji_env.rules import RULES_VERSION, Phase, State, returns, shuffled_deck, validate_deck

SCHEMA = "hanamikoji-record/1"
MAX_LINE_BYTES = 1 << 20
"""A longer line is refused without being parsed."""
MAX_ROUNDS = 1000
MAX_ACTIONS = 100_000
MAX_TEXT = 1000
MAX_META = 32
_KEYS = (
    "schema",
    "env_version",
    "round_limit",
    "players",
    "decks",
    "actions",
    "result",
    "round_summaries",
    "meta",
)
_RESULT_KEYS = ("winner", "rewards", "rounds", "illegal")
_SUMMARY_KEYS = ("round", "markers", "points", "geishas", "secrets", "placed")

Meta = dict[str, str | int | float | bool | None]


class RecordError(ValueError):
    """A record that is malformed or does not replay to what it says."""


@dataclass(frozen=True)
class GameRecord:
    """One game (see the module docstring for the JSON form)."""

    players: tuple[str, str]
    decks: tuple[tuple[int, ...], ...]
    actions: tuple[tuple[int, int], ...]
    """(seat, action id) of every decision, in order."""
    winner: int | None
    rewards: tuple[float, float]
    rounds: int
    round_summaries: tuple[dict[str, Any], ...]
    round_limit: int | None = None
    illegal: tuple[int, int] | None = None
    """The (seat, action) that ended the game as an illegal move, else None."""
    meta: Meta = field(default_factory=dict)
    env_version: str = __version__
    rules_version: int = RULES_VERSION
    finished: bool = True
    """False for a game stopped before its end (``result`` null in JSON; no winner, rewards 0)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "env_version": self.env_version,
            "rules_version": self.rules_version,
            "round_limit": self.round_limit,
            "players": list(self.players),
            "decks": [list(d) for d in self.decks],
            "actions": [list(a) for a in self.actions],
            "result": None
            if not self.finished
            else {
                "winner": self.winner,
                "rewards": list(self.rewards),
                "rounds": self.rounds,
                "illegal": None if self.illegal is None else list(self.illegal),
            },
            "round_summaries": [dict(s) for s in self.round_summaries],
            "meta": dict(self.meta),
        }

    def to_json(self) -> str:
        """The record as one line of JSON."""
        return json.dumps(self.to_dict(), separators=(",", ":"))


# ------------------------------------------------------------ building ---


def from_env(
    env: Any, players: tuple[str, str], meta: Meta | None = None, stopped: bool = False
) -> GameRecord:
    """The record of the game an AEC env (``raw_env`` or ``env()``) has just finished; with
    ``stopped``, of a game being abandoned before its end (what was played so far)."""
    history = env.history()
    if not history.over:
        if not stopped:
            raise RecordError("the game is not over yet: a record is made of a finished game")
        return GameRecord(
            players=players,
            decks=tuple(history.decks),
            actions=tuple(history.actions),
            winner=None,
            rewards=(0.0, 0.0),
            rounds=history.round,
            round_summaries=tuple(history.round_summaries),
            round_limit=env.round_limit,
            meta=_check_meta(dict(meta or {}), "meta"),
            finished=False,
        )
    return GameRecord(
        players=players,
        decks=tuple(history.decks),
        actions=tuple(history.actions),
        winner=history.winner,
        rewards=history.rewards,
        rounds=history.round,
        round_summaries=tuple(history.round_summaries),
        round_limit=env.round_limit,
        illegal=history.illegal,
        meta=_check_meta(dict(meta or {}), "meta"),
    )


# ------------------------------------------------------------- parsing ---


def long_game(decisions: int, seed: int = 0, tries: int = 400) -> GameRecord:
    """A legal game of random moves, ``random`` against ``random``, lasting about ``decisions``
    decisions: each round is played again from its deal (up to ``tries`` times) until it ends
    without a winner, and once the game holds ``decisions``, played to its end.  The longest
    records a replay accepts, for load tests (``benchmarks/serve_load.py``); 5,000 decisions take
    about 3 s."""
    from hanamikoji_env.aec import raw_env  # the env records itself through this module

    rng = np.random.default_rng(seed)
    decks = [shuffled_deck(rng)]
    state, actions = engine.new_game(decks[0]), []
    while state.phase != Phase.GAME_OVER:
        for _ in range(tries if len(actions) < decisions else 1):
            played, moves = state, []
            while played.phase not in (Phase.ROUND_OVER, Phase.GAME_OVER):
                action = int(rng.choice(engine.legal_actions(played)))
                moves.append(action)
                played = engine.apply(played, action)
            if played.phase == Phase.ROUND_OVER:
                break
        actions += moves
        state = played
        if state.phase == Phase.ROUND_OVER:
            decks.append(shuffled_deck(rng))
            state = engine.next_round(state, decks[-1])
    env = raw_env()
    env.reset(options={"decks": [list(d) for d in decks]})
    for action in actions:
        env.step(action)
    return from_env(env, ("random", "random"), {"source": "records.long_game", "seed": seed})


def parse_record(data: object, where: str = "record") -> GameRecord:
    """A :class:`GameRecord` from a parsed JSON object; every field is checked."""
    d = _mapping(data, where, None)
    rules_version = (
        1 if "rules_version" not in d else _int(d["rules_version"], f"{where}.rules_version", 1, 1000)
    )
    d = _mapping({k: v for k, v in d.items() if k != "rules_version"}, where, _KEYS)
    if d["schema"] != SCHEMA:
        raise RecordError(f"{where}: schema must be {SCHEMA!r}, got {short(d['schema'])}")
    env_version = _text(d["env_version"], f"{where}.env_version")
    round_limit = d["round_limit"]
    if round_limit is not None:
        round_limit = _int(round_limit, f"{where}.round_limit", 1, MAX_ROUNDS)
    players = _list(d["players"], f"{where}.players", 2, 2)
    names = (_text(players[0], f"{where}.players[0]"), _text(players[1], f"{where}.players[1]"))
    decks = []
    for i, deck in enumerate(_list(d["decks"], f"{where}.decks", 1, MAX_ROUNDS)):
        try:
            decks.append(validate_deck(deck))
        except ValueError as e:
            raise RecordError(f"{where}.decks[{i}] (round {i + 1}): {e}") from None
    actions = []
    for i, move in enumerate(_list(d["actions"], f"{where}.actions", 0, MAX_ACTIONS)):
        actions.append(_move(move, f"{where}.actions[{i}]"))
    if d["result"] is None:  # a game stopped before its end
        r = {"winner": None, "rewards": [0, 0], "rounds": len(decks), "illegal": None}
    else:
        r = _mapping(d["result"], f"{where}.result", _RESULT_KEYS)
    winner = r["winner"]
    if winner is not None:
        winner = _int(winner, f"{where}.result.winner", -1, 1)
    rewards = _list(r["rewards"], f"{where}.result.rewards", 2, 2)
    for i, x in enumerate(rewards):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or x not in (-1, 0, 1):
            raise RecordError(f"{where}.result.rewards[{i}] must be -1, 0 or 1, got {short(x)}")
    rounds = _int(r["rounds"], f"{where}.result.rounds", 1, MAX_ROUNDS)
    illegal = None if r["illegal"] is None else _move(r["illegal"], f"{where}.result.illegal")
    summaries = [
        _summary(s, f"{where}.round_summaries[{i}]")
        for i, s in enumerate(_list(d["round_summaries"], f"{where}.round_summaries", 0, MAX_ROUNDS))
    ]
    meta = _check_meta(_mapping(d["meta"], f"{where}.meta", None), f"{where}.meta")
    return GameRecord(
        players=names,
        decks=tuple(decks),
        actions=tuple(actions),
        winner=winner,
        rewards=(float(rewards[0]), float(rewards[1])),
        rounds=rounds,
        round_summaries=tuple(summaries),
        round_limit=round_limit,
        illegal=illegal,
        meta=meta,
        env_version=env_version,
        rules_version=rules_version,
        finished=d["result"] is not None,
    )


def parse_line(line: str | bytes, where: str = "record") -> GameRecord:
    """A record from one line of JSON (at most :data:`MAX_LINE_BYTES`)."""
    if len(line) > MAX_LINE_BYTES:
        raise RecordError(f"{where}: longer than {MAX_LINE_BYTES} bytes; a game record is far smaller")
    try:
        data = json.loads(line, parse_constant=_refuse_constant, parse_int=_json_int)
    except RecordError as e:
        raise RecordError(f"{where}: {e}") from None
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise RecordError(f"{where}: not valid JSON ({short(str(e))})") from None
    return parse_record(data, where)


def read_records(path: str | os.PathLike[str]) -> Iterator[GameRecord]:
    """The records of a JSON-lines file, one by one; errors name the file and line.  The file may
    be of any size (it is read a line at a time, each at most :data:`MAX_LINE_BYTES`), but must be
    a regular file: a pipe or a device is refused unread."""
    path = check_untrusted(path, "game records file", None, RecordError)
    with path.open("rb") as f:
        number = 0
        while True:
            line = f.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            number += 1
            where = f"{path}:{number}"
            if len(line) > MAX_LINE_BYTES:
                raise RecordError(
                    f"{where}: longer than {MAX_LINE_BYTES} bytes; a game record is far smaller"
                )
            if line.strip():
                yield parse_line(line, where)


def write_records(path: str | os.PathLike[str], records: Iterable[GameRecord]) -> int:
    """Write records as JSON lines, atomically; returns how many."""
    return write_lines(path, (r.to_json() for r in records))


def write_lines(path: str | os.PathLike[str], lines: Iterable[str]) -> int:
    """Write JSON lines atomically (:func:`hanamikoji_env.files.replace_atomically`); returns how
    many."""
    count = 0

    def write(tmp: Path) -> None:
        nonlocal count
        with open(tmp, "w", encoding="utf-8") as f:
            for line in lines:
                f.write(line + "\n")
                count += 1

    replace_atomically(path, write)
    return count


# ------------------------------------------------------------ replaying ---


def replay(record: GameRecord, where: str = "record") -> list[State]:
    """Every position of the game, replayed on the engine of record: the first deal, then the
    position after each action (a new round's deal is part of the action that ended the last).
    Raises :class:`RecordError` at the first action that cannot be played."""
    decks = iter(record.decks[1:])
    state = engine.new_game(record.decks[0], record.round_limit)
    states = [state]
    for i, (seat, action) in enumerate(record.actions):
        if state.phase == Phase.GAME_OVER:
            raise RecordError(
                f"{where}: the game ended before action {i}; {len(record.actions) - i} left over"
            )
        if seat != state.to_move:
            raise RecordError(
                f"{where}: action {i} is taken by seat {seat}, but seat {state.to_move} is to move"
            )
        try:
            after = engine.apply(state, action)  # checks legality itself
        except ValueError:
            raise RecordError(
                f"{where}: action {i} ({action_name(action)}) is illegal in phase {state.phase.name}; "
                f"legal: {engine.legal_actions(state)}"
            ) from None
        state = after
        if state.phase == Phase.ROUND_OVER:
            try:
                deck = next(decks)
            except StopIteration:
                raise RecordError(
                    f"{where}: round {state.round} ended after action {i} but the record has no deck "
                    f"for round {state.round + 1}"
                ) from None
            state = engine.next_round(state, deck)
        states.append(state)
    left = sum(1 for _ in decks)
    if left:
        raise RecordError(
            f"{where}: {counted(left, 'deck')} left over: the game used {counted(state.round, 'round')}"
        )
    return states


def verify(record: GameRecord, where: str = "record") -> None:
    """Replay ``record`` and raise :class:`RecordError` unless it reaches exactly its recorded result
    under these rules (:data:`~hanamikoji_env.rules.RULES_VERSION`)."""
    if record.rules_version != RULES_VERSION:
        raise RecordError(
            f"{where}: played under rules version {record.rules_version}; this package plays version "
            f"{RULES_VERSION}, so it cannot verify it"
        )
    states = replay(record, where)
    final = states[-1]
    summaries = [
        t.last_round.as_dict()  # type: ignore[union-attr]
        for s, t in itertools.pairwise(states)
        if t.last_round is not None and t.last_round != s.last_round
    ]
    if not record.finished:
        if final.phase == Phase.GAME_OVER:
            raise RecordError(f"{where}: the record says the game was stopped, but its actions end it")
        expected_winner, expected_rewards, expected_rounds = None, (0.0, 0.0), final.round
    elif record.illegal is not None:
        seat, action = record.illegal
        if final.phase == Phase.GAME_OVER or seat != final.to_move or engine.legal_mask(final)[action]:
            raise RecordError(
                f"{where}: the game is said to end with seat {seat}'s illegal action {action}, but that "
                "action is legal there (or not that seat's move)"
            )
        expected_winner, expected_rewards = None, (-1.0, 0.0) if seat == 0 else (0.0, -1.0)
        expected_rounds = final.round
    else:
        if final.phase != Phase.GAME_OVER:
            raise RecordError(f"{where}: the actions end before the game does (phase {final.phase.name})")
        expected_winner, expected_rewards = final.winner, returns(final)
        expected_rounds = final.round
    got = (record.winner, record.rewards, record.rounds)
    if got != (expected_winner, expected_rewards, expected_rounds):
        raise RecordError(
            f"{where}: the record says winner {record.winner}, rewards {list(record.rewards)}, "
            f"{counted(record.rounds, 'round')}; the replay gives winner {expected_winner}, rewards "
            f"{list(expected_rewards)}, {counted(expected_rounds, 'round')}"
        )
    if list(record.round_summaries) != summaries:
        for i, (a, b) in enumerate(zip(record.round_summaries, summaries, strict=False)):
            if a != b:
                raise RecordError(f"{where}: round_summaries[{i}] is {a}; the replay scores {b}")
        raise RecordError(
            f"{where}: the record has {counted(len(record.round_summaries), 'round summary')}; the replay scores "
            f"{counted(len(summaries), 'round')}"
        )


# ------------------------------------------------------------- checks ---


def _refuse_constant(name: str) -> None:
    raise RecordError(f"{name} is not allowed in a game record")


def _json_int(text: str) -> int:
    if len(text) > 20:  # no field of a record needs more; Python would refuse past 4300 digits anyway
        raise RecordError(f"a number of {len(text)} digits is not allowed in a game record")
    return int(text)


def _mapping(value: object, where: str, keys: tuple[str, ...] | None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(f"{where} must be a JSON object, got {type(value).__name__}")
    if keys is not None:
        missing = [k for k in keys if k not in value]
        unknown = [k for k in value if k not in keys]
        problems = [f"missing keys {missing}"] if missing else []
        if unknown:
            problems.append(f"unknown keys {[short(k) for k in unknown][:5]}")
        if problems:
            raise RecordError(f"{where}: {', '.join(problems)}")
    return value


def _list(value: object, where: str, low: int, high: int) -> list[Any]:
    if not isinstance(value, list):
        raise RecordError(f"{where} must be a JSON list, got {type(value).__name__}")
    if not low <= len(value) <= high:
        raise RecordError(f"{where} must hold {low}..{high} entries, got {len(value)}")
    return value


def _int(value: object, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RecordError(f"{where} must be an int in [{low}, {high}], got {short(value)}")
    return value


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise RecordError(f"{where} must be a string of at most {MAX_TEXT} characters, got {short(value)}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ("\ud800" in JSON): no file or reply could hold it
        raise RecordError(f"{where} must be Unicode text, got a lone surrogate") from None
    return value


def _move(value: object, where: str) -> tuple[int, int]:
    pair = _list(value, where, 2, 2)
    return _int(pair[0], f"{where} seat", 0, 1), _int(pair[1], f"{where} action", 0, NUM_ACTIONS - 1)


def _summary(value: object, where: str) -> dict[str, Any]:
    s = _mapping(value, where, _SUMMARY_KEYS)
    _int(s["round"], f"{where}.round", 1, MAX_ROUNDS)
    for key, size in (("markers", 7), ("points", 2), ("geishas", 2), ("secrets", 2)):
        for i, x in enumerate(_list(s[key], f"{where}.{key}", size, size)):
            _int(x, f"{where}.{key}[{i}]", -1, 21)
    for i, side in enumerate(_list(s["placed"], f"{where}.placed", 2, 2)):
        for j, x in enumerate(_list(side, f"{where}.placed[{i}]", 7, 7)):
            _int(x, f"{where}.placed[{i}][{j}]", 0, 5)
    return s


def _check_meta(meta: dict[str, Any], where: str) -> Meta:
    if len(meta) > MAX_META:
        raise RecordError(f"{where} holds at most {MAX_META} entries, got {len(meta)}")
    for key, value in meta.items():
        _text(key, f"{where} key")
        if isinstance(value, str):
            _text(value, f"{where}[{key!r}]")
        elif value is not None and not isinstance(value, (bool, int, float)):
            raise RecordError(
                f"{where}[{short(key)}] must be a string, number, bool or null, got {short(value)}"
            )
        elif isinstance(value, float) and not math.isfinite(value):
            raise RecordError(f"{where}[{short(key)}] must be finite, got {value}")
        elif isinstance(value, int) and abs(value) >= 1 << 63:
            raise RecordError(f"{where}[{short(key)}] is out of range: {short(value)}")
    return meta


# ------------------------------------------------------------------ CLI ---


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m hanamikoji_env.records", description="Check Hanamikoji game records."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="replay every game on the engine; exit 1 at the first mismatch")
    v.add_argument("files", nargs="+", type=Path, help="JSON-lines record files")
    v.add_argument("--no-progress", action="store_true", help="no progress bar (none off a terminal either)")
    args = parser.parse_args(argv)
    for path in args.files:
        count = 0
        try:
            with _progress(path, disable=True if args.no_progress else None) as bar:
                for record in read_records(path):
                    count += 1
                    verify(record, f"{path}: game {count}")
                    bar.update()
        except RecordError as e:
            print(f"error: {e}", file=sys.stderr)
            raise SystemExit(1) from None
        except OSError as e:
            print(f"error: {path}: {e.strerror or e}", file=sys.stderr)
            raise SystemExit(1) from None
        if count == 0:
            print(f"error: {path}: no game records in the file", file=sys.stderr)
            raise SystemExit(1)
        print(f"{path}: {count} game(s) verified")


def _progress(path: Path, disable: bool | None) -> Any:
    """A bar over the file's games (one a line, counted first: a second against the replays'
    minutes), on stderr and only on a terminal unless ``disable`` is False."""
    from tqdm import tqdm

    lines = 0
    if disable is not True and path.is_file():
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                lines += chunk.count(b"\n")
    return tqdm(total=lines or None, unit="game", desc=path.name, disable=disable, leave=False)


if __name__ == "__main__":
    main()


def counted(count: int, noun: str) -> str:
    """``1 round``, ``2 rounds``, ``2 round summaries``: a count with its noun in the right number
    (the boards' words too)."""
    if count == 1:
        return f"{count} {noun}"
    return f"{count} {noun[:-1]}ies" if noun.endswith("y") else f"{count} {noun}s"
