"""Exact best responses and exploitability, on a variant small enough to walk whole (``mini``).

The game tree of :data:`~hanamikoji_env.rules.MINI` is built once on the engine of record's
kernels: a chance root over every distinct deck (1,260 for the mini's 9 cards, equally likely),
then every decision.  Each decision node belongs to an information state of the player to move:
its perfect-recall observation (version 2, whose first 109 entries are version 1), so two nodes
share an information state exactly when they showed the mover the same things.

A *target* is any player that can say, at every information state, with which probability it
plays each move (:meth:`hanamikoji_env.bots.base.Bot.play_probabilities`; random, the heuristic,
a checkpoint; :func:`tabular_target` for a table of them such as an OpenSpiel policy).  Against
a target playing both seats, :func:`exploitability` computes the best response of each seat
exactly (the maximum over every strategy, by backward induction over information states in the
manner of OpenSpiel's ``best_response``) and reports:

- ``br_values``: each seat's best-response expected return (+1 win, -1 loss, 0 draw);
- ``nash_conv``: their sum, OpenSpiel's NashConv (0 exactly at a Nash equilibrium);
- ``br_score``: the best response's expected score (win 1, draw 1/2, loss 0) over both seats,
  ``0.5 + nash_conv / 4``: the unit every method of ``hanamikoji-exploit`` reports (0.5 = the
  target cannot be exploited).

:func:`head_to_head` gives one player's exact expected score against another (both seatings), the
win rate infinitely many mirrored games would measure.

With ``local=True`` it computes local best responses instead (:func:`local_best_response`: one
move's lookahead against the target, a token chosen with its cards, with exact beliefs), the
yardstick of cheaper estimates.  :func:`cfr_plus` solves the tree (CFR+, vectorised over its levels), for targets
near equilibrium; :func:`openspiel_table` reads any OpenSpiel policy of the same game.

    from hanamikoji_env.bots import parse_player
    from hanamikoji_env.exact import exploitability
    print(exploitability(parse_player("random").make(0, None)).nash_conv)  # 0.9776 (mini)
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from itertools import permutations
from typing import Any, NamedTuple

import numpy as np

from hanamikoji_env import engine
from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.engine import C_PHASE, C_TO_MOVE, C_WINNER, GAME_OVER, MAX_SELECTION, SELECT_PHASE
from hanamikoji_env.excerpt import short
from hanamikoji_env.observation import O_PHASE, VERSIONS
from hanamikoji_env.rules import MINI, RETURNS, Variant, check_variant

RECALL = VERSIONS[2]
MAX_NODES = 2_000_000
"""A variant whose tree is larger than this is refused (the full game's is astronomically so)."""

Target = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``probs = target(infostates, masks)``: for ``[N, 669]`` perfect-recall observations (version 1
is the first 109 entries) and ``[N, 23]`` masks, the ``[N, 23]`` move probabilities."""


@dataclass(frozen=True)
class Tree:
    """A variant's whole game tree, as arrays over nodes in depth-first order (parents first)."""

    variant: Variant
    parent: np.ndarray
    """Each node's parent (-1 for the root)."""
    action: np.ndarray
    """The move (or the deck, under the root) that led to each node."""
    chance: np.ndarray
    """The probability chance gave each node's edge (1.0 below a decision)."""
    mover: np.ndarray
    """The seat to move at each decision node; -1 at the chance root and at terminal nodes."""
    infostate: np.ndarray
    """Each decision node's information state (an index into :attr:`infostates`); -1 elsewhere."""
    value: np.ndarray
    """Seat 0's return at each terminal node (0 elsewhere)."""
    infostates: np.ndarray
    """``[I, 669]`` float32: each information state's perfect-recall observation."""
    masks: np.ndarray
    """``[I, 23]`` int8: the legal moves there."""
    info_mover: np.ndarray
    """``[I]``: the seat that decides at each information state."""
    children: list[list[int]]
    """Each node's children, in the order of its moves (or decks)."""
    keys: dict[bytes, int]
    """Information state by key (:func:`infostate_key`)."""

    @property
    def num_nodes(self) -> int:
        return len(self.parent)


@cache
def game_tree(variant: str = MINI.name) -> Tree:
    """The whole tree of ``variant`` (built once a process: about 3.5 s for the mini)."""
    v = check_variant(variant)
    if decks_of(v) * 2 * v.turns_per_round > MAX_NODES:  # a lower bound, before any walking
        raise ValueError(
            f"the {v.name} variant is too large to solve exactly ({decks_of(v):,} decks); "
            f"exact methods need the {MINI.name} variant"
        )
    decks = sorted(set(permutations(v.full_deck)))
    parent: list[int] = [-1]
    action: list[int] = [-1]
    chance: list[float] = [1.0]
    mover: list[int] = [-1]
    infostate: list[int] = [-1]
    value: list[float] = [0.0]
    children: list[list[int]] = [[]]
    keys: dict[bytes, int] = {}
    views: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    info_mover: list[int] = []
    obs = np.empty(RECALL.size, dtype=np.float32)
    mask = np.empty(NUM_ACTIONS, dtype=np.int8)
    limit = v.round_limit or 0

    def add(par: int, act: int, p: float, row: np.ndarray) -> int:
        node = len(parent)
        if node >= MAX_NODES:
            raise ValueError(
                f"the {v.name} variant's tree has more than {MAX_NODES:,} nodes: too large to walk"
            )
        parent.append(par)
        action.append(act)
        chance.append(p)
        children.append([])
        children[par].append(node)
        if row[0, C_PHASE] == GAME_OVER:
            mover.append(-1)
            infostate.append(-1)
            value.append(RETURNS[int(row[0, C_WINNER])][0])
            return node
        seat = int(row[0, C_TO_MOVE])
        RECALL.encode_row(row, 0, seat, obs, mask)
        key = infostate_key(obs)
        info = keys.get(key)
        if info is None:
            info = keys[key] = len(views)
            views.append(obs.copy())
            masks.append(mask.copy())
            info_mover.append(seat)
        elif info_mover[info] != seat:  # a view names its seat, so a key is a view alone
            raise AssertionError(f"two seats of the {v.name} variant share a perfect-recall view")
        mover.append(seat)
        infostate.append(info)
        value.append(0.0)
        for a in mask.nonzero()[0].tolist():
            child = row.copy()
            engine.apply_one(child, 0, a, limit)
            add(node, a, 1.0, child)
        return node

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10_000))
    try:
        p = 1.0 / len(decks)
        for d, deck in enumerate(decks):
            row = engine.blank_row(v)
            engine.deal(row, 0, np.array(deck, dtype=np.int64), True)
            add(0, d, p, row)
    finally:
        sys.setrecursionlimit(old)
    return Tree(
        variant=v,
        parent=np.array(parent, dtype=np.int64),
        action=np.array(action, dtype=np.int64),
        chance=np.array(chance, dtype=np.float64),
        mover=np.array(mover, dtype=np.int8),
        infostate=np.array(infostate, dtype=np.int64),
        value=np.array(value, dtype=np.float64),
        infostates=np.array(views, dtype=np.float32),
        masks=np.array(masks, dtype=np.int8),
        info_mover=np.array(info_mover, dtype=np.int8),
        children=children,
        keys=keys,
    )


def infostate_key(view: np.ndarray) -> bytes:
    """The key of the information state whose perfect-recall observation is ``view`` (the tree,
    the tables and OpenSpiel's information-state tensors all key by it)."""
    return view.astype(np.uint8).tobytes()


class Exploitability(NamedTuple):
    """The exact result of :func:`exploitability` (see the module docstring)."""

    br_values: tuple[float, float]
    nash_conv: float
    br_score: float
    target_values: tuple[float, float]
    """Each seat's expected return when the target plays both seats (they sum to 0)."""
    infostates: int
    nodes: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "br_values": list(self.br_values),
            "nash_conv": self.nash_conv,
            "exploitability": self.nash_conv / 2,
            "br_score": self.br_score,
            "target_values": list(self.target_values),
            "infostates": self.infostates,
            "nodes": self.nodes,
        }


def target_probabilities(tree: Tree, target: Target) -> np.ndarray:
    """``[I, 23]``: the target's move probabilities at every information state, checked: each
    row a distribution over that state's legal moves (``ValueError`` in one line otherwise)."""
    probs = np.asarray(target(tree.infostates, tree.masks), dtype=np.float64)
    if probs.shape != tree.masks.shape:
        raise ValueError(
            f"the target's probabilities have shape {list(probs.shape)}, expected {list(tree.masks.shape)}"
        )
    sums = probs.sum(axis=1)
    bad = (
        ~np.isfinite(probs).all(axis=1)
        | (probs < 0).any(axis=1)
        | ((probs > 0) & (tree.masks == 0)).any(axis=1)
        | (np.abs(sums - 1.0) > 1e-6)
    )
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"the target's move probabilities at information state {i} are not a distribution over "
            f"its legal moves (sum {sums[i]:.6g}, legal {np.flatnonzero(tree.masks[i]).tolist()})"
        )
    return probs


def exploitability(target: Any, variant: str = MINI.name, local: bool = False) -> Exploitability:
    """The exact best responses to ``target`` (a :class:`~hanamikoji_env.bots.base.Bot` with
    ``play_probabilities``, or a :data:`Target` function) playing both seats of ``variant``; with
    ``local``, the local best responses (:func:`local_best_response`) instead: what they find,
    at most the exact value."""
    fn = as_target(target, variant)
    tree = game_tree(variant)
    probs = target_probabilities(tree, fn)
    respond = local_best_response if local else best_response
    br = tuple(respond(tree, probs, seat)[0] for seat in (0, 1))
    on_policy = _policy_value(tree, probs)
    nash_conv = br[0] + br[1]  # minus the target's own values, which sum to 0 (zero-sum)
    return Exploitability(
        br_values=(float(br[0]), float(br[1])),
        nash_conv=nash_conv,
        br_score=0.5 + nash_conv / 4,
        target_values=(on_policy, -on_policy),
        infostates=len(tree.infostates),
        nodes=tree.num_nodes,
    )


def head_to_head(target: Any, opponent: Any, variant: str = MINI.name) -> float:
    """``target``'s exact expected score against ``opponent`` on ``variant`` (win 1, draw 1/2,
    loss 0; each a bot with ``play_probabilities`` or a :data:`Target`), both seatings equally
    likely: what infinitely many mirrored games would give, with no sampling error."""
    tree = game_tree(variant)
    mine, theirs = (target_probabilities(tree, as_target(p, variant)) for p in (target, opponent))
    returns = []
    for seat in (0, 1):
        own = (tree.info_mover == seat)[:, None]
        value = _policy_value(tree, np.where(own, mine, theirs))  # seat 0's return
        returns.append(value if seat == 0 else -value)
    return float(0.5 + sum(returns) / 4)  # a return r in [-1, 1] scores (1 + r) / 2


def _policy_value(tree: Tree, probs: np.ndarray) -> float:
    """Seat 0's expected return when the target plays both seats."""
    return float(node_values(tree, probs)[0])


def node_values(tree: Tree, probs: np.ndarray) -> np.ndarray:
    """Seat 0's expected return from every node when ``probs`` plays both seats (``[nodes]``)."""
    return _backward(tree, _weights(tree, probs))


def _weights(tree: Tree, probs: np.ndarray) -> np.ndarray:
    """Each node's probability given its parent: chance's below the root, ``probs``' at a decision."""
    edges = _edges(tree.variant.name)
    return np.where(edges.chooser >= 0, probs[np.maximum(edges.edge_info, 0), edges.move], tree.chance)


def _backward(tree: Tree, w: np.ndarray) -> np.ndarray:
    """Seat 0's expected return from every node, each edge taken with probability ``w`` (a
    depth of the tree at a time, deepest first: parents sum their children in their order)."""
    values = tree.value.copy()  # 0 above the leaves until summed
    for level in reversed(_edges(tree.variant.name).levels):
        np.add.at(values, tree.parent[level], w[level] * values[level])
    return values


def _reach(tree: Tree, probs: np.ndarray, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """Each node's probability by chance and the target's moves in the seat other than ``seat``
    (what ``seat`` believes of the nodes of its information states: Bayes, its own moves being
    common to them all), and ``seat``'s own decisions above each node."""
    own = _edges(tree.variant.name).chooser == seat
    w = np.where(own, 1.0, _weights(tree, probs))
    reach = np.ones(tree.num_nodes, dtype=np.float64)
    depth = np.zeros(tree.num_nodes, dtype=np.int64)
    for level in _edges(tree.variant.name).levels:  # shallowest first: parents before children
        par = tree.parent[level]
        reach[level] = reach[par] * w[level]
        depth[level] = depth[par] + own[level]
    return reach, depth


def local_best_response(tree: Tree, probs: np.ndarray, seat: int) -> tuple[float, np.ndarray]:
    """A local best response (Lisy and Bowling, 2017) with an exact belief, choosing a whole move
    of the game at once: at each of ``seat``'s information states, the move whose value is highest
    when the rest of the game is played by the target in both seats, each node weighted by its
    reach (chance and the target's own moves) -- except that the cards of the token it plays are
    chosen with it (a token and its cards are one move of the rules; no one else moves between
    them, so its belief is the same): while selecting, a card's value is that of the best way to
    finish the selection.  Returns ``seat``'s expected return playing those moves against the
    target, and the moves."""
    sign = 1.0 if seat == 0 else -1.0
    reach, _ = _reach(tree, probs, seat)
    worth = node_values(tree, probs) * sign  # the target's play from each node on
    nodes = np.flatnonzero(tree.mover == seat)
    edge_node = np.repeat(nodes, [len(tree.children[n]) for n in nodes.tolist()])
    edge_child = np.concatenate([np.asarray(tree.children[n], dtype=np.int64) for n in nodes.tolist()])
    edge_info = tree.infostate[edge_node]
    edge_move = tree.action[edge_child]
    mine = tree.info_mover == seat
    selecting = mine & (tree.infostates[:, O_PHASE + SELECT_PHASE] > 0)
    choice = np.full(len(tree.infostates), -1, dtype=np.int64)

    def choose(infos: np.ndarray) -> None:
        """The best move at each flagged information state, from the children's ``worth``."""
        edges = infos[edge_info]
        totals = np.zeros((len(tree.infostates), NUM_ACTIONS), dtype=np.float64)
        np.add.at(
            totals, (edge_info[edges], edge_move[edges]), reach[edge_node[edges]] * worth[edge_child[edges]]
        )
        totals[tree.masks == 0] = -np.inf
        choice[infos] = totals[infos].argmax(axis=1)

    for _ in range(MAX_SELECTION):  # the selections, from their last card back: one card a pass
        choose(selecting)
        chosen = selecting[edge_info] & (edge_move == choice[edge_info])
        worth[edge_node[chosen]] = worth[edge_child[chosen]]
    choose(mine)  # every decision, its children's worth now that of the best way to finish a turn
    played = probs.copy()
    played[mine] = 0.0
    played[np.flatnonzero(mine), choice[mine]] = 1.0
    return float(node_values(tree, played)[0] * sign), choice


def best_response(tree: Tree, probs: np.ndarray, seat: int) -> tuple[float, np.ndarray]:
    """``seat``'s best-response expected return against the target (``probs`` at every information
    state) in the other seat, and its move at each information state (``[I]``; -1 at the other
    seat's).

    The reach of each node by chance and the target alone, then backward induction over
    ``seat``'s information states, deepest first (by ``seat``'s own decisions above them): an
    information state's move is the one whose reach-weighted value over all its nodes is largest,
    the lowest move of equals (perfect recall makes those values depend only on deeper choices,
    already made)."""
    sign = 1.0 if seat == 0 else -1.0
    reach, depth = _reach(tree, probs, seat)
    info = _edges(tree.variant.name).edge_info
    kids = np.flatnonzero(_edges(tree.variant.name).chooser == seat)  # seat's moves
    level_of = depth[tree.parent[kids]]
    choice = np.full(len(tree.infostates), -1, dtype=np.int64)
    target = _weights(tree, probs)  # the other seat's and chance's edges, the same at every pass

    def weights() -> np.ndarray:
        """The edges' probabilities, ``seat`` playing ``choice`` (0 where it has not chosen yet)."""
        w = target.copy()
        w[kids] = tree.action[kids] == choice[info[kids]]
        return w

    for level in range(int(level_of.max(initial=-1)), -1, -1):
        values = _backward(tree, weights()) * sign  # deeper choices made
        edges = kids[level_of == level]
        par, where = tree.parent[edges], info[edges]
        totals = np.zeros((len(tree.infostates), NUM_ACTIONS), dtype=np.float64)
        np.add.at(totals, (where, tree.action[edges]), reach[par] * values[edges])
        decided = np.unique(where)
        totals = np.where(tree.masks[decided] > 0, totals[decided], -np.inf)
        choice[decided] = totals.argmax(axis=1)  # the first of equals: the lowest move
    return float(_backward(tree, weights())[0] * sign), choice


def tabular_target(table: dict[bytes, np.ndarray]) -> Target:
    """A target from a table: perfect-recall observation (as ``uint8`` bytes) -> probabilities."""

    def target(infostates: np.ndarray, masks: np.ndarray) -> np.ndarray:
        out = np.zeros(masks.shape, dtype=np.float64)
        for i, view in enumerate(infostates):
            row = table.get(infostate_key(view))
            if row is None:
                raise ValueError(f"the table has no move probabilities for information state {i}")
            out[i] = row
        return out

    return target


def uniform_target(infostates: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Every legal move equally likely (OpenSpiel's uniform random policy)."""
    m = masks.astype(np.float64)
    return m / m.sum(axis=1, keepdims=True)


def openspiel_table(game: Any, policy: Any) -> dict[bytes, np.ndarray]:
    """An OpenSpiel policy of ``python_hanamikoji(variant=...)`` (a Python ``policy.Policy`` or a
    pyspiel one, e.g. ``pyspiel.CFRPlusSolver``'s average) as a table for :func:`tabular_target`: its probabilities at every information state,
    keyed by that state's perfect-recall observation (the game's information-state tensor)."""
    table: dict[bytes, np.ndarray] = {}

    def walk(state: Any) -> None:
        if state.is_terminal():
            return
        if state.is_chance_node():
            for a, _ in state.chance_outcomes():
                walk(state.child(a))
            return
        player = state.current_player()
        key = infostate_key(np.asarray(state.information_state_tensor(player), dtype=np.float32))
        if key not in table:
            row = np.zeros(NUM_ACTIONS, dtype=np.float64)
            try:  # a Python policy takes the player too; pyspiel's C++ policies the state alone
                probs = policy.action_probabilities(state, player)
            except TypeError:
                probs = policy.action_probabilities(state)
            for a, p in probs.items():
                row[a] = p
            table[key] = row
        for a in state.legal_actions():
            walk(state.child(a))

    walk(game.new_initial_state())
    return table


def decks_of(variant: Variant) -> int:
    """How many distinct decks ``variant`` deals (the multinomial coefficient of its cards)."""
    total = math.factorial(variant.num_cards)
    for c in variant.values:
        total //= math.factorial(c)
    return total


def as_target(player: Any, variant: str = MINI.name) -> Target:
    """``player`` as a :data:`Target`: a bot through :func:`player_target`, a function as it is."""
    return player_target(player, variant) if hasattr(player, "play_probabilities") else player


def player_target(bot: Any, variant: str = MINI.name) -> Target:
    """``bot`` (a :class:`~hanamikoji_env.bots.base.Bot`) as a :data:`Target`, fed the observation
    version it reads; ``ValueError`` in one line, before any walking, for a bot that cannot give
    its move probabilities or a network trained on another variant."""
    bot.check_modelled(check_variant(variant).name)
    size = VERSIONS[bot.observation_version].size  # version 1 is version 2's first entries

    def target(infostates: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return bot.play_probabilities(np.ascontiguousarray(infostates[:, :size]), masks)

    return target


@dataclass(frozen=True)
class _Edges:
    """The tree's edges below decision nodes, grouped by depth for level-at-a-time passes."""

    levels: list[np.ndarray]
    """The non-root nodes of each depth, shallowest first."""
    edge_info: np.ndarray
    """Per node: the information state of its parent if a decision node chose it, else -1."""
    move: np.ndarray
    """Per node: the move that chose it (0 below the chance root, where an edge is a deck)."""
    chooser: np.ndarray
    """Per node: the seat whose move chose it, -1 below the chance root."""


@cache
def _edges(variant: str) -> _Edges:
    tree = game_tree(variant)
    depth = np.zeros(tree.num_nodes, dtype=np.int64)
    for node in range(1, tree.num_nodes):
        depth[node] = depth[tree.parent[node]] + 1
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(1, depth.max() + 2))
    levels = [order[bounds[d] : bounds[d + 1]] for d in range(len(bounds) - 1)]
    info = np.where(tree.parent >= 0, tree.infostate[np.maximum(tree.parent, 0)], -1)
    decided = info >= 0
    move = np.where(decided, tree.action, 0)
    chooser = np.where(decided, tree.info_mover[np.maximum(info, 0)], -1)
    return _Edges([lv for lv in levels if lv.size], info, move, chooser)


def cfr_plus(
    iterations: int, variant: str = MINI.name, progress: Callable[[int], None] | None = None
) -> np.ndarray:
    """The average strategy of CFR+ (Tammelin, 2014: regret matching+, alternating updates, the
    average weighted by iteration) after ``iterations`` on ``variant``'s tree: ``[I, 23]``
    probabilities at every information state, a :data:`Target` through :func:`table_target`."""
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {short(iterations)}")
    tree, edges = game_tree(variant), _edges(variant)
    masks = tree.masks.astype(np.float64)
    uniform = masks / masks.sum(axis=1, keepdims=True)
    regrets = np.zeros_like(masks)
    average = np.zeros_like(masks)
    info, parent, act, seat_of = edges.edge_info, tree.parent, edges.move, edges.chooser
    chosen_by = [np.flatnonzero(seat_of == who) for who in (0, 1)]
    for t in range(1, iterations + 1):
        for who in (0, 1):
            policy = _regret_matching(regrets, uniform)
            w = _weights(tree, policy)  # each edge's probability
            mine = np.ones(tree.num_nodes)  # reach by ``who``'s own moves
            others = np.ones(tree.num_nodes)  # by chance and the other seat
            for level in edges.levels:
                par = parent[level]
                own = seat_of[level] == who
                mine[level] = mine[par] * np.where(own, w[level], 1.0)
                others[level] = others[par] * np.where(own, 1.0, w[level])
            values = _backward(tree, w)  # seat 0's return
            rows = chosen_by[who]
            par = parent[rows]
            gain = (values[rows] - values[par]) * (1.0 if who == 0 else -1.0)
            np.add.at(regrets, (info[rows], act[rows]), others[par] * gain)
            np.maximum(regrets, 0.0, out=regrets)  # regret matching+: clipped every iteration
            np.add.at(average, (info[rows], act[rows]), t * mine[par] * w[rows])
        if progress is not None:
            progress(1)
    return _normalised(average, uniform)


def _regret_matching(regrets: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    return _normalised(np.maximum(regrets, 0.0), uniform)


def _normalised(weights: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """Each row of ``weights`` as a distribution; the uniform one where a row is all zero."""
    totals = weights.sum(axis=1, keepdims=True)
    return np.where(totals > 0, weights / np.where(totals > 0, totals, 1.0), uniform)


def table_target(probs: np.ndarray, variant: str = MINI.name) -> Target:
    """``[I, 23]`` probabilities over ``variant``'s information states, in the tree's order (as
    :func:`cfr_plus` returns them), as a :data:`Target`."""
    tree = game_tree(variant)
    if probs.shape != tree.masks.shape:
        raise ValueError(f"a table needs shape {list(tree.masks.shape)}, got {list(probs.shape)}")
    return tabular_target({key: probs[info] for key, info in tree.keys.items()})
