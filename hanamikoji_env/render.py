"""Text views of a game: the public table, or the table as one seat sees it.

``render_text(state)`` shows only public information.  ``render_text(state,
seat)`` adds that seat's own private cards (hand, Secret, Trade-off, the
selection in progress) and nothing of the opponent's.
"""

from __future__ import annotations

from hanamikoji_env.actions import TOKEN_NAMES
from hanamikoji_env.excerpt import short
from hanamikoji_env.rules import CENTRE, NUM_GEISHAS, VALUES, Phase, State, cards_of

_PHASE_TEXT = {
    Phase.TOKEN: "chooses an action token",
    Phase.SELECT: "selects cards",
    Phase.SPLIT: "splits the Competition cards",
    Phase.GIFT_ANSWER: "takes one Gift card",
    Phase.COMP_ANSWER: "takes one Competition set",
}


def _cards(geishas: tuple[int, ...] | list[int]) -> str:
    return "[" + " ".join(f"G{g}" for g in geishas) + "]" if geishas else "[]"


def _row(label: str, cells: list[str]) -> str:
    return f"{label:<14}" + "".join(f"{c:>5}" for c in cells)


def render_text(
    state: State, seat: int | None = None, names: tuple[str, str] = ("player_0", "player_1")
) -> str:
    """A multi-line view of ``state``: public, or as ``seat`` (0 or 1) sees it."""
    if seat not in (None, 0, 1):
        raise ValueError(f"seat must be None, 0 or 1, got {short(seat)}")
    lines = [f"Round {state.round} (started by {names[state.starter]}), turn {min(state.turn + 1, 8)}/8"]
    marker = {CENTRE: ".", 0: "P0", 1: "P1"}
    lines.append(_row("geisha", [f"G{g}" for g in range(NUM_GEISHAS)]))
    lines.append(_row("charm", [str(v) for v in VALUES]))
    lines.append(_row(f"{names[1]} side", [str(c) for c in state.placed[1]]))
    lines.append(_row("marker", [marker[m] for m in state.markers]))
    lines.append(_row(f"{names[0]} side", [str(c) for c in state.placed[0]]))
    for s in (0, 1):
        spent = [TOKEN_NAMES[t] for t in range(4) if state.spent[s][t]]
        lines.append(f"{names[s]}: {sum(state.hands[s])} cards in hand, spent: {', '.join(spent) or '-'}")
    lines.append(f"draw pile: {len(state.draw_pile)} cards")
    phase = state.phase
    public_token = phase in (Phase.SPLIT, Phase.GIFT_ANSWER, Phase.COMP_ANSWER)
    if phase == Phase.SPLIT:
        lines.append(f"on the table: Competition cards {_cards(state.offer)} being split")
    elif phase == Phase.GIFT_ANSWER:
        lines.append(f"on the table: Gift {_cards(state.offer)}")
    elif phase == Phase.COMP_ANSWER:
        lines.append(
            f"on the table: Competition sets A {_cards(state.offer[:2])} | B {_cards(state.offer[2:])}"
        )
    if phase in _PHASE_TEXT:
        doing = _PHASE_TEXT[phase]
        if public_token or (phase == Phase.SELECT and seat == state.current):
            doing += f" ({TOKEN_NAMES[state.token]})"
        elif phase == Phase.SELECT:
            doing = "plays an action token"
        lines.append(f"to move: {names[state.to_move]}, who {doing}")
    elif phase == Phase.ROUND_OVER:
        lines.append("round over: the next round is dealt")
    else:
        w = state.winner
        lines.append("game over: a draw" if w == -1 else f"game over: {names[w]} wins")  # type: ignore[index]
    if state.last_round is not None:
        r = state.last_round
        lines.append(
            f"scoring of round {r.round}: secrets {names[0]} G{r.secrets[0]}, {names[1]} G{r.secrets[1]};"
            f" points {r.points[0]}-{r.points[1]}, geishas {r.geishas[0]}-{r.geishas[1]}"
        )
    if seat is not None:
        lines.append(f"-- private to {names[seat]} --")
        lines.append(f"hand: {_cards(cards_of(state.hands[seat]))}")
        secret = state.secrets[seat]
        if secret < 0 and phase >= Phase.ROUND_OVER and state.last_round is not None:
            revealed = state.last_round.secrets[seat]  # scored: on its side now, and public
            lines.append(f"secret: {_cards([revealed] if revealed >= 0 else [])} (revealed at the scoring)")
        else:
            lines.append(f"secret: {_cards([secret] if secret >= 0 else [])}")
        lines.append(f"trade-off: {_cards(cards_of(state.tradeoffs[seat]))}")
        if phase == Phase.SELECT and state.current == seat:
            lines.append(f"selected for {TOKEN_NAMES[state.token]}: {_cards(state.selection)}")
    return "\n".join(lines)
