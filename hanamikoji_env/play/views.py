"""What a person's view of the table holds, decoded from their own observation: the board, the
standing, a finished game's summary and the legal moves as a board draws them (no board computes
an action id).  Nothing here reads more than the :class:`~hanamikoji_env.observation.InfoSet` of
the person's observation, so nothing can show the opponent's hidden cards.
"""

from __future__ import annotations

from typing import Any

from hanamikoji_env import records
from hanamikoji_env.actions import (
    CARD,
    COMPETITION,
    GIFT,
    GIFT_TAKE,
    SECRET,
    SPLIT,
    TOKEN,
    TOKEN_NAMES,
    TOKEN_SIZES,
    TRADEOFF,
    decode_action,
    split_sets,
)
from hanamikoji_env.observation import InfoSet
from hanamikoji_env.play.geishas import card_label, card_names
from hanamikoji_env.rules import (
    CENTRE,
    NUM_GEISHAS,
    VALUES,
    WIN_GEISHAS,
    WIN_POINTS,
    Phase,
    cards_of,
)


def board(info: InfoSet) -> dict[str, Any]:
    """The table as the observing player sees it: all from their decoded observation."""
    owner = {CENTRE: None, 0: "you", 1: "opponent"}
    return {
        "charm": list(VALUES),
        "markers": [owner[m] for m in info.markers],
        "your_side": list(info.placed_me),
        "their_side": list(info.placed_opp),
        "hand": list(cards_of(info.hand)),
        "secret": info.secret,
        "tradeoff": list(cards_of(info.tradeoff)),
        "token": info.token,
        "selection": list(cards_of(info.selection)),
        "offer": list(cards_of(info.offer)),
        "set_a": list(cards_of(info.set_a)),
        "set_b": list(cards_of(info.set_b)),
        "your_tokens": [not s for s in info.spent_me],
        "their_tokens": [not s for s in info.spent_opp],
        "their_hand_size": info.opp_hand_size,
        "draw_pile_size": info.draw_pile_size,
        "your_decision": info.my_decision,
        "playing": playing(info),
        "their_face_down": {
            "secret": info.spent_opp[SECRET],
            "tradeoff": TOKEN_SIZES[TRADEOFF] * info.spent_opp[TRADEOFF],
        },
    }


OFFERS = {GIFT: "gift", COMPETITION: "competition"}
"""The tokens whose cards lie face up on the table until answered, as a board names them."""


def playing(info: InfoSet) -> dict[str, Any] | None:
    """The token on the table now, whose it is and whether its cards lie there as an offer
    (``{"token": t, "by": "you" | "opponent", "offer": "gift" | "competition" | None}``): a Gift
    or Competition offered and not yet answered, or the token whose cards are being chosen (the
    mover's, seen only by the mover); None between turns."""
    mover, other = ("you", "opponent") if info.my_decision else ("opponent", "you")
    return on_table(info.phase, info.token, mover, other)


def on_table(phase: Phase, token: int, mover: str | int, other: str | int) -> dict[str, Any] | None:
    """:func:`playing` for a position's ``phase`` and ``token``, the players named as the caller
    names them (``mover``: whoever decides now)."""
    if phase == Phase.SELECT and token >= 0:
        return {"token": token, "by": mover, "offer": None}
    if phase in (Phase.SPLIT, Phase.GIFT_ANSWER, Phase.COMP_ANSWER):
        token = GIFT if phase == Phase.GIFT_ANSWER else COMPETITION
        return {"token": token, "by": mover if phase == Phase.SPLIT else other, "offer": OFFERS[token]}
    return None


def round_end_board(
    before: InfoSet, summary: dict[str, Any], seat: int, mine: bool, action: int
) -> dict[str, Any]:
    """The table the person sees once a round's last move is played and before it is scored:
    every token spent, every card on the table with both Secrets still face down (the person's
    own shown to them), hands empty.  ``before`` is the person's observation before that move,
    ``summary`` the round's scoring (its ``placed`` holds the Secrets)."""
    me, opp = seat, 1 - seat
    table = board(before)
    hidden = [[int(g == summary["secrets"][s]) for g in range(NUM_GEISHAS)] for s in (me, opp)]
    tradeoff = list(cards_of(before.tradeoff))
    if mine and before.phase == Phase.SELECT and before.token == TRADEOFF:  # the person's last move
        tradeoff = sorted([*cards_of(before.selection), decode_action(action).index])
    table.update(
        your_side=[p - h for p, h in zip(summary["placed"][me], hidden[0], strict=True)],
        their_side=[p - h for p, h in zip(summary["placed"][opp], hidden[1], strict=True)],
        hand=[],
        secret=summary["secrets"][me],
        tradeoff=tradeoff,
        token=-1,
        selection=[],
        offer=[],
        set_a=[],
        set_b=[],
        your_tokens=[False] * len(TOKEN_NAMES),
        their_tokens=[False] * len(TOKEN_NAMES),
        their_hand_size=0,
        your_decision=False,
        playing=None,
    )
    return table


def standing(markers: list[str | None]) -> dict[str, dict[str, int]]:
    """Charm points and geishas of each side as the favour markers stand now."""
    return {
        side: {
            "charm": sum(VALUES[g] for g, m in enumerate(markers) if m == side),
            "geishas": sum(m == side for m in markers),
        }
        for side in ("you", "opponent")
    }


def game_summary(
    points: list[int], geishas: list[int], w: int | None, names: tuple[str, str], rounds: int
) -> dict[str, Any]:
    """The end of a game for two sides ``names`` (``points``/``geishas`` in that order, ``w`` the
    winner's index, None for a draw): the score, why it ended, and all of it in one sentence."""
    why = ending_reason(points, geishas, w, names, rounds)
    head = "a draw" if w is None else f"{names[w]} {'win' if names[w] == 'you' else 'wins'}"
    order = "yours first" if names[0] == "you" else f"{names[0]} first"
    text = (  # sentences, so a narrow board can put each on a line of its own
        f"Game over after {records.counted(rounds, 'round')}: {head}. Charm points {points[0]}-{points[1]}, "
        f"geishas {geishas[0]}-{geishas[1]} ({order}). {why[0].upper()}{why[1:]}."
    )
    return {"points": points, "geishas": geishas, "reason": why, "text": text}


def ending_reason(
    points: list[int], geishas: list[int], w: int | None, names: tuple[str, str], rounds: int
) -> str:
    """Why a game ended, in words: ``points``/``geishas`` of the two sides ``names`` (in that
    order), ``w`` the winner's index in them, None for a draw."""
    if w is None:
        return f"the round limit ({rounds}) was reached with charm points and geishas level"
    if points[w] >= WIN_POINTS:
        return f"{names[w]} reached {points[w]} charm points (a win at {WIN_POINTS})"
    if geishas[w] >= WIN_GEISHAS:
        return f"{names[w]} won the favour of {geishas[w]} geishas (a win at {WIN_GEISHAS})"
    lead = "more charm points" if points[w] != points[1 - w] else "more geishas"
    return f"the round limit ({rounds}) was reached and {names[w]} had {lead}"


def choice(action: int, info: InfoSet) -> dict[str, Any]:
    """A legal action as a board draws and sends it, decoded here so no board computes an id:
    ``action`` (the id to send), ``label`` (its words), ``kind`` (:func:`decode_action`'s),
    ``cards`` (the card it adds or takes, or the pair it takes), and by kind ``token`` (a token),
    ``sets`` (a split's two pairs) or ``pair`` (0 for pair A, 1 for B)."""
    kind, index = decode_action(action)
    out: dict[str, Any] = {"action": action, "label": choice_label(action, info), "kind": kind, "cards": []}
    if kind == TOKEN:
        out["token"] = index
    elif kind in (CARD, GIFT_TAKE):
        out["cards"] = [index]
    elif kind == SPLIT:
        out["sets"] = [list(s) for s in split_sets(cards_of(info.offer), index)]
    else:
        out["pair"] = index
        out["cards"] = list(cards_of(info.set_b if index else info.set_a))
    return out


def choice_label(action: int, info: InfoSet) -> str:
    """A person's words for a legal action in the position ``info`` describes."""
    kind, index = decode_action(action)
    if kind == TOKEN:
        n = TOKEN_SIZES[index]
        return f"{TOKEN_NAMES[index]} ({n} card{'s' if n > 1 else ''})"
    if kind == CARD:
        return card_label(index)
    if kind == SPLIT:
        a, b = split_sets(cards_of(info.offer), index)
        return f"{card_names(a)} | {card_names(b)}"
    if kind == GIFT_TAKE:
        return f"take {card_label(index)}"
    taken = info.set_b if index else info.set_a
    return f"take {'AB'[index]}: {card_names(cards_of(taken))}"
