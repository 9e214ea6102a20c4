"""A person's game against a bot: the model behind the terminal and the browser boards.

:class:`GameSession` runs one game on the AEC env (the engine of record) with
the bot in the other seat, and answers with :meth:`GameSession.view`: a
JSON-ready dict of what the person may know.  The board part of the view is
decoded from the person's own observation vector (the one the bots get, which
holds only that player's information), and the log of moves is derived from
the difference of two such observations plus the action ids that are public
(a split, an answer to a Gift or a Competition) or the person's own.  So
nothing in a view can hold the opponent's hand, Secret, Trade-off, the
removed card or the pile order.

A finished game gives its :meth:`~GameSession.record` (see
:mod:`hanamikoji_env.records`), which :mod:`~hanamikoji_env.play.replays` shows
move by move.  What a view's board and choices hold is built in
:mod:`~hanamikoji_env.play.views`, its log in :mod:`~hanamikoji_env.play.narration`.
"""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np

from hanamikoji_env import records
from hanamikoji_env.actions import (
    CARD,
    CARD_BASE,
    NUM_ACTIONS,
    SPLIT,
    TOKEN,
    TOKEN_NAMES,
    TOKEN_SIZES,
    action_name,
    decode_action,
    split_sets,
)
from hanamikoji_env.aec import AGENTS, raw_env
from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.excerpt import short
from hanamikoji_env.observation import InfoSet, decode
from hanamikoji_env.play.geishas import card_label, card_names
from hanamikoji_env.play.narration import describe, describe_last, event, scoring_event
from hanamikoji_env.play.views import board, choice, game_summary, round_end_board, standing
from hanamikoji_env.rules import (
    DRAW,
    NUM_GEISHAS,
    Phase,
    cards_of,
    count_cards,
)

HUMAN = "human"
"""The player name a person gets in game records."""
SWAPPED_SPLITS = "swapped_splits"
"""A record's meta key: the action indices (space-separated) of the person's splits whose pair
A is the engine's pair B, as they named them; a replay names those pairs alike."""
VIEW_KEYS = (
    "seat",
    "opponent",
    "round",
    "phase",
    "your_move",
    "to_move",
    "board",
    "score",
    "choices",
    "turn",
    "events",
    "last_round",
    "result",
    "practice",
    "steps",
)


class GameSession:
    """One game of a person (``seat``) against the bot of ``opponent`` (a player spec, or a
    ready ``bot``).  ``seed`` deals the cards and seeds the bot; ``decks`` scripts the deals
    as the env's ``reset(options={"decks": ...})`` does.

    The bot replies within the constructor and :meth:`play`; with ``bot_replies=False`` the
    caller makes its moves instead (:meth:`bot_observation`, then :meth:`bot_play`): the browser
    server, whose bots move in worker processes while the serving process goes on serving.

    Without a ``seed`` the game draws 128 bits from the operating system, so no one can
    recover the deal from their own cards; a chosen ``seed`` (or scripted decks) lets whoever
    chose it know every card, so such a game is a *practice* game (``view()["practice"]``,
    and its record's meta), and only a practice game's record names its seed."""

    def __init__(
        self,
        opponent: str = "heuristic",
        seat: int = 0,
        seed: int | None = None,
        round_limit: int | None = None,
        bot: Bot | None = None,
        source: str = "hanamikoji-play",
        decks: list[list[int]] | None = None,
        bot_replies: bool = True,
    ) -> None:
        if seat not in (0, 1) or isinstance(seat, bool):
            raise ValueError(f"seat must be 0 or 1, got {short(seat)}")
        self.practice = seed is not None or decks is not None
        if seed is None:
            seed = secrets.randbits(128)
        self.opponent = opponent
        self.bot = bot if bot is not None else parse_player(opponent).make(seed, round_limit)
        self.bot.reset(seed=seed + 1)
        self.seat, self.seed, self.source, self.bot_replies = seat, seed, source, bot_replies
        self.env = raw_env(round_limit=round_limit)
        self.env.reset(seed=seed, options=None if decks is None else {"decks": decks})
        self.events: list[dict[str, Any]] = []
        self.pairs_swapped = False
        """The person's open Competition calls the engine's pair B "A" (:meth:`play`'s ``pair_a``)."""
        self.steps: list[dict[str, Any]] = []
        """The positions to play out before the view: the bot's moves since the person's last
        one, each as the table the person saw after it (``board``, from their own observation,
        and its ``score``), how many ``events`` had been told and whose move led there (``by``:
        ``"you"`` or ``"opponent"``), so a board can play them out one at a time; and for a move
        that ended a round (anyone's), the table before the scoring (phase ``ROUND_OVER``,
        :func:`round_end_board`), so the move is seen before the scoring screen covers it."""
        self.swapped_splits: list[int] = []
        """The record's action indices of the person's splits whose pair A is the engine's pair B
        (:meth:`play`'s ``pair_a``): the record keeps them, so a replay names the pairs alike."""
        self.abandoned = False
        """The person left the game before its end (:meth:`abandon`): it is over, with no winner."""
        self._info = self._observe()
        if bot_replies:
            self.advance()

    # ------------------------------------------------------------ playing ---

    @property
    def over(self) -> bool:
        return self.abandoned or any(self.env.terminations.values())

    def abandon(self) -> None:
        """The person leaves the game: it is over, unfinished (its record's ``result`` is null,
        its view's result says it was abandoned).  Nothing happens to a game already over."""
        if not self.over:
            self.abandoned = True
            self.steps = []
            self.events.append(event("table", "end", [], self.result()["text"]))  # type: ignore[index]

    @property
    def your_move(self) -> bool:
        return not self.over and self.env.agent_selection == AGENTS[self.seat]

    def legal_actions(self) -> list[int]:
        if not self.your_move:
            return []
        return np.flatnonzero(self.env.observe(AGENTS[self.seat])["action_mask"]).tolist()

    def play(self, action: int, pair_a: list[int] | None = None) -> None:
        """The person's move; ``ValueError`` (the game unchanged) unless it is legal now.
        The bot then moves until it is the person's decision again or the game is over.
        With a split, ``pair_a`` may name the two cards the person calls pair A (the engine
        calls A the pair holding the lowest card): the log and the table then call the pairs
        as the person built them until the Competition is answered."""
        if self.over:
            raise ValueError("the game is over")
        if not self.your_move:
            raise ValueError("it is not your move")
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"an action is an int id in [0, {NUM_ACTIONS}), got {short(action)}")
        legal = self.legal_actions()
        if action not in legal:
            named = action_name(int(action)) if 0 <= action < NUM_ACTIONS else "out of range"
            raise ValueError(f"action {action} ({named}) is not legal now; legal: {legal}")
        swap = False
        if pair_a is not None:
            kind, index = decode_action(int(action))
            if kind != SPLIT:
                raise ValueError(
                    f"pair_a names the pairs of a split, and action {action} is {action_name(int(action))}"
                )
            pairs = [sorted(p) for p in split_sets(cards_of(self._info.offer), index)]
            if sorted(pair_a) not in pairs:
                raise ValueError(
                    f"pair_a {card_names(sorted(pair_a))} is neither pair of this split: {card_names(pairs[0])} | {card_names(pairs[1])}"
                )
            swap = sorted(pair_a) == pairs[1] != pairs[0]
        self.pairs_swapped = swap
        if swap:
            self.swapped_splits.append(len(self.env.history().actions))
        self._step(int(action), mine=True)
        if self.bot_replies:
            self.advance()

    def play_turn(self, cards: list[int], token: int | None = None) -> None:
        """The person's whole selection at once, in any order: ``token`` (when the turn has not
        begun) and then ``cards``, played in the engine's ascending order.  ``ValueError``, with
        the game unchanged and the legal choices named, unless every step is legal."""
        problem = self.turn_error(cards, token)
        if problem:
            raise ValueError(problem)
        if token is not None:
            self.play(token)
        for g in sorted(cards):
            self.play(CARD_BASE + g)

    def turn_error(self, cards: list[int], token: int | None = None) -> str | None:
        """Why :meth:`play_turn` would refuse ``token`` and ``cards`` now (None: it would not)."""
        if self.over:
            return "the game is over"
        if not self.your_move:
            return "it is not your move"
        info = self._info
        tokens = [t for t in range(len(TOKEN_NAMES)) if not info.spent_me[t]]
        if token is not None:
            if info.phase != Phase.TOKEN:
                return f"a token is chosen at the start of a turn; now: {info.phase.name}"
            if isinstance(token, bool) or not isinstance(token, int) or token not in tokens:
                return f"token must be one you have left: {_token_list(tokens)}; got {token!r}"
            need, chosen = TOKEN_SIZES[token], ()
        elif info.phase == Phase.SELECT:
            need, chosen = info.cards_needed, cards_of(info.selection)
        else:
            return f"choose a token first ({_token_list(tokens)}); now: {info.phase.name}"
        if not isinstance(cards, list) or not all(
            isinstance(g, int) and not isinstance(g, bool) for g in cards
        ):
            return f"cards must be a list of geisha numbers, got {cards!r}"[:200]
        free = tuple(h - c for h, c in zip(info.hand, count_cards(chosen), strict=True))
        hand = card_names(cards_of(free))
        what = TOKEN_NAMES[token if token is not None else info.token]
        if len(cards) != need:
            return f"{what} needs {need} more card(s), got {len(cards)}; your hand: {hand}"
        if any(not 0 <= g < NUM_GEISHAS for g in cards) or any(
            n > free[g] for g, n in enumerate(count_cards(cards))
        ):
            return f"the cards {card_names(cards)[:60]} are not all in your hand: {hand}"
        if chosen and min(cards) < max(chosen):  # the engine takes a selection in ascending order
            return (
                f"the selection so far ({card_names(chosen)}) goes on from {card_label(max(chosen))} up; "
                f"choose from: {card_names([g for g in cards_of(free) if g >= max(chosen)])}"
            )
        return None

    def bot_observation(self) -> dict[str, np.ndarray] | None:
        """The bot's observation dict when it is the bot's move (None: the person's, or over)."""
        bot_agent = AGENTS[1 - self.seat]
        if self.over or self.env.agent_selection != bot_agent:
            return None
        return self.env.observe(bot_agent)

    def bot_play(self, action: int) -> None:
        """The bot's move ``action`` (``ValueError`` unless it is the bot's move and legal)."""
        obs = self.bot_observation()
        if obs is None or not 0 <= action < NUM_ACTIONS or not obs["action_mask"][action]:
            raise ValueError(f"the bot cannot play {action} now")
        self._step(int(action), mine=False)

    def advance(self) -> None:
        """The bot's moves until it is the person's decision again or the game is over."""
        while (obs := self.bot_observation()) is not None:
            self.bot_play(self.bot.act(obs))

    def _step(self, action: int, mine: bool) -> None:
        before, round_before = self._info, self.env.game.round  # the observation's round saturates
        self.env.step(action)
        after = self._info = self._observe()
        public = mine or decode_action(action).kind not in (TOKEN, CARD)  # splits and answers: seen by both
        new: list[dict[str, Any]] = []
        if mine:
            self.steps = []
        ended = None  # the table between a round's last move and its scoring, as a step of its own
        swap = self.pairs_swapped
        if before.phase == Phase.COMP_ANSWER:
            self.pairs_swapped = False  # answered: the next Competition is named afresh
        if self.env.game.round != round_before or self.over:  # this move ended the round
            new += describe_last(before, mine, action if public else None, swap)
            summaries = self.env.history().round_summaries
            if len(summaries) == round_before:
                ended = round_end_board(before, summaries[-1], self.seat, mine, action)
                self._add(new)
                self._add_step(ended, round_before, "ROUND_OVER", mine)
                new = [scoring_event(summaries, self.seat, self.result())]
            if not self.over:
                starts = "you start" if after.i_started else "the opponent starts"
                new.append(event("table", "deal", [], f"Round {after.round} dealt; {starts}."))
        else:
            new += describe(before, after, mine, action if public else None, swap)
        if self.over:
            new.append(event("table", "end", [], self.result()["text"]))  # type: ignore[index]
        self._add(new)
        if not mine and new and ended is None:  # the bot choosing cards, unseen yet, is no step
            self._add_step(self._board(after), after.round, after.phase.name, mine)

    def _add(self, events: list[dict[str, Any]]) -> None:
        for e in events:
            e["n"] = len(self.events)
            self.events.append(e)

    def _add_step(self, table: dict[str, Any], round_: int, phase: str, mine: bool) -> None:
        step = {
            "events": len(self.events),
            "round": round_,
            "phase": phase,
            "by": "you" if mine else "opponent",
        }
        self.steps.append({**step, "board": table, "score": standing(table["markers"])})

    def _board(self, info: InfoSet) -> dict[str, Any]:
        """:func:`board`, with the person's open Competition's pairs called as they built them."""
        table = board(info)
        if self.pairs_swapped and info.phase == Phase.COMP_ANSWER:
            table["set_a"], table["set_b"] = table["set_b"], table["set_a"]
        return table

    def _observe(self) -> InfoSet:
        return decode(self.env.observe(AGENTS[self.seat])["observation"])

    # -------------------------------------------------------------- views ---

    def result(self) -> dict[str, Any] | None:
        """The final result once the game is over: the winner, the score (charm points and
        geishas, yours first), why the game ended, and all of it in one sentence."""
        if self.abandoned:
            return {
                "winner": None,
                "abandoned": True,
                "points": None,
                "geishas": None,
                "reason": "you left the game before its end",
                "text": "Game abandoned: you left it before its end.",
            }
        h = self.env.history()
        if not h.over:
            return None
        if h.illegal is not None:  # not reachable through play(), which refuses illegal moves
            who = "you" if h.illegal[0] == self.seat else "the opponent"
            return {
                "winner": "opponent" if who == "you" else "you",
                "points": None,
                "geishas": None,
                "reason": f"{who} moved illegally",
                "text": f"Game over: {who} moved illegally.",
            }
        last = h.round_summaries[-1]
        me, opp = self.seat, 1 - self.seat
        side = None if h.winner == DRAW else 0 if h.winner == self.seat else 1
        summary = game_summary(
            [last["points"][me], last["points"][opp]],
            [last["geishas"][me], last["geishas"][opp]],
            side,
            ("you", "the opponent"),
            h.round,
        )
        return {"winner": "draw" if side is None else ("you", "opponent")[side], **summary}

    def view(self) -> dict[str, Any]:
        """What the person may know now, JSON-ready (keys :data:`VIEW_KEYS`)."""
        info = self._info
        last = self.env.history().round_summaries
        b = self._board(info)
        return {
            "seat": self.seat,
            "opponent": self.opponent,
            "round": info.round,
            "phase": info.phase.name,
            "your_move": self.your_move,
            "to_move": None if self.over else "you" if self.your_move else "opponent",
            "board": b,
            "score": standing(b["markers"]),
            "choices": [choice(a, info) for a in self.legal_actions()],
            "turn": self._turn_choices(info),
            "events": list(self.events),
            "last_round": scoring_event(last, self.seat, self.result()) if last else None,
            "result": self.result(),
            "practice": self.practice,
            "steps": list(self.steps),
        }

    def _turn_choices(self, info: InfoSet) -> dict[str, Any] | None:
        """For a board that lets the person pick a token and then its cards in any order before
        sending them (:meth:`play_turn`): the tokens left with their sizes, and once a token is
        being played, it, the cards chosen so far and how many are still needed."""
        if not self.your_move or info.phase not in (Phase.TOKEN, Phase.SELECT):
            return None
        return {
            "tokens": [
                {"token": t, "name": TOKEN_NAMES[t], "cards": TOKEN_SIZES[t]}
                for t in range(len(TOKEN_NAMES))
                if not info.spent_me[t]
            ],
            "token": info.token if info.phase == Phase.SELECT else None,
            "selected": list(cards_of(info.selection)),
            "needed": info.cards_needed if info.phase == Phase.SELECT else None,
        }

    def record(self, stopped: bool = False) -> records.GameRecord:
        """The game record of the finished game; with ``stopped`` (or once :meth:`abandon`-ed),
        of what was played of a game the person leaves (a record whose ``result`` is null)."""
        stopped = stopped or self.abandoned
        players = [self.opponent, self.opponent]
        players[self.seat] = HUMAN
        meta: records.Meta = {"source": self.source, "human_seat": self.seat, "practice": self.practice}
        if self.practice:
            meta["seed"] = self.seed  # the player chose it: it reveals nothing they did not know
        if self.swapped_splits:
            meta[SWAPPED_SPLITS] = " ".join(map(str, self.swapped_splits))
        return records.from_env(self.env, (players[0], players[1]), meta, stopped=stopped)


def _token_list(tokens: list[int]) -> str:
    return ", ".join(f"{t} ({TOKEN_NAMES[t]})" for t in tokens) or "none"
