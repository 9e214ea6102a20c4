"""One check per argument: every entry point accepts the same round limits, seeds and actions and
refuses the rest with the same error (``rules.check_round_limit``, ``rules.check_seed``,
``actions.check_action``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import extra

from hanamikoji_env import engine, env, raw_env, rules
from hanamikoji_env.vector import BatchEngine, HanamikojiVectorEnv
from hanamikoji_env.wrappers import SingleAgentEnv

DECK = rules.shuffled_deck(np.random.default_rng(0))


def _openspiel(limit: Any) -> None:
    extra("pyspiel")
    from hanamikoji_env.openspiel import HanamikojiGame

    HanamikojiGame({"round_limit": limit})


ROUND_LIMIT_TAKERS: dict[str, Callable[[Any], object]] = {
    "raw_env": lambda x: raw_env(round_limit=x),
    "env": lambda x: env(round_limit=x),
    "BatchEngine": lambda x: BatchEngine(2, round_limit=x),
    "HanamikojiVectorEnv": lambda x: HanamikojiVectorEnv(2, round_limit=x),
    "SingleAgentEnv": lambda x: SingleAgentEnv(round_limit=x),
    "rules.new_game": lambda x: rules.new_game(DECK, x),
    "engine.new_game": lambda x: engine.new_game(DECK, x),
    "openspiel": _openspiel,
}


@pytest.mark.parametrize("taker", sorted(ROUND_LIMIT_TAKERS))
def test_every_entry_point_takes_the_same_round_limits(taker: str) -> None:
    make = ROUND_LIMIT_TAKERS[taker]
    for good in (1, 3, np.int64(3), np.uint8(2), rules.MAX_ROUND_LIMIT):
        make(good)
    for bad in (0, -1, rules.MAX_ROUND_LIMIT + 1, True, np.bool_(True), 2.0, "3", [3]):
        with pytest.raises(ValueError, match=r"^round_limit must be None or an int in \[1, 1000\], got "):
            make(bad)
    if taker == "openspiel":  # the one difference: OpenSpiel needs a finite game
        with pytest.raises(ValueError, match="OpenSpiel needs a finite game"):
            make(None)
    else:
        make(None)


SEED_TAKERS: dict[str, Callable[[Any], object]] = {
    "raw_env.reset": lambda x: raw_env().reset(seed=x),
    "env.reset": lambda x: env().reset(seed=x),
    "BatchEngine": lambda x: BatchEngine(2, seed=x),
    "BatchEngine.reset": lambda x: BatchEngine(2).reset(seed=x),
    "HanamikojiVectorEnv": lambda x: HanamikojiVectorEnv(2, seed=x),
    "HanamikojiVectorEnv.reset": lambda x: HanamikojiVectorEnv(2).reset(seed=x),
    "SingleAgentEnv.reset": lambda x: SingleAgentEnv().reset(seed=x),
}


@pytest.mark.parametrize("taker", sorted(SEED_TAKERS))
def test_every_entry_point_takes_the_same_seeds(taker: str) -> None:
    take = SEED_TAKERS[taker]
    for good in (None, 0, 7, np.int64(7), 2**40):
        take(good)
    for bad in (-1, True, 1.5, "3", np.float64(2.0)):
        with pytest.raises(ValueError, match=r"^seed must be None or a non-negative int, got "):
            take(bad)


def _aec_step(make: Callable[[], Any]) -> Callable[[Any], None]:
    def step(action: Any) -> None:
        e = make()
        e.reset(seed=0)
        e.step(action)

    return step


def _single_step(action: Any) -> None:
    e = SingleAgentEnv(learner_seat=0)
    e.reset(seed=0)
    e.step(action)


ACTION_TAKERS: dict[str, Callable[[Any], object]] = {
    "raw_env.step": _aec_step(raw_env),
    "env.step": _aec_step(env),
    "SingleAgentEnv.step": _single_step,
    "rules.apply": lambda a: rules.apply(rules.new_game(DECK), a),
    "engine.apply": lambda a: engine.apply(engine.new_game(DECK), a),
}


@pytest.mark.parametrize("taker", sorted(ACTION_TAKERS))
def test_every_entry_point_takes_the_same_actions(taker: str) -> None:
    take = ACTION_TAKERS[taker]
    for good in (0, np.int64(1), np.array(2), np.array([3], dtype=np.uint8)):  # a token: legal first
        take(good)
    for bad in (23, -1, np.int64(99)):
        with pytest.raises(
            ValueError, match=r"^illegal action -?\d+ for .*: out of range, action ids are 0..22"
        ):
            take(bad)
    for bad in (1.0, True, "1", np.array([1, 2]), np.array(1.0)):
        with pytest.raises(TypeError, match=r"^action for .* must be an int in \[0, 23\), got "):
            take(bad)
