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

import numpy as np

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
        raise TypeError(f"action for {who} must be an int in [0, {NUM_ACTIONS}), got {action!r}")
    if not 0 <= a < NUM_ACTIONS:
        raise ValueError(f"illegal action {a} for {who}: out of range, action ids are 0..{NUM_ACTIONS - 1}")
    return a


def action_name(action: int) -> str:
    """A short readable name, e.g. ``'card:geisha3'`` or ``'split:{c0,c2|c1,c3}'``."""
    if not isinstance(action, int) or not 0 <= action < NUM_ACTIONS:
        raise ValueError(f"action must be an int in [0, {NUM_ACTIONS}), got {action!r}")
    if action < CARD_BASE:
        return f"token:{TOKEN_NAMES[action]}"
    if action < SPLIT_BASE:
        return f"card:geisha{action - CARD_BASE}"
    if action < GIFT_TAKE_BASE:
        i = SPLITS[action - SPLIT_BASE]
        return f"split:{{c{i[0]},c{i[1]}|c{i[2]},c{i[3]}}}"
    if action < COMP_TAKE_A:
        return f"gift-take:geisha{action - GIFT_TAKE_BASE}"
    return "comp-take:A" if action == COMP_TAKE_A else "comp-take:B"
