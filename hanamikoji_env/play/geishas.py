"""The geishas as the boards show them: a name and a colour each, declared once here.

The rules know a geisha by her index (0-6) and her charm value
(:data:`hanamikoji_env.rules.VALUES`); a person recognises a card faster by a
name and a colour.  The names are ours: flowers of at most six letters, one
initial each, so the terminal can show a card in two characters (``P3``).  The
colours are the Okabe-Ito palette, told apart by the common forms of colour
blindness, and the value and the name are printed beside them everywhere, so no
one needs the colour.  The
browser board gets this table from ``GET /api/opponents``, the terminal board
styles cards with it, and every log line names cards with :func:`card_label`.
"""

from __future__ import annotations

from typing import NamedTuple

from hanamikoji_env.rules import VALUES


class Geisha(NamedTuple):
    name: str
    colour: str
    """``#rrggbb``, bright enough to read on a dark background and dark text on it."""


GEISHAS: tuple[Geisha, ...] = (
    Geisha("Iris", "#56b4e9"),
    Geisha("Willow", "#009e73"),
    Geisha("Lotus", "#cc79a7"),
    Geisha("Maple", "#d55e00"),
    Geisha("Plum", "#e69f00"),
    Geisha("Orchid", "#f0e442"),
    Geisha("Sakura", "#0072b2"),
)


def card_label(g: int) -> str:
    """A geisha's card in words: her name and charm value, ``"Plum 3"``."""
    return f"{GEISHAS[g].name} {VALUES[g]}"


def short_label(g: int) -> str:
    """A card in two characters, her initial and value (``"P3"``), where space is short."""
    return f"{GEISHAS[g].name[0]}{VALUES[g]}"


def card_names(cards: tuple[int, ...] | list[int]) -> str:
    """Cards in words, ``"Iris 2, Plum 3"``; ``"-"`` for none."""
    return ", ".join(card_label(g) for g in cards) or "-"


def as_json() -> list[dict[str, object]]:
    """The table for the browser: name, charm value and colour of each geisha, by index."""
    return [{"name": g.name, "charm": VALUES[i], "colour": g.colour} for i, g in enumerate(GEISHAS)]
