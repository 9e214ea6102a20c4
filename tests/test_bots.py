"""Bots: legal moves only, no peeking, determinism, and a clear margin of strength."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np
import pytest
import torch
from helpers import extra, play_swapped, random_action

from hanamikoji_env import env, raw_env, rules
from hanamikoji_env.actions import SECRET, TRADEOFF
from hanamikoji_env.bots import HeuristicBot, RandomBot, SearchBot
from hanamikoji_env.bots.psearch import PolicySearchBot
from hanamikoji_env.bots.rollout import RolloutBot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.nn import PolicyNet
from hanamikoji_env.observation import encode
from hanamikoji_env.tournament import run_tournament

FAST_SEARCH = {"samples": 24, "candidates": 4}
EVERY_BOT = [
    "random",
    "heuristic",
    "search",
    pytest.param("os-ismcts", marks=pytest.mark.slow),  # searches are slow in Python
    pytest.param("rollout", marks=pytest.mark.slow),
    "psearch",
]


def tiny_rollout_bot(seed: int) -> RolloutBot:
    torch.manual_seed(0)  # the same untrained policy every time
    return RolloutBot(PolicyNet(hidden=16, layers=1), seed, samples=4)


def tiny_psearch_bot(seed: int) -> PolicySearchBot:
    torch.manual_seed(0)
    return PolicySearchBot(PolicyNet(hidden=16, layers=1), seed, samples=4, candidates=3)


@pytest.fixture
def unguarded(monkeypatch):
    """The compiled bots' own legality guard off: their kernels' raw choices come out."""
    for module in ("heuristic", "search"):
        monkeypatch.setattr(
            f"hanamikoji_env.bots.{module}.checked_actions", lambda actions, mask, bot: actions
        )


def make(name: str, seed: int = 0):
    return {
        "random": lambda: RandomBot(seed),
        "heuristic": lambda: HeuristicBot(seed),
        "search": lambda: SearchBot(seed, **FAST_SEARCH),
        "rollout": lambda: tiny_rollout_bot(seed),
        "psearch": lambda: tiny_psearch_bot(seed),
        "os-ismcts": lambda: openspiel_bot(seed),
    }[name]()


def openspiel_bot(seed: int):
    extra("pyspiel", reason="the openspiel extra is not installed")
    from hanamikoji_env.bots.openspiel import OpenSpielBot

    return OpenSpielBot("ismcts", seed, sims=4)


@pytest.mark.parametrize(
    ("name", "positions"),
    [
        ("random", 600),
        ("heuristic", 600),
        ("search", 300),
        ("rollout", 30),
        ("psearch", 60),
        pytest.param("os-ismcts", 40, marks=pytest.mark.slow),
        pytest.param("random", 4000, marks=pytest.mark.slow),
        pytest.param("heuristic", 4000, marks=pytest.mark.slow),
        pytest.param("search", 1500, marks=pytest.mark.slow),
        pytest.param("rollout", 600, marks=pytest.mark.slow),
        pytest.param("psearch", 600, marks=pytest.mark.slow),
    ],
)
def test_bots_only_play_legal_actions(name: str, positions: int, unguarded) -> None:
    """Random positions from random games (every phase), both seats; the bot answers each with
    its own choice (its guards off), and the env (``raw_env``: an illegal move raises) judges it."""
    bot = make(name)
    rng = np.random.default_rng(1)
    e = raw_env()
    e.reset(seed=1)
    asked = 0
    phases = set()
    while asked < positions:
        e.reset()
        bot.reset()
        for _agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            a = int(bot._act(obs["observation"], obs["action_mask"]))
            asked += 1
            phases.add(e.game.phase)
            # continue with the bot's move or a random one, to reach varied positions
            if rng.random() < 0.5:
                e.step(a)
            else:
                rules.apply(e.game, a)  # the rules judge the move not played
                e.step(random_action(obs, rng))
    assert len(phases) == 5


def test_search_bot_from_mid_turn_positions(unguarded) -> None:
    """Handed a position in the middle of someone's turn, the search bot still plays legally."""
    rng = np.random.default_rng(3)
    bot = SearchBot(0, **FAST_SEARCH)
    checked = 0
    while checked < 300:
        state = rules.new_game(rules.shuffled_deck(rng))
        while state.phase < rules.Phase.ROUND_OVER:
            mask = np.array(rules.legal_mask(state), dtype=np.int8)
            if rng.random() < 0.3:
                bot.reset()  # forget any plan: plan from this position
                a = int(bot._act(encode(state, state.to_move), mask))  # its own choice, unguarded
                rules.apply(state, a)  # raises on an illegal move
                checked += 1
            state = rules.apply(state, int(rng.choice(np.flatnonzero(mask))))


def test_bot_input_errors() -> None:
    bot = HeuristicBot(0)
    with pytest.raises(ValueError, match="observation dict"):
        bot.act(np.zeros(109))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not on move"):
        bot.act({"observation": np.zeros(109, np.float32), "action_mask": np.zeros(23, np.int8)})
    with pytest.raises(ValueError, match="samples"):
        SearchBot(0, samples=0)


@pytest.mark.parametrize("name", EVERY_BOT)
@pytest.mark.parametrize(
    ("token", "draw"), [(TRADEOFF, False), pytest.param(SECRET, True, marks=pytest.mark.slow)]
)
def test_bots_do_not_peek(name: str, token: int, draw: bool) -> None:
    """Deals that differ only in cards the bot's player cannot know: same seed, same actions."""
    rng = np.random.default_rng(7 + token)
    for game in range(12 if name in ("search", "rollout", "psearch") else 30):
        observer = game % 2
        bots = [make(name, seed=game), make(name, seed=game)]
        a, b = play_swapped(observer, token, draw, game, rng, [bot.act for bot in bots])
        actions_a = [s.action for s in a if s.action is not None]
        actions_b = [s.action for s in b if s.action is not None]
        assert actions_a == actions_b and len(actions_a) >= 15


def test_the_peek_check_catches_a_bot_that_reads_what_its_player_cannot_know(monkeypatch) -> None:
    """The check above, fed a bot that does peek: it plays by the cards the opponent holds, read
    from the env of its deal (as a bot holding a reference to its env could), so its actions
    differ between the two deals and the same comparison fails."""
    import helpers

    envs: list[raw_env] = []

    class Recorded(raw_env):  # the harness's envs, deal A's first
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            envs.append(self)

    monkeypatch.setattr(helpers, "raw_env", Recorded)
    rng = np.random.default_rng(7 + TRADEOFF)
    caught = 0
    for game in range(12):
        observer = game % 2
        envs.clear()

        def peeking(k: int, observer: int = observer):
            def act(obs: dict) -> int:
                g = envs[k].game  # everything hidden from the observer, digested
                hidden = (
                    *g.hands[1 - observer],
                    *g.tradeoffs[1 - observer],
                    *g.secrets,
                    g.removed,
                    *g.draw_pile,
                )
                legal = np.flatnonzero(obs["action_mask"])
                return int(legal[sum((i + 1) * x for i, x in enumerate(hidden)) % len(legal)])

            return act

        a, b = play_swapped(observer, TRADEOFF, False, game, rng, [peeking(0), peeking(1)])
        caught += [s.action for s in a if s.action is not None] != [
            s.action for s in b if s.action is not None
        ]
    assert caught >= 8, caught  # 9 of 12 here; a hidden card may change no choice


@pytest.mark.parametrize(
    "name", [b for b in EVERY_BOT if b != "psearch"] + [pytest.param("psearch", marks=pytest.mark.slow)]
)
def test_bots_are_deterministic_for_a_seed(name: str) -> None:
    def game(seed: int) -> list[int]:
        e = env()
        e.reset(seed=5)
        bots = {"player_0": make(name, seed), "player_1": make(name, seed + 1)}
        out = []
        for agent in e.agent_iter():
            obs, _, term, _, _ = e.last()
            a = None if term else bots[agent].act(obs)
            out.append(a)
            e.step(a)
        return out

    assert game(3) == game(3)
    if name != "heuristic":  # the heuristic draws no random numbers
        assert game(3) != game(4)


def test_random_bot_batch() -> None:
    from hanamikoji_env.vector import BatchEngine

    v = BatchEngine(64, seed=0)
    obs, mask, _ = v.reset()
    bot = RandomBot(0)
    for _ in range(50):
        a = bot.act_batch(obs, mask)
        assert mask[np.arange(64), a].all()
        obs, mask, *_ = v.step(a)


def test_heuristic_plays_the_moves_it_always_played() -> None:
    """HeuristicBot is the baseline every win rate in MODEL_CARD.md is measured against: a
    refactor must not change one move.  40 games against RandomBot, the heuristic's 1003 moves.
    Re-recorded once, when the heuristic was compiled and its ties went from random to the
    first in enumeration order (34 of the moves changed, all card choices among equal scores;
    benchmarks/compiled_strength.py measured its strength unchanged); a deliberate change of the
    strategy re-records this digest and re-measures the numbers measured against it."""
    moves = []
    for g in range(40):
        e = env()
        e.reset(seed=100 + g)
        bots = {f"player_{g % 2}": HeuristicBot(g), f"player_{1 - g % 2}": RandomBot(g)}
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            a = None if term or trunc else bots[agent].act(obs)
            if a is not None and isinstance(bots[agent], HeuristicBot):
                moves.append(a)
            e.step(a)
    assert len(moves) == 1003
    assert hashlib.sha256(bytes(moves)).hexdigest() == (
        "2acbb740fa16d4a88d9ae671e4cdecefaf4b7151ac7496df3309fa223df4ae1b"
    )


@pytest.mark.slow
def test_heuristic_beats_random_by_a_clear_margin() -> None:
    """200 mirrored games (100 deals, both seatings): Wilson lower bound above 60%."""
    results = run_tournament(
        [parse_player("heuristic"), parse_player("random")], 200, seed=11, workers=2, progress=False
    )
    pair = results["pairs"][0]
    assert pair["games"] == 200 and pair["ci95"][0] > 0.60, pair


@pytest.mark.slow
def test_search_beats_heuristic_and_random() -> None:
    """Default-budget search: 60 mirrored games each, Wilson lower bounds above 50% / 60%."""
    players = [parse_player("search"), parse_player("heuristic"), parse_player("random")]
    results = run_tournament(players, 60, seed=12, workers=2, progress=False)
    by_pair = {(r["a"], r["b"]): r for r in results["pairs"]}
    assert by_pair[("search", "random")]["ci95"][0] > 0.60, by_pair
    assert by_pair[("search", "heuristic")]["ci95"][0] > 0.50, by_pair  # 0.575 (win rate 0.70) measured


@pytest.mark.slow  # a fresh interpreter that imports torch: 3 s
def test_torch_bots_are_exported_lazily_from_the_bots_package() -> None:
    code = (
        "import sys\n"
        "import hanamikoji_env.bots as b\n"
        "assert 'torch' not in sys.modules, 'import hanamikoji_env.bots pulled in torch'\n"
        "from hanamikoji_env.bots import PolicyBot, PolicySearchBot, RolloutBot, SB3Bot\n"
        "from hanamikoji_env.bots.policy import PolicyBot as P\n"
        "from hanamikoji_env.bots.rollout import RolloutBot as R\n"
        "from hanamikoji_env.bots.sb3 import SB3Bot as S\n"
        "from hanamikoji_env.bots.psearch import PolicySearchBot as Q\n"
        "assert (PolicyBot, RolloutBot, SB3Bot, PolicySearchBot) == (P, R, S, Q)\n"
        "assert {'PolicyBot', 'RolloutBot', 'SB3Bot', 'PolicySearchBot'} <= set(b.__all__)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    with pytest.raises(AttributeError, match="no attribute 'NoSuchBot'"):
        _ = __import__("hanamikoji_env.bots", fromlist=["x"]).NoSuchBot


@pytest.mark.parametrize(
    "name", ["random", "heuristic", "search", pytest.param("psearch", marks=pytest.mark.slow)]
)
def test_one_bot_plays_interleaved_games_like_one_bot_per_game(name: str) -> None:
    """With game_state/set_game_state one bot object can serve many games at once (a trainer's
    opponent): it plays each exactly as a bot of its own would."""
    shared, own = make(name, 0), [make(name, 0), make(name, 0)]
    envs = [env(), env()]
    states: list[tuple[int, ...]] = [(), ()]
    for k, e in enumerate(envs):
        e.reset(seed=30 + k)
    rng = np.random.default_rng(0)
    for step in range(400):
        k = step % 2
        e = envs[k]
        if not e.agents:
            continue
        obs, _, term, _, _ = e.last()
        if term:
            e.step(None)
            continue
        if e.agent_selection == "player_1":
            e.step(random_action(obs, rng))
            continue
        for bot in (shared, own[k]):
            bot.seed(1000 + step)  # the same draws for both
        shared.set_game_state(states[k])
        action = shared.act(obs)
        states[k] = shared.game_state()
        assert action == own[k].act(obs) and states[k] == own[k].game_state()
        e.step(action)
    if name == "search":
        assert any(states) or shared.plan is not None


def test_game_state_round_trip_and_bad_states() -> None:
    bot = SearchBot(0, **FAST_SEARCH)
    e = env()
    e.reset(seed=2)
    bot.act(e.last()[0])  # a token decision: the bot plans its turn
    state = bot.game_state()
    assert len(state) >= 4 and state[:2] == (1, 0)
    other = SearchBot(5, **FAST_SEARCH)
    other.set_game_state(state)
    assert other.game_state() == state and other.plan == bot.plan
    bot.reset()
    assert bot.game_state() == ()
    with pytest.raises(ValueError, match="round, turn, token"):
        bot.set_game_state((1, 2))
    with pytest.raises(ValueError, match="keeps no game state"):
        RandomBot(0).set_game_state((1,))


def test_every_int_option_declares_its_bounds_and_no_other_option_does() -> None:
    from hanamikoji_env.bots.spec import BOTS, bot_class

    for name in BOTS:
        for key, option in bot_class(name).options.items():
            bounded = option.low is not None and option.high is not None and option.low <= option.high
            assert bounded == (option.type is int), (name, key, option)
