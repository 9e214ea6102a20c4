"""The log of a person's game: the moves they saw happen between two of their own observations,
told in words with the cards they may see (:func:`describe`), and a round's scoring as the
round-end screen shows it (:func:`scoring_event`).
"""

from __future__ import annotations

from typing import Any

from hanamikoji_env.actions import (
    SECRET,
    TOKEN_NAMES,
    TRADEOFF,
    decode_action,
)
from hanamikoji_env.observation import InfoSet
from hanamikoji_env.play.geishas import card_label, card_names
from hanamikoji_env.rules import (
    CENTRE,
    NUM_GEISHAS,
    Phase,
    cards_of,
)


def event(who: str, kind: str, cards: list[int], text: str) -> dict[str, Any]:
    return {"who": who, "kind": kind, "cards": cards, "text": text}


def _minus(a: tuple[int, ...], b: tuple[int, ...]) -> list[int]:
    return list(cards_of(tuple(max(0, x - y) for x, y in zip(a, b, strict=True))))


def describe(
    before: InfoSet, after: InfoSet, mine: bool, action: int | None, swap: bool = False
) -> list[dict[str, Any]]:
    """The moves the observing player saw happen between two of their observations in one round.

    ``mine``: the observer took the action; ``action`` is given only when the
    observer may know it (their own, or a public split or answer).  Token plays
    are told when they complete, as at the table.  ``swap``: the observer's Competition calls
    the engine's pair B "A" (the pairs as they built them)."""
    b, a = before, after
    who, subject, s = ("you", "You", "") if mine else ("opponent", "The opponent", "s")
    out = []
    if b.phase == Phase.SELECT and a.phase == Phase.GIFT_ANSWER:
        cards = list(cards_of(a.offer))
        out.append(event(who, "gift", cards, f"{subject} offer{s} a Gift: {card_names(cards)}."))
    elif b.phase == Phase.SELECT and a.phase == Phase.SPLIT:
        cards = list(cards_of(a.offer))
        verb = "play" if mine else "plays"
        out.append(
            event(who, "competition", cards, f"{subject} {verb} Competition with {card_names(cards)}.")
        )
    elif b.phase == Phase.SPLIT and a.phase == Phase.COMP_ANSWER:
        sa, sb = list(cards_of(a.set_a)), list(cards_of(a.set_b))
        if swap:
            sa, sb = sb, sa
        out.append(
            event(
                who,
                "split",
                sa + sb,
                f"{subject} split{s} them: pair A {card_names(sa)} | pair B {card_names(sb)}.",
            )
        )
    elif b.phase in (Phase.GIFT_ANSWER, Phase.COMP_ANSWER):
        out += describe_last(b, mine, action, swap)
    else:
        spent_b = b.spent_me if mine else b.spent_opp
        spent_a = a.spent_me if mine else a.spent_opp
        for t in (SECRET, TRADEOFF):
            if spent_a[t] and not spent_b[t]:
                cards = [a.secret] if t == SECRET else list(cards_of(a.tradeoff))
                out.append(_token_event(t, mine, cards))
    if a.draw_pile_size < b.draw_pile_size:
        if a.my_decision and a.phase == Phase.TOKEN:
            drawn = _minus(a.hand, b.hand)
            out.append(event("you", "draw", drawn, f"You draw {card_names(drawn)}."))
        else:
            out.append(event("opponent", "draw", [], "The opponent draws a card."))
    return out


def describe_last(
    before: InfoSet, mine: bool, action: int | None, swap: bool = False
) -> list[dict[str, Any]]:
    """An answer (``action`` is public), or the move that ended a round, told from the
    observation before it: the last token of a round is the one its player has not spent.
    ``swap`` as for :func:`describe`."""
    b = before
    who, subject, s = ("you", "You", "") if mine else ("opponent", "The opponent", "s")
    yours = "the opponent's" if mine else "your"
    if b.phase == Phase.GIFT_ANSWER and action is not None:
        g = decode_action(action).index
        rest = _minus(b.offer, tuple(int(i == g) for i in range(NUM_GEISHAS)))
        return [
            event(
                who, "take", [g], f"{subject} take{s} {card_label(g)}; {card_names(rest)} go to {yours} side."
            )
        ]
    if b.phase == Phase.COMP_ANSWER and action is not None:
        a_taken = decode_action(action).index == 0
        taken = list(cards_of(b.set_a if a_taken else b.set_b))
        left = cards_of(b.set_b if a_taken else b.set_a)
        letter = "A" if a_taken != swap else "B"
        text = (
            f"{subject} take{s} pair {letter} ({card_names(taken)}); {card_names(left)} go to {yours} side."
        )
        return [event(who, "take", taken, text)]
    if b.phase == Phase.SELECT:
        spent = b.spent_me if mine else b.spent_opp
        left = [t for t in (SECRET, TRADEOFF) if not spent[t]]
        if len(left) == 1 and all(spent[t] for t in range(len(spent)) if t != left[0]):
            cards = [] if action is None else sorted(cards_of(b.selection)) + [decode_action(action).index]
            return [_token_event(left[0], mine, cards)]
    return []


def _token_event(token: int, mine: bool, cards: list[int]) -> dict[str, Any]:
    name = TOKEN_NAMES[token]
    if not mine:
        what = "a card face down" if token == SECRET else "two cards out of the round, face down"
        return event("opponent", name.lower(), [], f"The opponent plays {name}: {what}.")
    if token == SECRET:
        return event("you", "secret", cards, f"You play Secret: {card_names(cards)}, face down.")
    return event("you", "trade-off", cards, f"You play Trade-off: {card_names(cards)} leave the round.")


def scoring_event(
    summaries: list[dict[str, Any]], seat: int, result: dict[str, Any] | None
) -> dict[str, Any]:
    """The latest scoring from the person's side, for the log and the round-end screen: the
    revealed Secrets, each geisha's cards on both sides (Secrets included, never a Trade-off),
    the markers before and after, and the totals.  All of it is public once a round is scored."""
    me, opp = seat, 1 - seat
    s = summaries[-1]
    owner = {CENTRE: None, me: "you", opp: "opponent"}
    before = summaries[-2]["markers"] if len(summaries) > 1 else [CENTRE] * NUM_GEISHAS
    text = (
        f"Round {s['round']} scored: Secrets revealed (you {card_label(s['secrets'][me])}, the opponent "
        f"{card_label(s['secrets'][opp])}); charm points {s['points'][me]}-{s['points'][opp]}, "
        f"geishas {s['geishas'][me]}-{s['geishas'][opp]} (yours first)."
    )
    e = event("table", "scoring", [], text)
    e["round"] = s["round"]
    e["secrets"] = [s["secrets"][me], s["secrets"][opp]]
    e["placed"] = [list(s["placed"][me]), list(s["placed"][opp])]
    e["markers_before"] = [owner[m] for m in before]
    e["markers"] = [owner[m] for m in s["markers"]]
    e["points"] = [s["points"][me], s["points"][opp]]
    e["geishas"] = [s["geishas"][me], s["geishas"][opp]]
    e["final"] = result is not None and result.get("points") is not None
    return e
