"""Images of a game: the public table, or the table as one seat sees it, as RGB arrays.

``draw_table(state)`` shows only public information: the geishas with their
charm and favour markers, the cards on both sides, the tokens each player has
left, hand sizes, the draw pile, an offer on the table and whose turn it is.
``draw_table(state, seat)`` adds that seat's own hand, Secret and Trade-off (as
:func:`hanamikoji_env.render.render_text` does for text).  Drawn with Pillow
on a background drawn once; a frame takes about a millisecond.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from hanamikoji_env.actions import TOKEN_NAMES
from hanamikoji_env.excerpt import short
from hanamikoji_env.rules import CENTRE, NUM_GEISHAS, VALUES, Phase, State, cards_of, score

WIDTH, HEIGHT = 660, 430
_COL, _LEFT = 90, 20
_TILE_Y, _TILE_H = 150, 56
_BG, _INK, _TILE = (246, 241, 231), (43, 33, 24), (243, 217, 177)
_SEAT_COLOURS = ((31, 111, 139), (162, 59, 91))
_MARKER = (212, 160, 23)
_GREY = (190, 182, 170)
_PHASE_TEXT = {
    Phase.TOKEN: "chooses a token",
    Phase.SELECT: "selects cards",
    Phase.SPLIT: "splits the Competition",
    Phase.GIFT_ANSWER: "takes a Gift card",
    Phase.COMP_ANSWER: "takes a Competition set",
}


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


@cache
def _background() -> Image.Image:
    """The parts of the picture that never change: the geisha tiles and labels."""
    img = Image.new("RGB", (WIDTH, HEIGHT), _BG)
    d = ImageDraw.Draw(img)
    for g in range(NUM_GEISHAS):
        x = _LEFT + g * _COL
        d.rounded_rectangle((x, _TILE_Y, x + _COL - 10, _TILE_Y + _TILE_H), 8, _TILE, (122, 92, 62), 2)
        d.text((x + 8, _TILE_Y + 8), f"G{g}", _INK, _font(16))
        d.text((x + 8, _TILE_Y + 30), f"charm {VALUES[g]}", _INK, _font(12))
    return img


def _card(d: ImageDraw.ImageDraw, x: int, y: int, geisha: int, colour: tuple[int, int, int]) -> None:
    d.rounded_rectangle((x, y, x + 30, y + 40), 4, (255, 250, 240), colour, 2)
    d.text((x + 6, y + 12), f"G{geisha}", _INK, _font(12))


def draw_table(
    state: State, seat: int | None = None, names: tuple[str, str] = ("player_0", "player_1")
) -> np.ndarray:
    """An ``[HEIGHT, WIDTH, 3]`` uint8 image of ``state``: public, or as ``seat`` sees it."""
    if seat not in (None, 0, 1):
        raise ValueError(f"seat must be None, 0 or 1, got {short(seat)}")
    img = _background().copy()
    d = ImageDraw.Draw(img)
    phase = state.phase
    if phase in _PHASE_TEXT:
        status = f"{names[state.to_move]} {_PHASE_TEXT[phase]}"
    elif phase == Phase.ROUND_OVER:
        status = "round over"
    else:
        status = "a draw" if state.winner == -1 else f"{names[state.winner]} wins"  # type: ignore[index]
    status = status if len(status) < 24 else status[:23] + "…"  # the score has the right half
    d.text((_LEFT, 10), f"Round {state.round} · turn {min(state.turn + 1, 8)}/8 · {status}", _INK, _font(16))
    (p0, p1), (g0, g1) = score(state.markers)  # as the markers stand: the final score once it is over
    tally = f"{names[0]} {p0} pts {g0} geishas · {names[1]} {p1} pts {g1} geishas"
    d.text((WIDTH - _LEFT - d.textlength(tally, _font(12)), 14), tally, _INK, _font(12))
    # cards on both sides (player_1 above the geishas, player_0 below) and the markers
    for g in range(NUM_GEISHAS):
        x = _LEFT + g * _COL + 8
        for k in range(state.placed[1][g]):
            d.rectangle((x + 14 * k, _TILE_Y - 52, x + 14 * k + 10, _TILE_Y - 14), _SEAT_COLOURS[1])
        for k in range(state.placed[0][g]):
            d.rectangle(
                (x + 14 * k, _TILE_Y + _TILE_H + 14, x + 14 * k + 10, _TILE_Y + _TILE_H + 52),
                _SEAT_COLOURS[0],
            )
        m = state.markers[g]
        cy = {CENTRE: _TILE_Y + _TILE_H // 2, 0: _TILE_Y + _TILE_H, 1: _TILE_Y}[m]
        cx = x + 58
        d.ellipse((cx - 9, cy - 9, cx + 9, cy + 9), _MARKER, (122, 92, 62), 2)
    # each player's tokens (spent ones greyed), hand size; the draw pile
    for s, y in ((1, 40), (0, 282)):
        d.text((_LEFT, y), f"{names[s]}: {sum(state.hands[s])} in hand", _SEAT_COLOURS[s], _font(13))
        for t, name in enumerate(TOKEN_NAMES):
            colour = _GREY if state.spent[s][t] else _SEAT_COLOURS[s]
            x = _LEFT + 170 + t * 92
            d.rounded_rectangle((x, y - 2, x + 86, y + 18), 6, None, colour, 2)
            d.text((x + 6, y + 1), name, colour, _font(12))
    d.text((_LEFT + 545, 40), f"draw pile {len(state.draw_pile)}", _INK, _font(13))
    # an offer on the table is public
    y = 312
    if phase == Phase.SPLIT:
        d.text((_LEFT, y), "Competition cards to split:", _INK, _font(13))
        _cards(d, _LEFT + 200, y, state.offer, _INK)
    elif phase == Phase.GIFT_ANSWER:
        d.text((_LEFT, y), "Gift on the table:", _INK, _font(13))
        _cards(d, _LEFT + 200, y, state.offer, _INK)
    elif phase == Phase.COMP_ANSWER:
        d.text((_LEFT, y), "Competition A | B:", _INK, _font(13))
        _cards(d, _LEFT + 200, y, state.offer[:2], _INK)
        _cards(d, _LEFT + 290, y, state.offer[2:], _INK)
    # the private part, for one seat only
    if seat is not None:
        y = 370
        colour = _SEAT_COLOURS[seat]
        d.text((_LEFT, y - 12), f"{names[seat]}'s hand", colour, _font(12))
        _cards(d, _LEFT, y + 4, cards_of(state.hands[seat]), colour)
        secret = state.secrets[seat]
        extra = f"Secret {'G' + str(secret) if secret >= 0 else '-'}  Trade-off " + (
            " ".join(f"G{g}" for g in cards_of(state.tradeoffs[seat])) or "-"
        )
        if phase == Phase.SELECT and state.current == seat:
            extra += f"  selected for {TOKEN_NAMES[state.token]}: " + " ".join(
                f"G{g}" for g in state.selection
            )
        d.text((_LEFT + 300, y + 16), extra, colour, _font(12))
    return np.asarray(img, dtype=np.uint8)


def _cards(
    d: ImageDraw.ImageDraw, x: int, y: int, cards: tuple[int, ...], colour: tuple[int, int, int]
) -> None:
    for k, g in enumerate(cards):
        _card(d, x + k * 36, y, g, colour)
