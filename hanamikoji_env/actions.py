"""The 23-id action contract shared by every engine, env, bot and policy.

| id     | phase        | who            | meaning                                                     |
|--------|--------------|----------------|-------------------------------------------------------------|
| 0      | token        | turn player    | play Secret (1 card)                                        |
| 1      | token        | turn player    | play Trade-off (2 cards)                                    |
| 2      | token        | turn player    | play Gift (3 cards)                                         |
| 3      | token        | turn player    | play Competition (4 cards)                                  |
| 4..10  | select       | turn player    | add one card of geisha ``id - 4`` to the selection          |
| 11..13 | split        | turn player    | split the sorted Competition cards c0<=c1<=c2<=c3 into      |
|        |              |                | ``{c0,c1|c2,c3}``, ``{c0,c2|c1,c3}``, ``{c0,c3|c1,c2}``     |
| 14..20 | gift answer  | opponent       | take the offered card of geisha ``id - 14``                 |
| 21     | comp. answer | opponent       | take the set that holds c0                                  |
| 22     | comp. answer | opponent       | take the other set                                          |

Cards are selected one at a time in non-decreasing geisha order, so every
multiset of cards has exactly one action sequence; the mask only allows cards
from which the selection can still be completed.  A split that gives the same
two sets as a lower id is masked out, and so is 22 when both sets are equal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from hanamikoji_env.excerpt import short

SECRET, TRADEOFF, GIFT, COMPETITION = 0, 1, 2, 3
TOKEN_NAMES = ("Secret", "Trade-off", "Gift", "Competition")
NUM_TOKENS = len(TOKEN_NAMES)
TOKEN_SIZES = (1, 2, 3, 4)
"""Cards used by each token, indexed by token id."""

CARD_BASE = 4
SPLIT_BASE = 11
GIFT_TAKE_BASE = 14
COMP_TAKE_A = 21
COMP_TAKE_B = 22
NUM_ACTIONS = 23

SPLITS = ((0, 1, 2, 3), (0, 2, 1, 3), (0, 3, 1, 2))
"""Index order of each split: the first two sorted cards form set A (it holds c0)."""


def check_action(action: object, who: str = "the player to move") -> int:
    """``action`` as an int id: an int (numpy's too) or a one-element int array.  ``TypeError``
    for anything else (None included: only a finished agent passes None, and the env checks
    that first), ``ValueError`` out of range.  Legality is the engine's to check."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        a = int(action)
    elif isinstance(action, np.ndarray) and action.shape in ((), (1,)) and action.dtype.kind in "iu":
        a = int(action.reshape(()))
    else:
        raise TypeError(f"action for {who} must be an int in [0, {NUM_ACTIONS}), got {short(action)}")
    if not 0 <= a < NUM_ACTIONS:
        raise ValueError(f"illegal action {a} for {who}: out of range, action ids are 0..{NUM_ACTIONS - 1}")
    return a


TOKEN, CARD, SPLIT, GIFT_TAKE, COMP_TAKE = "token", "card", "split", "gift-take", "comp-take"
"""The kinds of action, as :func:`decode_action` names them."""


class Decoded(NamedTuple):
    """An action id as its kind and the number it carries."""

    kind: str
    index: int
    """TOKEN: the token id; CARD: the geisha chosen; SPLIT: which of :data:`SPLITS`;
    GIFT_TAKE: the geisha taken; COMP_TAKE: 0 for set A, 1 for set B."""


def decode_action(action: int) -> Decoded:
    """The one decoder of the action-id ranges (``ValueError`` outside ``[0, 23)``)."""
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action must be an int in [0, {NUM_ACTIONS}), got {short(action)}")
    a = int(action)
    if a < CARD_BASE:
        return Decoded(TOKEN, a)
    if a < SPLIT_BASE:
        return Decoded(CARD, a - CARD_BASE)
    if a < GIFT_TAKE_BASE:
        return Decoded(SPLIT, a - SPLIT_BASE)
    if a < COMP_TAKE_A:
        return Decoded(GIFT_TAKE, a - GIFT_TAKE_BASE)
    return Decoded(COMP_TAKE, a - COMP_TAKE_A)


def split_sets(cards: Sequence[int], split: int) -> tuple[list[int], list[int]]:
    """Sets A and B of split number ``split`` of the four sorted Competition ``cards``."""
    i = SPLITS[split]
    return [cards[i[0]], cards[i[1]]], [cards[i[2]], cards[i[3]]]


def action_name(action: int) -> str:
    """A short readable name, e.g. ``'card:geisha3'`` or ``'split:{c0,c2|c1,c3}'``."""
    kind, index = decode_action(action)
    if kind == TOKEN:
        return f"token:{TOKEN_NAMES[index]}"
    if kind in (CARD, GIFT_TAKE):
        return f"{kind}:geisha{index}"
    if kind == SPLIT:
        a, b = split_sets(("c0", "c1", "c2", "c3"), index)  # type: ignore[arg-type]
        return f"split:{{{','.join(a)}|{','.join(b)}}}"
    return f"comp-take:{'AB'[index]}"
