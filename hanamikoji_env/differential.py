"""Differential checks: every other way of playing the game plays exactly the specification's game.

- :func:`compare_with_spec`: the engine of record's kernels
  (:mod:`hanamikoji_env.engine`) against the readable specification
  (:mod:`hanamikoji_env.rules`): the same decks and random legal moves, and at
  every decision the whole state, the legal mask and, after each scoring, the
  round summary must be equal.
- :func:`compare_engines`: the batch engine's driver (``BatchEngine``:
  scripted decks, auto-reset, views of both seats) against the AEC env: at
  every decision the observations of both seats, the mask and the acting
  player, and at the end the rewards, winner and number of rounds.

Used by ``tests/test_differential.py`` (thousands of games) and
``benchmarks/vector_diff.py`` (100,000 games).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hanamikoji_env import engine, rules
from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.aec import raw_env
from hanamikoji_env.vector import BatchEngine, random_actions


class MismatchError(AssertionError):
    """The two engines disagreed."""


def compare_with_spec(
    num_games: int,
    seed: int = 0,
    round_limit: int | None = None,
    progress: Callable[[int], None] | None = None,
    variant: rules.Variant = rules.FULL,
) -> dict[str, int]:
    """Play ``num_games`` random games of ``variant`` through the specification and the engine's
    kernels, side by side; raise :class:`MismatchError` at the first difference.  Returns counts:
    games, decisions, rounds."""
    rng = np.random.default_rng(seed)
    decisions = rounds = 0
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    round_limit = rules.variant_round_limit(round_limit, variant)
    for game in range(num_games):
        deck = rules.shuffled_deck(rng, variant)
        spec = rules.new_game(deck, round_limit, variant)
        row = engine.blank_row(variant)
        engine.deal(row, 0, np.array(deck), True)
        while True:
            got = engine.state_from_row(row[0], round_limit, spec.last_round)
            if got != spec:
                raise MismatchError(
                    f"game {game}, decision {decisions}: engine {got} != specification {spec}"
                )
            if spec.phase == rules.Phase.GAME_OVER:
                break
            if spec.phase == rules.Phase.ROUND_OVER:
                deck = rules.shuffled_deck(rng, variant)
                spec = rules.next_round(spec, deck)
                engine.deal(row, 0, np.array(deck), False)
                rounds += 1
                continue
            engine.legal(row, 0, mask)
            legal = rules.legal_mask(spec)
            if tuple(mask.tolist()) != legal:
                raise MismatchError(
                    f"game {game}: engine mask {mask.tolist()} != specification {legal} in {spec}"
                )
            actions = [a for a, ok in enumerate(legal) if ok]
            action = actions[int(rng.integers(len(actions)))]
            spec = rules.apply(spec, action)
            phase = engine.apply_one(row, 0, action, round_limit or 0)
            decisions += 1
            if phase >= engine.ROUND_OVER and engine.round_summary(row[0]) != spec.last_round:
                raise MismatchError(
                    f"game {game}: engine scoring {engine.round_summary(row[0])} != {spec.last_round}"
                )
        rounds += 1
        if progress is not None:
            progress(1)
    return {"games": num_games, "decisions": decisions, "rounds": rounds}


def compare_engines(
    num_games: int,
    num_envs: int = 256,
    seed: int = 0,
    round_limit: int | None = None,
    rounds_scripted: int = 60,
    progress: Callable[[int], None] | None = None,
    variant: rules.Variant = rules.FULL,
) -> dict[str, int]:
    """Play ``num_games`` games of ``variant`` through both engines; raise :class:`MismatchError`
    on any difference.

    Returns counts: games, decisions compared, rounds played.
    """
    rng = np.random.default_rng(seed)
    venv = BatchEngine(num_envs, seed=seed, round_limit=round_limit, variant=variant.name)
    games = decisions = rounds = 0
    while games < num_games:
        batch = min(num_envs, num_games - games)
        decks = [[rules.shuffled_deck(rng, variant) for _ in range(rounds_scripted)] for _ in range(num_envs)]
        obs, mask, to_play = venv.reset(decks=decks)
        aecs = []
        for i in range(batch):
            e = raw_env(round_limit=round_limit, variant=variant.name)
            e.reset(seed=0, options={"decks": decks[i]})
            aecs.append(e)
        active = list(range(batch))
        while active:
            actions = random_actions(mask, rng)
            for i in active:
                e = aecs[i]
                seat = e.possible_agents.index(e.agent_selection)
                ref = e.observe(e.agent_selection)
                if to_play[i] != seat:
                    raise MismatchError(f"game {games + i}: to_play {to_play[i]} != AEC seat {seat}")
                if not np.array_equal(ref["action_mask"], mask[i]):
                    raise MismatchError(f"game {games + i}: mask {mask[i]} != AEC {ref['action_mask']}")
                if not np.array_equal(ref["observation"], obs[i]):
                    diff = np.flatnonzero(ref["observation"] != obs[i]).tolist()
                    raise MismatchError(
                        f"game {games + i}: observation differs at {diff}; AEC state {e.game}"
                    )
            # the other seat's view too (training bootstraps values from it)
            other_obs, other_mask = venv.observe(1 - to_play)
            for i in active:
                e = aecs[i]
                ref = e.observe(e.possible_agents[1 - to_play[i]])
                if not np.array_equal(ref["observation"], other_obs[i]) or other_mask[i].any():
                    raise MismatchError(f"game {games + i}: the view of the seat not on move differs")
            obs, mask, to_play, rewards, done, info = venv.step(actions)
            still = []
            for i in active:
                e = aecs[i]
                e.step(int(actions[i]))
                decisions += 1
                ended = all(e.terminations.values())
                if ended != bool(done[i]):
                    raise MismatchError(f"game {games + i}: AEC ended={ended}, vector done={bool(done[i])}")
                ref_rewards = (e.rewards["player_0"], e.rewards["player_1"]) if ended else (0.0, 0.0)
                if tuple(rewards[i]) != ref_rewards:
                    raise MismatchError(f"game {games + i}: rewards {tuple(rewards[i])} != AEC {ref_rewards}")
                if not ended:
                    still.append(i)
                    continue
                g = e.game
                if g.round > rounds_scripted:
                    raise MismatchError(f"game {games + i} outlasted its {rounds_scripted} scripted decks")
                winner = g.winner
                if info["winner"][i] != winner or info["rounds"][i] != g.round:
                    raise MismatchError(
                        f"game {games + i}: winner/rounds {info['winner'][i]}/{info['rounds'][i]}"
                        f" != AEC {winner}/{g.round}"
                    )
                rounds += g.round
            active = still
        games += batch
        if progress is not None:
            progress(batch)
    return {"games": games, "decisions": decisions, "rounds": rounds}
