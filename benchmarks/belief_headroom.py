"""Headroom of better beliefs for PolicySearchBot: its search with uniform deals and with the truth.

PolicySearchBot samples the cards it cannot see uniformly among the deals
consistent with its observation.  A belief model (weighting each deal by how
likely the opponent's play this round makes it) can at best tell it the
opponent's real cards.  This plays ``--games`` mirrored games against
``--opponent`` on the same deals for

* ``uniform``: PolicySearchBot as shipped (samples, candidates and prior as
  given), and
* ``oracle``: the same search, told the opponent's hand, Secret and Trade-off
  cards (only the removed card and the draw pile's order are sampled);

so ``oracle - uniform`` bounds what belief-weighted determinizations can add.
The oracle cheats: it exists only in this measurement, never as a player.
``--belief PATH`` adds a third, ``belief``: the same search dealing the opponent's
hand by a :mod:`hanamikoji_env.belief` model (``psearch:belief=PATH``), so
``belief - uniform`` is how much of that headroom the model takes.  ``--exact`` adds
``exact``: the same search taking every deal where there are at most ``--samples``
(``psearch:exact=1``), late in a round.  ``--value`` adds ``value``: the same search valuing a
round that leaves the game going by the markers plus the policy's value head at the next round
(``psearch:value=1``).  Each difference is printed with the number of games
the two played to a different result (the pairs that carry it).

Usage: ``python benchmarks/belief_headroom.py [--ckpt checkpoints/ppo_selfplay.pt]
[--games 200] [--opponent search] [--seed 0] [--belief PATH] [--exact] [--value] [--no-oracle]``  (one process; about 7 minutes at
the defaults on one core)
"""

from __future__ import annotations

import argparse

import numpy as np
from tqdm import tqdm

from hanamikoji_env.aec import raw_env
from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.psearch import PolicySearchBot, search_values
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.games import play_env
from hanamikoji_env.infoset import determinized_rows
from hanamikoji_env.rules import cards_of
from hanamikoji_env.stats import wilson


class OracleSearchBot(PolicySearchBot):
    """PolicySearchBot whose determinizations hold the opponent's real hidden cards: it reads
    them from :attr:`env`, the game it plays in (:func:`play`)."""

    env: raw_env

    def q_values(self, vector: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        return search_values(
            self.probs, vector[None], [candidates], self.rng, self.samples, self.round_limit, self._deal
        )[0]

    def _deal(self, vector: np.ndarray, rng: np.random.Generator, n: int) -> np.ndarray:
        s = self.env.game
        opp = 1 - s.to_move  # the bot is to move: the opponent is the other seat
        secret = [s.secrets[opp]] if s.secrets[opp] >= 0 else []
        return determinized_rows(
            vector, rng, n, [*cards_of(s.hands[opp]), *secret, *cards_of(s.tradeoffs[opp])]
        )


def play(bots: tuple[Bot, Bot], deal_seed: int) -> float:
    """One game, ``bots[0]`` as player_0 (:func:`~hanamikoji_env.games.play_env`); player_0's
    reward.  An oracle plays in the game's own env, which shows it the truth."""
    e = raw_env()
    for bot in bots:
        if isinstance(bot, OracleSearchBot):
            bot.env = e
    return float(play_env(bots, deal_seed, None, env=e).history().rewards[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ckpt", default="checkpoints/ppo_selfplay.pt")
    parser.add_argument(
        "--games", type=int, default=200, help="mirrored games per player, even (a draw counts half)"
    )
    parser.add_argument("--opponent", default="search", help="a player spec (docs/bots.md)")
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the bots")
    parser.add_argument("--belief", help="a belief model: adds the search dealing by it")
    parser.add_argument("--exact", action="store_true", help="adds the search taking every deal where few")
    parser.add_argument("--value", action="store_true", help="adds the search with value-head leaves")
    parser.add_argument(
        "--no-oracle", action="store_true", help="leave the oracle out (its headroom measured before)"
    )
    args = parser.parse_args()
    if args.games < 2 or args.games % 2:
        parser.error(f"--games must be even and at least 2, got {args.games}")
    try:
        opponent = parse_player(args.opponent).make(args.seed + 1)
        players = {
            kind: cls(args.ckpt, seed=args.seed, samples=args.samples)
            for kind, cls in (("uniform", PolicySearchBot), ("oracle", OracleSearchBot))
        }
        if args.belief:
            players["belief"] = PolicySearchBot(
                args.ckpt, seed=args.seed, samples=args.samples, belief=args.belief
            )
        if args.exact:
            players["exact"] = PolicySearchBot(args.ckpt, seed=args.seed, samples=args.samples, exact=1)
        if args.value:
            players["value"] = PolicySearchBot(args.ckpt, seed=args.seed, samples=args.samples, value=1)
        if args.no_oracle:
            del players["oracle"]
    except (ValueError, OSError) as e:
        parser.error(str(e))
    results: dict[str, list[float]] = {kind: [] for kind in players}
    with tqdm(total=args.games * len(players), unit="game") as bar:
        for deal in range(args.games // 2):
            deal_seed = args.seed * 1_000_003 + deal
            for kind, bot in players.items():
                for seat in (0, 1):
                    # every player meets the same deals and the same random numbers, its own and
                    # the opponent's, whatever the others played before: a paired comparison
                    bot.reset(seed=2 * deal_seed + seat)
                    opponent.reset(seed=2 * deal_seed + seat + 1)
                    pair = (bot, opponent) if seat == 0 else (opponent, bot)
                    mine = play(pair, deal_seed) * (1 if seat == 0 else -1)
                    results[kind].append(1.0 if mine > 0 else (0.5 if mine == 0 else 0.0))
                    bar.update()
    wins = {kind: sum(r) for kind, r in results.items()}
    print(
        f"{args.games} mirrored games against {args.opponent} (seed {args.seed}), psearch over {args.ckpt}:"
    )
    for kind, w in wins.items():
        low, high = wilson(w, args.games)
        print(f"  {kind:<8} {w / args.games:.3f}  [{low:.3f}, {high:.3f}]")
    for kind in [k for k in wins if k != "uniform"]:
        differ = sum(a != b for a, b in zip(results[kind], results["uniform"], strict=True))
        print(
            f"  {kind} - uniform: {(wins[kind] - wins['uniform']) / args.games:+.3f} ({differ} games differ)"
        )


if __name__ == "__main__":
    main()
