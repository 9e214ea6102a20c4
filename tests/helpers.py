"""Helpers shared by the tests: intent-level action scripts and random play."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np

from hanamikoji_env import env, raw_env, rules
from hanamikoji_env.actions import (
    CARD_BASE,
    COMP_TAKE_A,
    COMP_TAKE_B,
    COMPETITION,
    GIFT,
    GIFT_TAKE_BASE,
    SECRET,
    SPLIT_BASE,
    TOKEN_SIZES,
    TRADEOFF,
)
from hanamikoji_env.aec import AGENTS
from hanamikoji_env.observation import encode
from hanamikoji_env.rules import Phase


def cards(*geishas: int) -> list[int]:
    """Selection actions for these cards (sorted, as the contract requires)."""
    return [CARD_BASE + g for g in sorted(geishas)]


def secret(g: int) -> list[int]:
    return [SECRET, *cards(g)]


def tradeoff(a: int, b: int) -> list[int]:
    return [TRADEOFF, *cards(a, b)]


def gift(offer: tuple[int, int, int], take: int) -> list[int]:
    """The turn player offers three cards; the opponent takes ``take``."""
    return [GIFT, *cards(*offer), GIFT_TAKE_BASE + take]


def competition(offer: tuple[int, int, int, int], split: int, take_a: bool) -> list[int]:
    """Offer four cards, split them with ``split`` (0..2), the opponent takes set A or B."""
    return [COMPETITION, *cards(*offer), SPLIT_BASE + split, COMP_TAKE_A if take_a else COMP_TAKE_B]


def deck(removed: int, hand0: list[int], hand1: list[int], pile: list[int]) -> list[int]:
    d = [removed, *hand0, *hand1, *pile]
    rules.validate_deck(d)
    return d


# Round 1, player_0 starts.  See test_rules.py for the expected outcome.
DECK_1 = deck(0, [6, 6, 6, 5, 5, 1], [3, 3, 3, 4, 4, 4], [6, 6, 5, 5, 2, 2, 0, 1])


def round_1_script(last_split: int = 0, last_take_a: bool = False) -> list[int]:
    return [
        *secret(6),  # T1 player_0
        *tradeoff(3, 6),  # T2 player_1
        *gift((5, 6, 6), take=6),  # T3 player_0; player_1 takes a 6
        *competition((3, 3, 4, 4), split=0, take_a=True),  # T4 player_1; player_0 takes {3,3}
        *tradeoff(1, 2),  # T5 player_0
        *gift((2, 4, 5), take=5),  # T6 player_1; player_0 takes the 5
        *competition((0, 5, 5, 6), split=last_split, take_a=last_take_a),  # T7 player_0
        *secret(1),  # T8 player_1
    ]


# Round 2, player_1 starts; markers from round 1 persist.
DECK_2 = deck(6, [0, 0, 1, 1, 2, 2], [5, 5, 5, 5, 3, 3], [4, 3, 4, 4, 6, 6, 6, 6])
ROUND_2_SCRIPT = [
    *tradeoff(3, 5),  # T1 player_1
    *tradeoff(0, 0),  # T2 player_0
    *secret(5),  # T3 player_1
    *gift((1, 1, 4), take=4),  # T4 player_0; player_1 takes the 4
    *gift((4, 5, 6), take=4),  # T5 player_1; player_0 takes the 4
    *secret(3),  # T6 player_0
    *competition((3, 4, 5, 6), split=0, take_a=False),  # T7 player_1; player_0 takes {5,6}
    *competition((2, 2, 6, 6), split=0, take_a=False),  # T8 player_0; player_1 takes {6,6}
]

# A mirrored round: both sides end identical, every geisha ties.
DECK_MIRROR = deck(6, [0, 6, 6, 1, 5, 5], [0, 3, 4, 1, 5, 5], [2, 2, 3, 3, 4, 4, 6, 6])
MIRROR_SCRIPT = [
    *secret(0),
    *secret(0),
    *tradeoff(6, 6),
    *tradeoff(3, 4),
    *gift((1, 5, 5), take=1),
    *gift((1, 5, 5), take=1),
    *competition((2, 3, 4, 6), split=0, take_a=True),
    *competition((2, 3, 4, 6), split=0, take_a=True),
]


class Game:
    """A scripted game on one engine's State API, seen as the AEC env shows it, for the rule tests.

    ``impl`` is :mod:`hanamikoji_env.rules` (the specification) or :mod:`hanamikoji_env.engine`
    (the engine of record): both offer ``new_game``, ``next_round``, ``apply``, ``legal_mask``.
    Round ``k`` is dealt from ``decks[k - 1]``, later rounds from a seeded shuffle.
    """

    def __init__(self, impl: ModuleType, decks: list[list[int]], round_limit: int | None = None) -> None:
        self.impl, self.decks = impl, decks
        self.rng = np.random.default_rng(0)
        self.game = impl.new_game(decks[0], round_limit)
        self.infos: dict[str, dict] = {a: {} for a in AGENTS}
        self.rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}

    @property
    def agents(self) -> list[str]:
        return [] if self.game.phase == Phase.GAME_OVER else list(AGENTS)

    @property
    def agent_selection(self) -> str:
        return AGENTS[self.game.to_move]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = AGENTS.index(agent)
        mask = np.zeros(23, dtype=np.int8)
        if seat == self.game.to_move:
            mask[:] = self.impl.legal_mask(self.game)
        return {"observation": encode(self.game, seat), "action_mask": mask}

    def step(self, action: int) -> None:
        state = self.impl.apply(self.game, action)
        if state.phase >= Phase.ROUND_OVER:
            summary = state.last_round.as_dict()
            self.infos = {a: {"round_summary": dict(summary)} for a in AGENTS}
            if state.phase == Phase.GAME_OVER:
                self.rewards = dict(zip(AGENTS, rules.returns(state), strict=True))
                self.terminations = {a: True for a in AGENTS}
            else:
                later = state.round >= len(self.decks)
                deck = rules.shuffled_deck(self.rng) if later else self.decks[state.round]
                state = self.impl.next_round(state, deck)
        self.game = state


def play(impl: ModuleType, script: list[int], decks: list[list[int]], round_limit: int | None = None) -> Game:
    """``script`` played through a :class:`Game` on ``impl``."""
    g = Game(impl, decks, round_limit)
    for a in script:
        assert g.agents, "the game ended before the script did"
        g.step(a)
    return g


def random_game(
    rng: np.random.Generator, round_limit: int | None = None, max_rounds: int = 1000, impl: Any = rules
) -> Iterator[tuple[rules.State, int | None]]:
    """Yield (state, action) through one random game of ``impl`` (the readable ``rules``, or the
    engine of record, ``hanamikoji_env.engine``: the same State-level API); action None at the end."""
    state = impl.new_game(rules.shuffled_deck(rng), round_limit)
    while True:
        if state.phase == rules.Phase.GAME_OVER:
            yield state, None
            return
        if state.phase == rules.Phase.ROUND_OVER:
            assert state.round < max_rounds, "game did not terminate"
            state = impl.next_round(state, rules.shuffled_deck(rng))
            continue
        legal = impl.legal_actions(state)
        action = legal[int(rng.integers(len(legal)))]
        yield state, action
        state = impl.apply(state, action)


def choice_positions(n: int, seed: int, rate: float = 0.1) -> list[tuple[np.ndarray, np.ndarray]]:
    """(observation, mask) of the player to move at ``n`` decisions with a choice from random games
    (every phase), each decision kept with probability ``rate``."""
    rng = np.random.default_rng(seed)
    e = env()
    e.reset(seed=seed)
    out: list[tuple[np.ndarray, np.ndarray]] = []
    while len(out) < n:
        for _agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            if obs["action_mask"].sum() > 1 and rng.random() < rate:
                out.append((obs["observation"], obs["action_mask"]))
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        e.reset()
    return out[:n]


def random_action(obs: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    assert len(legal) > 0, "the acting agent has an empty mask"
    return int(legal[rng.integers(len(legal))])


# ------------------------------------------------- hidden-information runs ---


class OpponentPolicy:
    """A random opponent that hides one specific card with one token on its first turn.

    The reserved card is the only difference between the two deals of a
    hidden-information test; every other choice is drawn from cards that are
    the same in both deals, so both games get the same choices.
    """

    def __init__(self, seat: int, reserved: int, token: int, seed: int) -> None:
        self.seat, self.reserved, self.token = seat, reserved, token
        self.rng = np.random.default_rng(seed)
        self.plan: list[int] = []
        self.used = False

    def act(self, state: rules.State, mask: np.ndarray) -> int:
        if state.phase == Phase.TOKEN and not self.used:
            return self.token  # hide the reserved card at the first turn: always playable
        if state.phase == Phase.SELECT:
            if not state.selection:
                hand = [g for g in range(7) for _ in range(state.hands[self.seat][g])]
                if not self.used:
                    hand.remove(self.reserved)
                k = TOKEN_SIZES[state.token]
                if state.token == self.token:
                    chosen = [self.reserved, *self.rng.choice(hand, k - 1, replace=False)]
                    self.used = True
                else:
                    chosen = list(self.rng.choice(hand, k, replace=False))
                self.plan = [CARD_BASE + int(g) for g in sorted(chosen)]
            return self.plan[len(state.selection)]
        legal = np.flatnonzero(mask)
        return int(legal[self.rng.integers(len(legal))])


def swapped_deals(
    rng: np.random.Generator, observer: int, draw: bool
) -> tuple[list[int], list[int], int, int]:
    """Two decks that differ only in the removed card and one card the opponent gets."""
    opp = 1 - observer
    while True:
        deck = list(rules.shuffled_deck(rng))
        # the opponent's first draw (deck[13] for player_0, deck[14] for player_1) or its hand
        slots = [13 + opp] if draw else list(range(1 + 6 * opp, 7 + 6 * opp))
        slots = [i for i in slots if deck[i] != deck[0]]
        if slots:
            i = slots[int(rng.integers(len(slots)))]
            other = list(deck)
            other[0], other[i] = deck[i], deck[0]
            return deck, other, deck[i], deck[0]


def views(e: raw_env, agent: str) -> tuple:
    """Everything ``agent`` is shown: observation, mask, info, reward and both renders."""
    obs = e.observe(agent)
    return (
        obs["observation"].tobytes(),
        obs["action_mask"].tobytes(),
        repr(e.infos[agent]),
        e.rewards[agent],
        e.render(),
        e.render_for(agent),
    )


class Step(NamedTuple):
    scored: bool
    """True once the round was scored (the opponent's Secret is public from then)."""
    views: tuple
    action: int | None
    """The observer's action at this step, None when the opponent acted."""


def play_swapped(
    observer: int,
    token: int,
    draw: bool,
    game: int,
    rng: np.random.Generator,
    observer_acts: list,
    observation_version: int = 1,
) -> tuple[list[Step], list[Step]]:
    """Play the two deals of :func:`swapped_deals` through round 1 in lockstep.

    ``observer_acts[k](obs) -> int`` plays the observer's seat in deal ``k``;
    the opponent is an :class:`OpponentPolicy` hiding the swapped card with
    ``token``.  Returns what the observer saw (and did) at every step of each deal.
    """
    agent = f"player_{observer}"
    deck_a, deck_b, card_a, card_b = swapped_deals(rng, observer, draw)
    envs = [raw_env(render_mode="ansi", observation_version=observation_version) for _ in range(2)]
    opponents = [OpponentPolicy(1 - observer, c, token, seed=game) for c in (card_a, card_b)]
    for e, d in zip(envs, (deck_a, deck_b), strict=True):
        e.reset(seed=game, options={"decks": [d]})
    assert envs[0].game != envs[1].game
    traces: list[list[Step]] = [[], []]
    while envs[0].agents and envs[1].agents:
        for k, e in enumerate(envs):
            scored = e.game.round > 1 or e.game.phase == Phase.GAME_OVER
            action = None
            if not scored and e.agent_selection == agent:
                action = observer_acts[k](e.observe(agent))
            traces[k].append(Step(scored, views(e, agent), action))
        if any(t[-1].scored for t in traces):
            break
        for k, e in enumerate(envs):
            a = traces[k][-1].action
            if a is None:
                a = opponents[k].act(e.game, e.observe(e.agent_selection)["action_mask"])
            e.step(a)
    assert all(o.used for o in opponents)
    return traces[0], traces[1]


class ExactPosition(NamedTuple):
    """A decision of the round's last turn whose every candidate has an exact value."""

    state: rules.State
    candidates: np.ndarray
    """The legal actions (card selections) of the player to move."""
    finals: dict[int, list[rules.State]]
    """Per candidate: the scored state for each geisha the opponent's Secret may be."""


def last_turn_positions(seed: int, n: int, token: int, round_limit: int | None = None) -> list[ExactPosition]:
    """``n`` positions of random games on the readable rules at the round's last turn, the player
    to move selecting the cards of ``token`` (its last).  The opponent's hand and the draw pile
    are empty by then, so the one hidden card that scores is the opponent's Secret; each
    candidate's outcome is worked out here for every geisha it may be, from the rules alone."""
    rng = np.random.default_rng(seed)
    out: list[ExactPosition] = []
    while len(out) < n:
        for state, action in random_game(rng, round_limit):
            if action is None or state.turn != rules.TURNS_PER_ROUND - 1:
                continue
            if state.phase != rules.Phase.SELECT or state.token != token or state.selection:
                continue
            opp = 1 - state.to_move
            assert not state.draw_pile and not any(state.hands[opp])
            # what the mover has not seen: the opponent's Secret and Trade-off cards, the removed card
            hidden = [state.secrets[opp], state.removed, *rules.cards_of(state.tradeoffs[opp])]
            candidates = np.array(rules.legal_actions(state))
            finals = {}
            for c in candidates:
                worlds = []
                for g in sorted(set(hidden)):
                    world = rules.apply(state._replace(secrets=rules._set(state.secrets, opp, g)), int(c))
                    while world.phase < rules.Phase.ROUND_OVER:  # Trade-off's second card: any
                        world = rules.apply(world, rules.legal_actions(world)[0])
                    worlds.append(world)
                finals[int(c)] = worlds
            out.append(ExactPosition(state, candidates, finals))
            break
    return out


MEASURE = """
import json, resource, sys
exec(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    exec(sys.argv[2])
    error = None
except Exception as e:
    error = f"{type(e).__name__}: {e}"
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"grown_mib": grown / 1024, "error": error}))
"""


def peak_growth(setup: str, action: str) -> tuple[float, str | None]:
    """Run ``setup`` then ``action`` in a fresh Python: how far its peak memory grew during
    ``action`` (MiB) and the error ``action`` raised (``"Type: message"``, None if none).  A fresh
    process, because a process's peak (``ru_maxrss``) never falls: in the suite's own process an
    earlier test may already have set it higher than ``action`` could."""
    import json
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", MEASURE, setup, action],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["grown_mib"], result["error"]


def extra(module: str, reason: str = "its extra is not installed") -> Any:
    """``module``, imported for a test of an optional extra: skipped where it is missing, except
    under CI (``CI`` set), which installs every extra: there a missing or broken import fails."""
    import importlib
    import os

    import pytest

    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=reason)


def hash_bomb_pickle(width: int = 2, depth: int = 60) -> bytes:
    """A few hundred bytes of pickle, ``{"notes": {KEY: 1}}`` with KEY a tuple of ``width`` copies
    of one child, nested ``depth`` deep, which unpickling would hash for ``width ** depth`` steps,
    in C code no signal interrupts (written by hand: Python itself would hash the key for ever to
    build it).  The fourth audit's were 3 wide and 23 deep (under the depth cap), and 40 by 8."""
    stream = b"\x80\x02}X\x05\x00\x00\x00notes})q\x00"  # KEY from () up
    for i in range(depth):  # x on the stack: MARK, then x width times, TUPLE
        stream += b"0(" + (b"h" + bytes([i])) * width + b"tq" + bytes([i + 1])
    return stream + b"K\x01ss."


HASH_BOMBS = [(2, 60), (3, 23), (40, 8)]
"""``hash_bomb_pickle``'s shapes a test tries: deeper than the cap, and two under it."""

BOMB_REFUSED = r"(nests deeper than 24 levels|expands to over 1,000,000 objects).*a crafted file"
"""What the pickle walk says of any of them."""


def legacy_with_object(path: Path, pickle: bytes) -> None:
    """A file in torch.save's legacy (non-zip) format whose object pickle is ``pickle``: the magic
    number, protocol and system info of a real legacy save, then ``pickle``, then no storages."""
    import io
    import pickletools

    import torch

    buffer = io.BytesIO()
    torch.save({}, buffer, _use_new_zipfile_serialization=False)
    raw = buffer.getvalue()
    ends, reader = [], io.BytesIO(raw)
    for _ in range(3):  # the first three pickles, each to its STOP
        ends.append(1 + [pos for op, _, pos in pickletools.genops(reader) if op.name == "STOP"][-1])
    path.write_bytes(raw[: ends[-1]] + pickle + b"\x80\x02]q\x00.")  # then an empty list of storage keys


def processes_with(marker: str) -> list[int]:
    """Pids of live processes (not zombies) whose environment holds ``marker``: a test starts a
    process with ``marker`` in its environment, and every process it starts inherits it (Linux's
    /proc)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker.encode() in f.read():
                    with open(f"/proc/{pid}/stat") as st:
                        if st.read().split(") ")[-1][0] != "Z":
                            found.append(int(pid))
        except OSError:
            continue
    return found
