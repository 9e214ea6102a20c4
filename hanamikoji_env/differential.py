"""Differential check: the batch engine plays exactly the game of the AEC env.

Both engines get the same scripted decks and the same (random legal) actions;
at every decision the observations of both seats, the mask and the acting
player must be equal, and at the end the rewards, winner and number of rounds.  Used by
``tests/test_vector.py`` (a few thousand games) and
``benchmarks/vector_diff.py`` (100,000 games).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hanamikoji_env import rules
from hanamikoji_env.aec import raw_env
from hanamikoji_env.vector import VectorHanamikoji, random_actions


class MismatchError(AssertionError):
    """The two engines disagreed."""


def compare_engines(
    num_games: int,
    num_envs: int = 256,
    seed: int = 0,
    round_limit: int | None = None,
    rounds_scripted: int = 60,
    progress: Callable[[int], None] | None = None,
) -> dict[str, int]:
    """Play ``num_games`` games through both engines; raise :class:`MismatchError` on any difference.

    Returns counts: games, decisions compared, rounds played.
    """
    rng = np.random.default_rng(seed)
    venv = VectorHanamikoji(num_envs, seed=seed, round_limit=round_limit)
    games = decisions = rounds = 0
    while games < num_games:
        batch = min(num_envs, num_games - games)
        decks = [[rules.shuffled_deck(rng) for _ in range(rounds_scripted)] for _ in range(num_envs)]
        obs, mask, to_play = venv.reset(decks=decks)
        aecs = []
        for i in range(batch):
            e = raw_env(round_limit=round_limit)
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
