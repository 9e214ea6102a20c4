"""Play Hanamikoji against any bot in the terminal (a full-screen Textual app).

    hanamikoji-play --opponent heuristic [--seat 0|1] [--seed S] [--round-limit N] [--record FILE]

The screen shows the geishas with their charm and favour markers, the cards on
both sides, your hand, Secret and Trade-off, the tokens both players have
left, the offer you are answering, the moves as they happen and each round's
scoring.  Your legal choices are numbered: press the number.  ``q`` quits.
With ``--record FILE`` the finished game is appended to FILE as a game record
(:mod:`hanamikoji_env.records`).
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
from textual.widgets import Footer, RichLog, Static

from hanamikoji_env.actions import TOKEN_NAMES
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.play.session import GameSession, card_names
from hanamikoji_env.rules import NUM_GEISHAS

_MARK = {None: "·", "you": "v you", "opponent": "^ opp"}


def board_table(view: dict[str, Any]) -> Table:
    """The geishas, both sides and the markers as a rich table."""
    b = view["board"]
    t = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
    t.add_column("", justify="left", min_width=12)
    for g in range(NUM_GEISHAS):
        t.add_column(f"G{g}", justify="center", min_width=6)
    t.add_row("charm", *(str(c) for c in b["charm"]))
    t.add_row("opponent", *(str(n) if n else "·" for n in b["their_side"]))
    t.add_row("marker", *(_MARK[m] for m in b["markers"]), style="yellow")
    t.add_row("you", *(str(n) if n else "·" for n in b["your_side"]))
    return t


def status_text(view: dict[str, Any]) -> Text:
    """Hands, tokens, the offer on the table and whose move it is."""
    b = view["board"]
    left = [TOKEN_NAMES[t] for t, ok in enumerate(b["their_tokens"]) if ok]
    mine = [TOKEN_NAMES[t] for t, ok in enumerate(b["your_tokens"]) if ok]
    lines = [
        f"Opponent ({view['opponent']}): {b['their_hand_size']} cards in hand; tokens left: {', '.join(left) or '-'}",
        f"Draw pile: {b['draw_pile_size']} cards",
        f"Your hand: {card_names(b['hand'])}",
        f"Your Secret: {card_names([b['secret']] if b['secret'] >= 0 else [])}   "
        f"Trade-off: {card_names(b['tradeoff'])}   tokens left: {', '.join(mine) or '-'}",
    ]
    if b["selection"] or (b["token"] >= 0 and view["phase"] == "SELECT" and view["your_move"]):
        lines.append(f"Selected for {TOKEN_NAMES[b['token']]}: {card_names(b['selection'])}")
    if view["phase"] == "GIFT_ANSWER":
        lines.append(f"On the table: Gift {card_names(b['offer'])}")
    elif view["phase"] == "SPLIT":
        lines.append(f"On the table: Competition cards {card_names(b['offer'])} to split")
    elif view["phase"] == "COMP_ANSWER":
        lines.append(f"On the table: Competition A {card_names(b['set_a'])} | B {card_names(b['set_b'])}")
    text = Text("\n".join(lines))
    text.append("\n\n")
    if view["result"] is not None:
        text.append(view["result"]["text"] + "  Press q to quit.", style="bold green")
    elif view["your_move"]:
        text.append("Your move: ", style="bold")
        for i, c in enumerate(view["choices"], 1):
            text.append(f"[{i}] ", style="bold cyan")
            text.append(f"{c['label']}   ")
    return text


class PlayApp(App[None]):
    """The terminal board of one :class:`GameSession`."""

    TITLE = "Hanamikoji"
    CSS = """
    #board { height: auto; border: round $accent; padding: 0 1; }
    #status { height: auto; padding: 0 1; }
    #log { border: round $panel; }
    """
    BINDINGS = [Binding("q", "quit", "quit")] + [
        Binding(str(i), f"choose({i})", show=False) for i in range(1, 10)
    ]

    def __init__(self, session: GameSession, record: Path | None = None) -> None:
        super().__init__()
        self.session = session
        self.record_path = record
        self.recorded = False
        self.shown_status = ""
        """The status panel's text and the log's lines, as last shown (for tests and tools)."""
        self.shown_log: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="board")
            yield Static(id="status")
            yield RichLog(id="log", wrap=True, markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_view()

    def action_choose(self, number: int) -> None:
        choices = self.session.view()["choices"]
        if not 1 <= number <= len(choices):
            self.bell()
            return
        self.session.play(choices[number - 1]["action"])
        self.refresh_view()

    def refresh_view(self) -> None:
        view = self.session.view()
        who = f"you are player_{view['seat']}"
        self.sub_title = f"round {view['round']} · {who} · vs {view['opponent']}"
        self.query_one("#board", Static).update(board_table(view))
        status = status_text(view)
        self.shown_status = status.plain
        self.query_one("#status", Static).update(status)
        for event in view["events"][len(self.shown_log) :]:
            self._log(event["text"], {"you": "cyan", "opponent": "magenta"}.get(event["who"], "bold yellow"))
        if self.session.over and self.record_path is not None and not self.recorded:
            with open(self.record_path, "a", encoding="utf-8") as f:  # a file of records grows
                f.write(self.session.record().to_json() + "\n")
            self.recorded = True
            self._log(f"The game record was appended to {self.record_path}.", "green")

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
