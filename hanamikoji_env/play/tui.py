"""Play Hanamikoji against any bot in the terminal (a full-screen Textual app).

    hanamikoji-play --opponent heuristic [--seat 0|1] [--seed S] [--round-limit N] [--record FILE]

The header line tells the round, whose move it is, the score as the favour
markers stand and the draw pile.  Below it: the geishas by name (each on her
colour, :mod:`hanamikoji_env.play.geishas`) with their charm and markers (``^``
the opponent's, ``v`` yours, ``.`` nobody's yet), the cards on both sides, what
each player has face down and the tokens both have left, the Gift or
Competition being played on the table (whose it is), your hand and the moves as
they happen.  Where space is short (under :data:`FULL_NAMES_WIDTH` columns) a card
is its initial and value on her colour (``P3``: Plum, 3 charm), wider its full
name, the text on it black or white, whichever contrasts more, so it reads on
dark and light terminals alike.

Your choices are numbered: press the number.  A token's cards are chosen in any
order: pick the token, then press the numbers of the cards in your hand to
select or put back each one; ``Enter`` confirms, ``Esc`` cancels.  An answer to a
Gift or a Competition is chosen by its number and played on ``Enter`` (``Esc``
chooses again).  At the end of each round the scoring stays on screen (the
revealed Secrets, each geisha's cards and marker, the totals) until you press
``Enter``, over that round's last table.  ``?`` shows the rules.  When the game is over ``n`` starts another
against the same opponent from the other seat; ``q`` quits (a game in progress
only after you confirm).  With ``--record FILE`` every finished game is appended
to FILE as a game record (:mod:`hanamikoji_env.records`), and so is what was
played of a game you quit (a record whose result is null).  No line runs off its
panel at 80x24 or wider: the choices go onto lines of their own, a long log line
goes on, indented, on the next row.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, RichLog, Static

from hanamikoji_env.actions import COMPETITION, GIFT, TOKEN_NAMES, TOKEN_SIZES
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.excerpt import clip
from hanamikoji_env.first_run import announce, parts_for
from hanamikoji_env.play.geishas import GEISHAS, card_label, short_label
from hanamikoji_env.play.session import GameSession
from hanamikoji_env.records import counted
from hanamikoji_env.rules import (
    HAND_SIZE,
    NUM_CARDS,
    NUM_GEISHAS,
    NUM_REMOVED,
    VALUES,
    WIN_GEISHAS,
    WIN_POINTS,
)

_MARK = {None: ".", "you": "v you", "opponent": "^ opp"}
OUTCOME_STYLES = {
    "you": "bold #ffffff on #1a7f37",
    "opponent": "bold #ffffff on #b3261e",
    "draw": "bold #000000 on #f2c94c",
}
"""A game's outcome by its winner, as a chip that reads on any terminal (green won, red lost)."""
_NAME = 12
"""An opponent's spec is clipped to this many characters on the board (a line is 80)."""


def contrast(a: str, b: str) -> float:
    """The WCAG contrast ratio of two ``#rrggbb`` colours (1 to 21; 4.5 reads as body text)."""

    def luminance(colour: str) -> float:
        channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def chip(g: int) -> str:
    """A geisha's style: her colour as the background, black or white text on it (whichever
    contrasts more), so a card reads the same on a dark terminal and a light one."""
    colour = GEISHAS[g].colour
    text = max(("#000000", "#ffffff"), key=lambda t: contrast(t, colour))
    return f"bold {text} on {colour}"


FULL_NAMES_WIDTH = 100
"""A status panel at least this wide names cards in full (``Sakura 5``), narrower in two
characters (``S5``)."""


def cards_text(cards: list[int], sep: str = " ", full: bool = False) -> Text:
    """Cards in their two-character form (``P3``; ``full``: ``Purple 3``), each on her colour;
    ``-`` for none."""
    text = Text()
    for i, g in enumerate(cards):
        text.append(sep if i else "")
        text.append(card_label(g) if full else short_label(g), style=chip(g))
    return text if cards else Text("-")


def wrap_words(line: str, width: int) -> list[str]:
    """``line`` in rows of at most ``width`` columns, broken between words, each row after the
    first indented two columns: a long log line is read whole, and the next move still starts a
    row of its own."""
    return textwrap.wrap(line, max(width, 8), subsequent_indent="  ", break_on_hyphens=False) or [""]


def sentences(text: str) -> list[str]:
    """``text`` a sentence a line (after each ``". "``), so a narrow screen breaks it between
    sentences, never inside one."""
    return [p if p.endswith(".") else p + "." for p in text.split(". ")]


def opponent_name(view: dict[str, Any]) -> str:
    return clip(view["opponent"], _NAME)


def header_text(view: dict[str, Any], width: int = 80) -> Text:
    """Round, whose move, the score as the markers stand and the draw pile, on one line of at
    most ``width`` columns (the opponent's name gives way first)."""
    s = view["score"]
    you, opp = s["you"], s["opponent"]
    practice = " · practice" if view["practice"] else ""
    for theirs in (f"{opponent_name(view)} to move", "opponent to move", "their move"):
        whose = {"you": "your move", "opponent": theirs, None: "game over", "scored": "round over"}
        line = (
            f" Round {view['round']} · {whose[view['to_move']]} · charm {you['charm']}-{opp['charm']} · "
            f"geishas {you['geishas']}-{opp['geishas']} (you-opp) · pile {view['board']['draw_pile_size']}"
            + practice
        )
        if len(line) <= width:
            break
    return Text(line, style="bold")


def board_table(view: dict[str, Any]) -> Table:
    """The geishas, both sides and the markers as a rich table."""
    b = view["board"]
    t = Table(box=None, pad_edge=False, show_header=True, header_style="bold", expand=True)
    t.add_column("", justify="left", min_width=9)
    for g in range(NUM_GEISHAS):
        t.add_column(Text(GEISHAS[g].name, style=chip(g)), justify="center", min_width=6)
    t.add_row("charm", *(str(c) for c in b["charm"]))
    t.add_row("opponent", *(str(n) if n else "·" for n in b["their_side"]), style="magenta")
    t.add_row("marker", *(_MARK[m] for m in b["markers"]), style="yellow")
    t.add_row("you", *(str(n) if n else "·" for n in b["your_side"]), style="cyan")
    return t


def playing(view: dict[str, Any]) -> tuple[str, int] | None:
    """Whose token is being played now and which (``("opponent", 2)``: their Gift), while its
    offer is open: a Gift until it is answered, a Competition until it is split and answered."""
    phase, your_move = view["phase"], view["your_move"]
    if phase == "GIFT_ANSWER":
        return ("opponent" if your_move else "you"), GIFT
    if phase == "COMP_ANSWER":
        return ("opponent" if your_move else "you"), COMPETITION
    if phase == "SPLIT":
        return ("you" if your_move else "opponent"), COMPETITION
    return None


def status_text(
    view: dict[str, Any], pending: dict[str, Any] | None = None, width: int = 76, answer: int | None = None
) -> Text:
    """Hands, tokens, the offer on the table and the person's numbered choices.  ``pending``:
    the token and the hand positions selected so far; ``answer``: the Gift or pair answer chosen
    and not yet confirmed (see :class:`PlayApp`)."""
    b = view["board"]
    live = playing(view)
    full = width >= FULL_NAMES_WIDTH

    def cards(c: list[int]) -> Text:
        return cards_text(c, full=full)

    def tokens(side: str, available: list[bool]) -> str:  # the one being played is on the table
        left = [TOKEN_NAMES[t] for t, ok in enumerate(available) if ok and live != (side, t)]
        return f"left: {', '.join(left) or '-'}"

    down = [name for t, name in ((0, "Secret"), (1, "Trade-off")) if not b["their_tokens"][t]]
    revealed = view["result"] is not None and view.get("last_round") and view["last_round"]["secrets"][1]
    text = Text()
    text.append(f"{opponent_name(view)}: ", style="bold magenta")
    text.append(f"{b['their_hand_size']} in hand · ")
    if revealed is not None and revealed is not False and "Secret" in down:  # scored: no longer face down
        down.remove("Secret")
        text.append("Secret ").append(cards([revealed])).append(" (revealed) · ")
    if down:
        text.append(f"down: {', '.join(down)} · ")
    text.append(tokens("opponent", b["their_tokens"]) + "\n")
    text.append("You: ", style="bold cyan")
    text.append("Secret ").append(cards([b["secret"]] if b["secret"] >= 0 else []))
    text.append(" · Trade-off ").append(cards(b["tradeoff"]))
    text.append(" · " + tokens("you", b["your_tokens"]) + "\n")
    if live is not None:
        text.append("On the table: ", style="bold")
        text.append("your " if live[0] == "you" else f"{opponent_name(view)}'s ")
        if view["phase"] == "GIFT_ANSWER":
            text.append("Gift ").append(cards(b["offer"]))
        elif view["phase"] == "SPLIT":
            text.append("Competition ").append(cards(b["offer"])).append(" to split")
        else:
            text.append("Competition: pair A ").append(cards(b["set_a"]))
            text.append(" | pair B ").append(cards(b["set_b"]))
        text.append("\n")
    selecting = pending is not None
    text.append("Your hand: ", style="bold")
    if selecting:
        for i, g in enumerate(b["hand"]):
            on = i in pending["cards"]  # type: ignore[index]
            text.append(f"[{i + 1}]", style="bold cyan")
            name = card_label(g) if full else short_label(g)
            text.append(f"{'*' if on else ''}{name}{'*' if on else ''}", style=chip(g))
            text.append(" ")
    else:
        text.append(cards(b["hand"]))
    text.append("\n")
    if view["result"] is not None:
        r = view["result"]
        won = {
            "you": ("You won! ", OUTCOME_STYLES["you"]),
            "opponent": ("You lost. ", OUTCOME_STYLES["opponent"]),
        }
        words, style = won.get(r["winner"], ("A draw. ", OUTCOME_STYLES["draw"]))
        text.append(words, style=style)
        text.append(r["reason"][0].upper() + r["reason"][1:] + ".\n")
        text.append("Press n to play again, q to quit.", style="bold")
    elif not view["your_move"]:
        text.append(f"{opponent_name(view)} is thinking...")
    elif selecting:
        name, need = TOKEN_NAMES[pending["token"]], pending["needed"] - len(pending["cards"])  # type: ignore[index]
        text.append(f"{name}: ", style="bold")
        text.append("selected ").append(cards([b["hand"][i] for i in pending["cards"]]))  # type: ignore[index]
        text.append("; " + (f"choose {need} more by number" if need else "Enter confirms"))
        text.append(", Esc " + ("clears" if pending["fixed"] else "cancels"))  # type: ignore[index]
    elif answer is not None:
        label = next(c["label"] for c in view["choices"] if c["action"] == answer)
        text.append("Your answer: ", style="bold").append(label)
        text.append("; Enter confirms, Esc chooses again")
    else:
        text.append("Your move:", style="bold")
        column = len("Your move:")
        for i, c in enumerate(numbered_choices(view), 1):
            choice = f"[{i}] {c['label']}"
            if column + 2 + len(choice) > width:  # a new line rather than one that wraps mid-choice
                text.append("\n")
                column = -2
            text.append(" " if column == len("Your move:") else "  " if column >= 0 else "")
            text.append(f"[{i}]", style="bold cyan").append(f" {c['label']}")
            column += 2 + len(choice)
    return text


def numbered_choices(view: dict[str, Any]) -> list[dict[str, Any]]:
    """The choices behind the number keys when no cards are being selected: the tokens left at
    the start of a turn, otherwise the legal actions."""
    turn = view["turn"]
    if turn is not None and turn["token"] is None:
        return [
            {"token": t["token"], "label": f"{t['name']} ({t['cards']} card{'s' if t['cards'] > 1 else ''})"}
            for t in turn["tokens"]
        ]
    return view["choices"]


def scoring_table(event: dict[str, Any]) -> Table:
    """A scored round: each geisha's cards on both sides (Secrets included) and its marker."""
    t = Table(title=f"Round {event['round']} scored", box=None, header_style="bold")
    for name in ("geisha", "you", "opponent", "favour"):
        t.add_column(name, justify="center")
    for g in range(NUM_GEISHAS):
        before, after = event["markers_before"][g], event["markers"][g]
        owner = {None: "nobody", "you": "you", "opponent": "opponent"}
        marker = f"{owner[before]} -> {owner[after]}" if before != after else owner[after]
        t.add_row(
            Text(card_label(g), style=chip(g)),  # on her colour: readable on any terminal
            str(event["placed"][0][g]),
            str(event["placed"][1][g]),
            marker,
            style="bold" if before != after else "",
        )
    return t


class RoundEnd(ModalScreen[None]):
    """The end of a round, held until the person moves on."""

    BINDINGS = [Binding("enter,space,escape", "dismiss", "continue")]
    DEFAULT_CSS = """
    RoundEnd { align: center middle; }
    RoundEnd > Vertical { width: 100%; max-width: 100; height: auto; max-height: 100%; border: round $accent; padding: 0 1; background: $surface; }
    RoundEnd Static { width: 100%; height: auto; }
    """

    def __init__(self, event: dict[str, Any], result: dict[str, Any] | None) -> None:
        super().__init__()
        self.event, self.result = event, result
        self.shown = ""
        """The text shown (for tests and tools)."""

    def compose(self) -> ComposeResult:
        e = self.event
        lines = Text(
            f"Secrets revealed: you {card_label(e['secrets'][0])}, opponent {card_label(e['secrets'][1])}\n"
            f"Totals: you {counted(e['points'][0], 'charm point')}, {counted(e['geishas'][0], 'geisha')}\n"
            f"        opponent {counted(e['points'][1], 'charm point')}, {counted(e['geishas'][1], 'geisha')}\n"
        )
        if e["final"] and self.result is not None:
            outcome = OUTCOME_STYLES.get(self.result["winner"], OUTCOME_STYLES["draw"])
            lines.append("\n".join(sentences(self.result["text"])) + "\n", style=outcome)
        lines.append("Press Enter to continue.", style="bold")
        self.shown = lines.plain
        with Vertical():
            yield Static(scoring_table(e))
            yield Static(lines)


RULES = f"""\
Seven geishas, worth {", ".join(map(str, VALUES[:-1]))} and {VALUES[-1]} charm; each has as many cards as
her charm ({NUM_CARDS} cards). {NUM_REMOVED} card is removed face down each round; each player
gets {HAND_SIZE} cards and draws one at the start of each of their turns.

Each round both players use their four action tokens once each, in turns:
  Secret (1 card): face down; it scores for you at the round's end.
  Trade-off (2 cards): face down; they leave the round.
  Gift (3 cards): shown; the opponent takes one, you get the other two.
  Competition (4 cards): shown, split in two pairs; the opponent takes a
  pair, you get the other.

Scoring: the Secrets are revealed; a geisha's favour marker moves to the
player with more of her cards on their side (on a tie it stays). A player
with {WIN_POINTS}+ charm wins; otherwise one with {WIN_GEISHAS}+ geishas wins; otherwise
a new round is dealt and the markers stay.
"""


class Notice(ModalScreen[bool]):
    """A text held on screen until a key answers it: the rules (any key closes them), or a
    question (``y`` answers yes, any other key no)."""

    DEFAULT_CSS = """
    Notice { align: center middle; }
    Notice > Static { width: 80; max-width: 100%; height: auto; max-height: 100%; border: round $accent; padding: 0 1; background: $surface; }
    """

    def __init__(self, text: str, question: bool = False) -> None:
        super().__init__()
        self.text, self.question = text, question

    def compose(self) -> ComposeResult:
        yield Static(self.text)

    def on_key(self, event: Any) -> None:
        event.stop()
        self.dismiss(self.question and event.key == "y")


class PlayApp(App[None]):
    """The terminal board of one :class:`GameSession`."""

    TITLE = "Hanamikoji"
    CSS = """
    #header { height: auto; background: $primary-darken-2; }
    #board { height: auto; border: round $accent; padding: 0 1; }
    #status { height: auto; padding: 0 1; }
    #log { border: round $foreground 60%; scrollbar-gutter: stable; min-height: 4; }
    """
    BINDINGS = [
        Binding("q", "leave", "quit"),
        Binding("question_mark", "rules", "rules"),
        Binding("enter", "confirm", "confirm"),
        Binding("escape", "cancel", "cancel"),
        Binding("n", "again", "play again", show=False),
    ] + [Binding(str(i), f"choose({i})", show=False) for i in range(1, 10)]

    def __init__(self, session: GameSession, record: Path | None = None) -> None:
        super().__init__()
        self.session = session
        self.record_path = record
        self.recorded = False
        self.pending: dict[str, Any] | None = None
        """The token and the hand positions selected so far, sent together on Enter."""
        self.answer: int | None = None
        """The Gift or pair answer chosen, played on Enter (one key never commits an answer)."""
        self.seen_scorings = 0
        self.logged = 0
        """Events of the game written to the log so far."""
        self.shown_status = ""
        """The status panel's text and the log's lines, as last shown (for tests and tools)."""
        self.shown_log: list[str] = []
        self.shown_view: dict[str, Any] = {}
        """The view whose header and table are on screen (a round's scored table under its
        round-end screen)."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="header")
            yield Static(id="board")
            yield Static(id="status")
            yield RichLog(id="log", markup=False, min_width=20)  # its default, 78, overflows 80 columns
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_view()

    def action_rules(self) -> None:
        self.push_screen(Notice(RULES + "Press any key to go back to the game."))

    def action_leave(self) -> None:
        """Quit; a game in progress only once the person confirms (it would not be recorded)."""
        if self.session.over:
            self.exit()
            return
        kept = (
            f"What was played will be appended to {self.record_path} as an unfinished game."
            if self.record_path is not None
            else "It will not be recorded."
        )
        question = f"The game is not finished. {kept}\nQuit anyway? y quits, any other key plays on."
        self.push_screen(Notice(question, question=True), self._leave)

    def _leave(self, yes: bool | None) -> None:
        if not yes:
            return
        self._append_record()
        self.exit()

    def _append_record(self) -> None:
        """The game's record, once, at the end of ``--record``'s file (a file of records grows):
        the whole game, or what was played of one the person quits."""
        if self.record_path is None or self.recorded:
            return
        with open(self.record_path, "a", encoding="utf-8") as f:
            f.write(self.session.record(stopped=not self.session.over).to_json() + "\n")
        self.recorded = True

    def action_choose(self, number: int) -> None:
        view = self.session.view()
        if self.pending is not None:
            if not 1 <= number <= len(view["board"]["hand"]):
                self.bell()
                return
            cards = self.pending["cards"]
            if number - 1 in cards:
                cards.remove(number - 1)
            elif len(cards) < self.pending["needed"]:
                cards.append(number - 1)
            else:
                self.bell()
            self._show_status(view)
            return
        choices = numbered_choices(view) if view["your_move"] else []
        if not 1 <= number <= len(choices):
            self.bell()
            return
        chosen = choices[number - 1]
        if view["phase"] in ("GIFT_ANSWER", "COMP_ANSWER"):
            self.answer = chosen["action"]
            self._show_status(view)
            return
        if "token" in chosen:
            self.pending = {
                "token": chosen["token"],
                "fixed": False,
                "cards": [],
                "needed": TOKEN_SIZES[chosen["token"]],
            }
            self._show_status(view)
            return
        self.session.play(chosen["action"])
        self.refresh_view()

    def action_confirm(self) -> None:
        if self.answer is not None:
            answer, self.answer = self.answer, None
            self.session.play(answer)
            self.refresh_view()
            return
        p = self.pending
        if p is None or len(p["cards"]) != p["needed"]:
            self.bell()
            return
        hand = self.session.view()["board"]["hand"]
        self.session.play_turn([hand[i] for i in p["cards"]], None if p["fixed"] else p["token"])
        self.refresh_view()

    def action_cancel(self) -> None:
        if self.answer is not None:
            self.answer = None
            self._show_status(self.session.view())
            return
        if self.pending is None:
            return
        if self.pending["fixed"]:
            self.pending["cards"] = []
        else:
            self.pending = None
        self._show_status(self.session.view())

    def action_again(self) -> None:
        """Once a game is over: a new one against the same opponent, from the other seat."""
        if not self.session.over:
            self.bell()
            return
        old = self.session
        self.session = GameSession(old.opponent, 1 - old.seat, None, old.env.round_limit)
        self.recorded, self.seen_scorings, self.logged = False, 0, 0
        self._log("A new game: you " + ("start." if self.session.seat == 0 else "play second."), "bold green")
        self.refresh_view()

    def refresh_view(self) -> None:
        view = self.session.view()
        turn = view["turn"]
        self.pending, self.answer = None, None
        if turn is not None and turn["token"] is not None:  # a selection begun (the engine holds its token)
            self.pending = {"token": turn["token"], "fixed": True, "cards": [], "needed": turn["needed"]}
        for event in view["events"][self.logged :]:
            self._log(event["text"], {"you": "cyan", "opponent": "magenta"}.get(event["who"], "bold yellow"))
        self.logged = len(view["events"])
        scorings = [e for e in view["events"] if e["kind"] == "scoring"]
        new, self.seen_scorings = scorings[self.seen_scorings :], len(scorings)
        if new:
            self._round_ends(view, new)
        else:
            self._draw(view)
        if self.session.over and self.record_path is not None and not self.recorded:
            self._append_record()
            self._log(f"The game record was appended to {self.record_path}.", "green")

    def _draw(self, view: dict[str, Any], status: Text | None = None) -> None:
        """The header, the table and the status of ``view`` (``status``: other words than a
        view's own)."""
        seat = "you start" if view["seat"] == 0 else "you play second"
        self.sub_title = f"round {view['round']} · {seat} · vs {view['opponent']}"
        self.query_one("#header", Static).update(header_text(view, self.size.width or 80))
        self.query_one("#board", Static).update(board_table(view))
        self.shown_view = view
        if status is None:
            self._show_status(view)
        else:
            self.query_one("#status", Static).update(status)
            self.shown_status = status.plain

    def _round_ends(self, view: dict[str, Any], scorings: list[dict[str, Any]]) -> None:
        """Each scoring's screen over the table of the round it scores (every card placed, the
        markers not moved yet: the view's step before that scoring), then ``view``."""
        event, rest = scorings[0], scorings[1:]
        ended = next(
            (st for st in view["steps"] if st["phase"] == "ROUND_OVER" and st["round"] == event["round"]),
            None,
        )
        if ended is not None:
            scored = {**view, "round": ended["round"], "board": ended["board"], "score": ended["score"]}
            last = "the result" if event["final"] else "the next deal"
            words = Text(
                f"Round {event['round']} is over: its table as scored. Enter shows {last}.", style="bold"
            )
            self._draw({**scored, "to_move": "scored", "result": None, "your_move": False}, words)
        else:
            self._draw(view)
        self.push_screen(
            RoundEnd(event, view["result"]),
            lambda _: self._round_ends(view, rest) if rest else self._draw(view),
        )

    def _show_status(self, view: dict[str, Any]) -> None:
        panel = self.query_one("#status", Static)
        status = status_text(view, self.pending, panel.content_region.width or 76, self.answer)
        self.shown_status = status.plain
        panel.update(status)

    def _log(self, line: str, style: str) -> None:
        log = self.query_one("#log", RichLog)
        for row in wrap_words(line, log.scrollable_content_region.width or self.size.width - 6):
            log.write(Text(row, style=style))
            self.shown_log.append(row)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hanamikoji-play", description="Play Hanamikoji against a bot in the terminal."
    )
    p.add_argument(
        "--opponent",
        default="heuristic",
        help="random, heuristic, search[:samples=N], ckpt:PATH, ... (default heuristic)",
    )
    p.add_argument(
        "--seat", type=int, choices=(0, 1), default=0, help="your seat: 0 starts round 1 (default 0)"
    )
    p.add_argument("--seed", type=int, default=None, help="seed of the deals and the bot (default: random)")
    p.add_argument("--round-limit", type=int, default=None, help="play at most this many rounds")
    p.add_argument("--record", type=Path, default=None, help="append the finished game's record to FILE")
    return p


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.seed is not None and args.seed < 0:
            raise ValueError(f"--seed must be >= 0, got {args.seed}")
        if args.round_limit is not None and args.round_limit < 1:
            raise ValueError(f"--round-limit must be >= 1, got {args.round_limit}")
        if args.record is not None:
            with open(args.record, "a", encoding="utf-8"):  # writable before the game, not after it
                pass
        parse_player(args.opponent)
        announce(parts_for([args.opponent]))
        print(
            f"Hanamikoji: starting a game against {clip(args.opponent, 60)}...", flush=True
        )  # its load takes seconds
        session = GameSession(args.opponent, args.seat, args.seed, args.round_limit)
    except (ValueError, OSError) as e:
        parser.error(str(e))
    app = PlayApp(session, args.record)
    app.run()
    if app.recorded:
        done = "game record" if session.over else "unfinished game's record (what was played)"
        print(f"The {done} was appended to {args.record}.")
    elif not session.over:
        print("The game was not finished: no record was written.")


if __name__ == "__main__":
    main()
