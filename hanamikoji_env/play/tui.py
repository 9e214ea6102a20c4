"""Play Hanamikoji against any bot in the terminal (a full-screen Textual app).

    hanamikoji-play --opponent heuristic [--seat 0|1] [--seed S] [--round-limit N] [--record FILE]

The header line tells the round, your seat, whose move it is and the score as the
favour markers stand.  Below it: the geishas with their charm and markers (``^``
the opponent's, ``v`` yours, ``.`` nobody's yet), the cards on both sides, your
hand, Secret and Trade-off, the tokens both players have left, the offer you are
answering, and the moves as they happen.

Your choices are numbered: press the number.  A token's cards are chosen in any
order: pick the token, then press the numbers of the cards in your hand to
select or put back each one; ``Enter`` confirms, ``Esc`` cancels.  At the end of
each round the scoring stays on screen (the revealed Secrets, each geisha's
cards and marker, the totals) until you press ``Enter``.  ``q`` quits.  With
``--record FILE`` the finished game is appended to FILE as a game record
(:mod:`hanamikoji_env.records`).  It fits an 80x24 terminal.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, RichLog, Static

from hanamikoji_env.actions import TOKEN_NAMES, TOKEN_SIZES
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.first_run import announce, parts_for
from hanamikoji_env.play.session import GameSession, card_names
from hanamikoji_env.rules import NUM_GEISHAS, VALUES

_MARK = {None: ".", "you": "v you", "opponent": "^ opp"}


def header_text(view: dict[str, Any]) -> Text:
    """Round, seat, whose move and the score as the markers stand, on one line."""
    s = view["score"]
    whose = {"you": "your move", "opponent": "the opponent's move", None: "game over"}[view["to_move"]]
    you, opp = s["you"], s["opponent"]
    return Text(
        f" Round {view['round']} · you are player_{view['seat']} · {whose} · "
        f"charm {you['charm']}-{opp['charm']} · geishas {you['geishas']}-{opp['geishas']} (you-opp)",
        style="bold",
    )


def board_table(view: dict[str, Any]) -> Table:
    """The geishas, both sides and the markers as a rich table."""
    b = view["board"]
    t = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
    t.add_column("", justify="left", min_width=9)
    for g in range(NUM_GEISHAS):
        t.add_column(f"G{g}", justify="center", min_width=5)
    t.add_row("charm", *(str(c) for c in b["charm"]))
    t.add_row("opponent", *(str(n) if n else "·" for n in b["their_side"]), style="magenta")
    t.add_row("marker", *(_MARK[m] for m in b["markers"]), style="yellow")
    t.add_row("you", *(str(n) if n else "·" for n in b["your_side"]), style="cyan")
    return t


def status_text(view: dict[str, Any], pending: dict[str, Any] | None = None) -> Text:
    """Hands, tokens, the offer on the table and the person's numbered choices.  ``pending``:
    the token and the hand positions selected so far (see :class:`PlayApp`)."""
    b = view["board"]
    left = [TOKEN_NAMES[t] for t, ok in enumerate(b["their_tokens"]) if ok]
    mine = [TOKEN_NAMES[t] for t, ok in enumerate(b["your_tokens"]) if ok]
    lines = [
        f"Opponent ({view['opponent']}): {b['their_hand_size']} cards; tokens left: {', '.join(left) or '-'}",
        f"You: Secret {card_names([b['secret']] if b['secret'] >= 0 else [])}, "
        f"Trade-off {card_names(b['tradeoff'])}; tokens left: {', '.join(mine) or '-'}; "
        f"draw pile {b['draw_pile_size']}",
    ]
    if view["phase"] == "GIFT_ANSWER":
        lines.append(f"On the table: Gift {card_names(b['offer'])}")
    elif view["phase"] == "SPLIT":
        lines.append(f"On the table: Competition cards {card_names(b['offer'])} to split")
    elif view["phase"] == "COMP_ANSWER":
        lines.append(f"On the table: Competition A {card_names(b['set_a'])} | B {card_names(b['set_b'])}")
    text = Text("\n".join(lines) + "\n")
    selecting = pending is not None
    text.append("Your hand: ", style="bold")
    for i, g in enumerate(b["hand"]):
        if selecting:
            on = i in pending["cards"]  # type: ignore[index]
            text.append(f"[{i + 1}]", style="bold cyan")
            text.append(f"{'*' if on else ''}G{g}{'*' if on else ''} ", style="reverse bold" if on else "")
        else:
            text.append(f"G{g} ")
    text.append("\n")
    if view["result"] is not None:
        text.append(view["result"]["text"] + "  Press q to quit.", style="bold green")
    elif not view["your_move"]:
        text.append("The opponent is thinking...")
    elif selecting:
        name, need = TOKEN_NAMES[pending["token"]], pending["needed"] - len(pending["cards"])  # type: ignore[index]
        chosen = card_names([b["hand"][i] for i in pending["cards"]])  # type: ignore[index]
        text.append(f"{name}: ", style="bold")
        text.append(f"selected {chosen}; " + (f"choose {need} more by number" if need else "Enter confirms"))
        text.append(", Esc " + ("clears" if pending["fixed"] else "cancels"))  # type: ignore[index]
    else:
        text.append("Your move: ", style="bold")
        for i, c in enumerate(numbered_choices(view), 1):
            text.append(f"[{i}] ", style="bold cyan")
            text.append(f"{c['label']}   ")
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
        moved = f"{owner[before]} -> {owner[after]}" if before != after else owner[after]
        t.add_row(
            f"G{g} ({VALUES[g]})",
            str(event["placed"][0][g]),
            str(event["placed"][1][g]),
            moved,
            style="bold" if before != after else "",
        )
    return t


class RoundEnd(ModalScreen[None]):
    """The end of a round, held until the person moves on."""

    BINDINGS = [Binding("enter,space,escape", "dismiss", "continue")]
    DEFAULT_CSS = """
    RoundEnd { align: center middle; }
    RoundEnd > Vertical { width: 72; max-width: 100%; height: auto; max-height: 100%; border: round $accent; padding: 0 1; background: $surface; }
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
            f"Secrets revealed: you G{e['secrets'][0]}, opponent G{e['secrets'][1]}\n"
            f"Totals: you {e['points'][0]} charm points, {e['geishas'][0]} geishas; "
            f"opponent {e['points'][1]} charm points, {e['geishas'][1]} geishas\n"
        )
        if e["final"] and self.result is not None:
            lines.append(self.result["text"] + "\n", style="bold green")
        lines.append("Press Enter to continue.", style="bold")
        self.shown = lines.plain
        with Vertical():
            yield Static(scoring_table(e))
            yield Static(lines)


class PlayApp(App[None]):
    """The terminal board of one :class:`GameSession`."""

    TITLE = "Hanamikoji"
    CSS = """
    #header { height: auto; background: $primary-darken-2; }
    #board { height: auto; border: round $accent; padding: 0 1; }
    #status { height: auto; padding: 0 1; }
    #log { border: round $panel; scrollbar-gutter: stable; min-height: 4; }
    """
    BINDINGS = [
        Binding("q", "quit", "quit"),
        Binding("enter", "confirm", "confirm"),
        Binding("escape", "cancel", "cancel"),
    ] + [Binding(str(i), f"choose({i})", show=False) for i in range(1, 10)]

    def __init__(self, session: GameSession, record: Path | None = None) -> None:
        super().__init__()
        self.session = session
        self.record_path = record
        self.recorded = False
        self.pending: dict[str, Any] | None = None
        """The token and the hand positions selected so far, sent together on Enter."""
        self.seen_scorings = 0
        self.logged = 0
        """Events of the game written to the log so far."""
        self.shown_status = ""
        """The status panel's text and the log's lines, as last shown (for tests and tools)."""
        self.shown_log: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="header")
            yield Static(id="board")
            yield Static(id="status")
            yield RichLog(
                id="log", wrap=True, markup=False, min_width=20
            )  # its default, 78, overflows 80 columns
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_view()

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
        p = self.pending
        if p is None or len(p["cards"]) != p["needed"]:
            self.bell()
            return
        hand = self.session.view()["board"]["hand"]
        self.session.play_turn([hand[i] for i in p["cards"]], None if p["fixed"] else p["token"])
        self.refresh_view()

    def action_cancel(self) -> None:
        if self.pending is None:
            return
        if self.pending["fixed"]:
            self.pending["cards"] = []
        else:
            self.pending = None
        self._show_status(self.session.view())

    def refresh_view(self) -> None:
        view = self.session.view()
        turn = view["turn"]
        self.pending = None
        if turn is not None and turn["token"] is not None:  # a selection begun (the engine holds its token)
            self.pending = {"token": turn["token"], "fixed": True, "cards": [], "needed": turn["needed"]}
        self.sub_title = f"round {view['round']} · you are player_{view['seat']} · vs {view['opponent']}"
        self.query_one("#header", Static).update(header_text(view))
        self.query_one("#board", Static).update(board_table(view))
        self._show_status(view)
        for event in view["events"][self.logged :]:
            self._log(event["text"], {"you": "cyan", "opponent": "magenta"}.get(event["who"], "bold yellow"))
        self.logged = len(view["events"])
        scorings = [e for e in view["events"] if e["kind"] == "scoring"]
        for event in scorings[self.seen_scorings :]:
            self.push_screen(RoundEnd(event, view["result"]))
        self.seen_scorings = len(scorings)
        if self.session.over and self.record_path is not None and not self.recorded:
            with open(self.record_path, "a", encoding="utf-8") as f:  # a file of records grows
                f.write(self.session.record().to_json() + "\n")
            self.recorded = True
            self._log(f"The game record was appended to {self.record_path}.", "green")

    def _show_status(self, view: dict[str, Any]) -> None:
        status = status_text(view, self.pending)
        self.shown_status = status.plain
        self.query_one("#status", Static).update(status)

    def _log(self, line: str, style: str) -> None:
        self.query_one("#log", RichLog).write(Text(line, style=style))
        self.shown_log.append(line)


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
        session = GameSession(args.opponent, args.seat, args.seed, args.round_limit)
    except (ValueError, OSError) as e:
        parser.error(str(e))
    app = PlayApp(session, args.record)
    app.run()
    if not session.over:
        print("The game was not finished: no record was written.")
    elif args.record is not None:
        print(f"The game record was appended to {args.record}.")


if __name__ == "__main__":
    main()
