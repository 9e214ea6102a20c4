"""The PettingZoo AEC environment: compliance, errors, copying, determinism, render."""

from __future__ import annotations

import ast
import copy
import hashlib
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from helpers import DECK_1, DECK_2, random_action, round_1_script
from pettingzoo.test import api_test, render_test, seed_test

from hanamikoji_env import env, raw_env
from hanamikoji_env.observation import OBS_SIZE, STATE_SIZE


@pytest.mark.parametrize("make", [env, raw_env])
def test_pettingzoo_api_test(make) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(make(), num_cycles=1000)  # its own reset passes options={"options": 1}
    ours = [w for w in caught if "hanamikoji" in str(w.filename) or "option" in str(w.message)]
    assert not ours, [str(w.message) for w in ours]


@pytest.mark.parametrize("make", [env, raw_env])
def test_pettingzoo_seed_test(make) -> None:
    seed_test(make, num_cycles=500)


def test_pettingzoo_render_test() -> None:
    render_test(env)


def test_registered_with_pettingzoo() -> None:
    from pettingzoo import make

    e = make("aec", "hanamikoji/Hanamikoji-v0", round_limit=2)
    assert isinstance(e, raw_env) and e.round_limit == 2 and e.illegal_action == "terminate"


def play_random(e: raw_env, seed: int, max_steps: int | None = None) -> list[str]:
    """Random masked play; returns a hash per step of everything the loop sees."""
    rng = np.random.default_rng(seed)
    trace = []
    for i, agent in enumerate(e.agent_iter()):
        obs, reward, term, trunc, info = e.last()
        h = hashlib.sha1(obs["observation"].tobytes() + obs["action_mask"].tobytes())
        h.update(repr((agent, reward, term, trunc, sorted(info.items()))).encode())
        trace.append(h.hexdigest())
        e.step(None if term or trunc else random_action(obs, rng))
        if max_steps is not None and i + 1 >= max_steps:
            break
    return trace


def test_same_seed_same_game() -> None:
    traces = []
    for _ in range(2):
        e = env()
        e.reset(seed=123)
        traces.append(play_random(e, seed=5))
    assert traces[0] == traces[1]
    e = env()
    e.reset(seed=124)
    assert play_random(e, seed=5) != traces[0]


@pytest.mark.slow
def test_same_seed_same_game_in_a_fresh_process() -> None:
    code = (
        "import sys; sys.path.insert(0, 'tests')\n"
        "from test_aec import play_random\n"
        "from hanamikoji_env import env\n"
        "e = env(); e.reset(seed=321)\n"
        "print(','.join(play_random(e, seed=9)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    e = env()
    e.reset(seed=321)
    assert out.stdout.strip().split(",") == play_random(e, seed=9)


def test_reset_without_seed_continues_the_generator() -> None:
    e = env()
    e.reset(seed=3)
    first = e.game
    e.reset()
    assert e.game != first  # a new deal, drawn from the same generator
    e2 = env()
    e2.reset(seed=3)
    e2.reset()
    assert e2.game == e.game


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
@pytest.mark.parametrize("steps", [0, 17, 40, 95])
def test_copy_mid_game_continues_identically(how: str, steps: int) -> None:
    e = env(render_mode="ansi")
    e.reset(seed=11)
    play_random(e, seed=2, max_steps=steps) if steps else None
    twin = pickle.loads(pickle.dumps(e)) if how == "pickle" else copy.deepcopy(e)
    assert twin.render() == e.render()
    # the copies go on identically, including later reshuffles from the copied generator
    assert play_random(twin, seed=99) == play_random(e, seed=99)


def test_rewards_and_termination() -> None:
    e = env()
    e.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        e.reset()
        total = {"player_0": 0.0, "player_1": 0.0}
        finished = []
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            total[agent] += reward
            if term or trunc:
                finished.append(agent)
                assert not obs["action_mask"].any()
                e.step(None)
            else:
                assert reward == 0
                e.step(random_action(obs, rng))
        assert sorted(finished) == ["player_0", "player_1"]
        assert sorted(total.values()) == [-1.0, 1.0]  # no round limit: always a winner
        assert e.agents == []


def test_agent_off_move_gets_zero_mask() -> None:
    e = env()
    e.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(200):
        if not e.agents or e.terminations[e.agent_selection]:
            break
        on, off = e.agent_selection, ({"player_0", "player_1"} - {e.agent_selection}).pop()
        assert e.observe(on)["action_mask"].any()
        assert not e.observe(off)["action_mask"].any()
        e.step(random_action(e.observe(on), rng))


def test_round_summary_in_infos_after_scoring() -> None:
    e = env()
    e.reset(options={"decks": [DECK_1, DECK_2]})
    for a in round_1_script()[:-2]:
        e.step(a)
        assert e.infos == {"player_0": {}, "player_1": {}}
    for a in round_1_script()[-2:]:
        e.step(a)
    for agent in ("player_0", "player_1"):
        assert e.infos[agent]["round_summary"]["round"] == 1
        assert e.infos[agent]["round_summary"]["secrets"] == [6, 1]
    assert e.last()[4] == e.infos["player_1"]


def test_illegal_action_raw_env_raises_and_changes_nothing() -> None:
    e = raw_env()
    e.reset(seed=0, options={"decks": [DECK_1]})
    before = (e.game, e.agent_selection, dict(e.rewards), dict(e._cumulative_rewards))
    with pytest.raises(
        ValueError, match=r"illegal action 4 \(card:geisha0\) for player_0.*legal action ids: \[0, 1, 2, 3\]"
    ):
        e.step(4)
    assert (e.game, e.agent_selection, dict(e.rewards), dict(e._cumulative_rewards)) == before
    e.step(0)  # the game goes on normally


def test_illegal_action_env_ends_game_with_minus_one_for_mover() -> None:
    e = env()
    e.reset(seed=0, options={"decks": [DECK_1]})
    e.step(0)
    e.step(4 + 6)
    assert e.agent_selection == "player_1"
    with pytest.warns(UserWarning, match="illegal action 4"):
        e.step(4)  # player_1 must choose a token
    assert e.terminations == {"player_0": True, "player_1": True}
    assert e.last()[1] == -1
    e.step(None)
    assert e.agent_selection == "player_0" and e.last()[1] == 0 and e.last()[2]
    assert not e.observe("player_0")["action_mask"].any()
    e.step(None)
    assert e.agents == []


@pytest.mark.parametrize("make", [env, raw_env])
@pytest.mark.parametrize(
    ("action", "error", "message"),
    [
        (23, ValueError, "out of range"),
        (-1, ValueError, "out of range"),
        (None, ValueError, "only valid for a terminated agent"),
        (1.0, TypeError, "must be an int"),
        ("1", TypeError, "must be an int"),
        (True, TypeError, "must be an int"),
        (np.array([1, 2]), TypeError, "must be an int"),
    ],
)
def test_bad_action_values_are_clear_errors(make, action, error, message) -> None:
    e = make()
    e.reset(seed=0)
    before = e.game
    with pytest.raises(error, match=message):
        e.step(action)
    assert e.game == before and not any(e.terminations.values())


def test_numpy_integer_actions_are_accepted() -> None:
    e = raw_env()
    e.reset(seed=0, options={"decks": [DECK_1]})
    e.step(np.int64(0))
    e.step(np.array(4 + 6, dtype=np.int32))
    assert e.agent_selection == "player_1"


def test_errors_before_reset() -> None:
    e = env()
    for call in (lambda: e.step(0), lambda: e.observe("player_0"), e.state, e.agent_iter):
        with pytest.raises(RuntimeError, match=r"reset\(\) must be called before"):
            call()
    with pytest.raises(AttributeError, match="before reset"):
        _ = e.agent_selection
    with pytest.raises(AttributeError, match="before reset"):
        e.last()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"render_mode": "rgb"}, "render_mode"),
        ({"round_limit": 0}, "round_limit"),
        ({"round_limit": 2.5}, "round_limit"),
        ({"illegal_action": "ignore"}, "illegal_action"),
    ],
)
def test_bad_constructor_arguments(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        raw_env(**kwargs)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"decks": [DECK_1[:-1]]}, r"options\['decks'\]\[0\] \(round 1\): a deck must hold 21 cards, got 20"),
        ({"decks": [DECK_1, [0] * 21]}, r"options\['decks'\]\[1\] \(round 2\).*got counts"),
        ({"decks": [[*DECK_1[:-1], 9]]}, r"deck\[20\] = 9 is not a geisha id"),
        ({"decks": 5}, "must be a list of decks"),
        ("decks", "options must be a dict"),
    ],
)
def test_bad_decks_are_value_errors(options, message) -> None:
    e = env()
    with pytest.raises(ValueError, match=message):
        e.reset(seed=0, options=options)


def test_bad_seed_and_unknown_option() -> None:
    e = env()
    with pytest.raises(ValueError, match="seed"):
        e.reset(seed=-1)
    with pytest.raises(ValueError, match="seed"):
        e.reset(seed="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown reset option 'deck': did you mean 'decks'"):
        e.reset(seed=0, options={"deck": [DECK_1]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e.reset(seed=0, options={"options": 1, "render": True})  # other keys: ignored, like PettingZoo


@pytest.mark.parametrize(
    ("seed", "options"), [(-1, None), (5, {"decks": [[0] * 21]}), (5, {"deck": [DECK_1]})]
)
def test_a_rejected_reset_changes_nothing(seed, options) -> None:
    e, twin = env(), env()
    for x in (e, twin):
        x.reset(seed=1)
        x.step(0)
    with pytest.raises(ValueError):
        e.reset(seed=seed, options=options)
    assert e.game == twin.game and e.agent_selection == twin.agent_selection
    e.reset()
    twin.reset()
    assert e.game == twin.game  # the next unseeded reset deals what it would have dealt


def test_each_agent_gets_its_own_round_summary() -> None:
    e = env()
    e.reset(options={"decks": [DECK_1, DECK_2]})
    for a in round_1_script():
        e.step(a)
    e.infos["player_0"]["round_summary"]["points"].append(99)
    e.infos["player_0"]["round_summary"]["round"] = 7
    assert e.infos["player_1"]["round_summary"]["round"] == 1
    assert 99 not in e.infos["player_1"]["round_summary"]["points"]


def test_unknown_agent_is_an_error() -> None:
    e = env()
    e.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent 'player_2'"):
        e.observe("player_2")


def test_spaces_and_state() -> None:
    e = env()
    e.reset(seed=0, options={"decks": [DECK_1]})
    space = e.observation_space("player_0")
    assert space["observation"].shape == (OBS_SIZE,) and space["action_mask"].dtype == np.int8
    assert e.action_space("player_1").n == 23
    s = e.state()
    assert s.shape == (STATE_SIZE,) and e.state_space.contains(s)
    # the global state is full information: it holds the removed card and the draw pile order
    assert s[119 + DECK_1[0]] == 1
    assert [int(np.argmax(s[126 + 7 * i : 133 + 7 * i])) for i in range(7)] == DECK_1[14:]


def test_render_modes() -> None:
    e = env(render_mode="ansi")
    e.reset(seed=0, options={"decks": [DECK_1]})
    text = e.render()
    assert "Round 1 (started by player_0)" in text and "hand:" not in text
    mine = e.render_for("player_0")
    assert mine.startswith(text) and "hand: [G1 G5 G5 G6 G6 G6 G6]" in mine
    assert "hand: [G3 G3 G3 G4 G4 G4]" in e.render_for("player_1")
    plain = env()  # no render_mode: render() warns and draws nothing
    plain.reset(seed=0)
    with pytest.warns(UserWarning, match="without a render_mode"):
        assert plain.render() is None
    with pytest.raises(RuntimeError, match=r"reset\(\) must be called before render"):
        env(render_mode="ansi").render()


def test_human_render_prints(capsys) -> None:
    e = env(render_mode="human")
    e.reset(seed=0)
    assert e.render() is None
    assert "Round 1" in capsys.readouterr().out
    e.step(0)
    # the public view does not tell which token is being played until its cards are revealed
    assert "who plays an action token" in capsys.readouterr().out


def test_human_render_shows_the_final_scoring_and_the_winner(capsys) -> None:
    e = env(render_mode="human")
    e.reset(seed=4)
    rng = np.random.default_rng(4)
    while not any(e.terminations.values()):
        e.step(random_action(e.observe(e.agent_selection), rng))
    last = capsys.readouterr().out.split("Round ")[-1]  # the frame printed by the final move
    winner = e.game.winner
    assert f"game over: player_{winner} wins" in last
    r = e.game.last_round
    assert f"scoring of round {r.round}:" in last and f"points {r.points[0]}-{r.points[1]}" in last


def test_human_render_shows_the_illegal_move_that_ended_the_game(capsys) -> None:
    e = env(render_mode="human")
    e.reset(seed=0, options={"decks": [DECK_1]})
    capsys.readouterr()
    with pytest.warns(UserWarning):
        e.step(4)  # player_0 must choose a token first
    out = capsys.readouterr().out
    assert "game over: player_0 played illegal action 4 (card:geisha0); player_0 -1, player_1 0" in out
    e.reset(seed=0)
    assert "illegal" not in e.unwrapped.render_for("player_0")


def test_a_players_own_view_shows_its_revealed_secret_after_the_scoring() -> None:
    e = env(render_mode="ansi")
    e.reset(seed=42)
    rng = np.random.default_rng(0)
    for _agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    secrets = e.game.last_round.secrets
    for seat in (0, 1):
        mine = e.render_for(f"player_{seat}")
        assert f"secret: [G{secrets[seat]}] (revealed at the scoring)" in mine


DECODERS = {
    "actions.py": "decode_action itself",
    "rules.py": "the executable specification applies an action by its range",
    "engine.py": "the compiled engine of record, proven identical to rules.py",
}
"""The only modules that may read an action id by its range (``a - CARD_BASE``, ``a >= SPLIT_BASE``)."""


def range_readings(source: str) -> list[int]:
    """The lines of ``source`` that read an action id by arithmetic on the id ranges' bases."""
    bases = {"CARD_BASE", "SPLIT_BASE", "GIFT_TAKE_BASE", "COMP_TAKE_A", "COMP_TAKE_B"}
    lines = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Sub)
            and getattr(node.right, "id", None) in bases
        ):
            lines.append(node.lineno)
        if isinstance(node, ast.Compare):
            pairs = zip(node.ops, node.comparators, strict=True)
            if any(
                getattr(c, "id", None) in bases and not isinstance(op, (ast.Eq, ast.NotEq)) for op, c in pairs
            ):
                lines.append(node.lineno)
    return lines


def test_no_module_but_the_decoder_and_the_rules_reads_an_action_id_by_its_range() -> None:
    """A second decoder would drift from ``decode_action``: every module of the package (the
    boards, renders, records, bots, wrappers) names and reads actions through it.  (The browser
    page's script is the boards' to check.)"""
    root = Path(__file__).resolve().parents[1] / "hanamikoji_env"
    found = {
        str(path.relative_to(root)): lines
        for path in root.rglob("*.py")
        if path.name not in DECODERS and (lines := range_readings(path.read_text()))
    }
    assert found == {}, found
    assert range_readings("def f(a):\n    return a - CARD_BASE if a >= SPLIT_BASE else a\n") == [2, 2]


def test_one_decoder_names_every_action_id_and_nothing_else() -> None:
    """``decode_action`` is the one reading of the id ranges; every caller's words come from it."""
    from hanamikoji_env.actions import NUM_ACTIONS, Decoded, action_name, decode_action, split_sets

    decoded = [decode_action(a) for a in range(NUM_ACTIONS)]
    assert decoded == [
        *(Decoded("token", t) for t in range(4)),
        *(Decoded("card", g) for g in range(7)),
        *(Decoded("split", k) for k in range(3)),
        *(Decoded("gift-take", g) for g in range(7)),
        Decoded("comp-take", 0),
        Decoded("comp-take", 1),
    ]
    assert decode_action(np.int64(11)) == Decoded("split", 0)
    assert [action_name(a) for a in (0, 7, 12, 20, 22)] == [
        "token:Secret", "card:geisha3", "split:{c0,c2|c1,c3}", "gift-take:geisha6", "comp-take:B",
    ]  # fmt: skip
    assert split_sets([1, 2, 5, 6], 2) == ([1, 6], [2, 5])
    for bad in (-1, NUM_ACTIONS, True, 1.0, "3"):
        with pytest.raises(ValueError, match="action must be an int"):
            decode_action(bad)  # type: ignore[arg-type]
