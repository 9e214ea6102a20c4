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
:mod:`hanamikoji_env.records`).  :func:`replay_frames` turns a record into
full-information positions for a replay view (a record holds every deck, so
nothing is hidden there).
"""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np

from hanamikoji_env import engine, records
from hanamikoji_env.actions import (
    CARD,
    CARD_BASE,
    COMPETITION,
    GIFT,
    GIFT_TAKE,
    NUM_ACTIONS,
    SECRET,
    SPLIT,
    TOKEN,
    TOKEN_NAMES,
    TOKEN_SIZES,
    TRADEOFF,
    action_name,
    decode_action,
    split_sets,
)
from hanamikoji_env.aec import AGENTS, raw_env
from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.excerpt import short
from hanamikoji_env.games import play_env
from hanamikoji_env.observation import InfoSet, decode
from hanamikoji_env.play.geishas import card_label, card_names
from hanamikoji_env.rules import (
    CENTRE,
    DRAW,
    NUM_GEISHAS,
    VALUES,
    WIN_GEISHAS,
    WIN_POINTS,
    Phase,
    State,
    cards_of,
    count_cards,
    score,
)

HUMAN = "human"
"""The player name a person gets in game records."""
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
        and its ``score``) and how many ``events`` had been told, so a board can play them out
        one at a time; and for a move that ended a round (anyone's), the table before the
        scoring (phase ``ROUND_OVER``, :func:`round_end_board`), so the move is seen before the
        scoring screen covers it."""
        self._info = self._observe()
        if bot_replies:
            self.advance()

    # ------------------------------------------------------------ playing ---

    @property
    def over(self) -> bool:
        return any(self.env.terminations.values())

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
                self._add_step(ended, round_before, "ROUND_OVER")
                new = [_scoring_event(summaries, self.seat, self.result())]
            if not self.over:
                starts = "you start" if after.i_started else "the opponent starts"
                new.append(_event("table", "deal", [], f"Round {after.round} dealt; {starts}."))
        else:
            new += describe(before, after, mine, action if public else None, swap)
        if self.over:
            new.append(_event("table", "end", [], self.result()["text"]))  # type: ignore[index]
        self._add(new)
        if not mine and new and ended is None:  # the bot choosing cards, unseen yet, is no step
            self._add_step(self._board(after), after.round, after.phase.name)

    def _add(self, events: list[dict[str, Any]]) -> None:
        for e in events:
            e["n"] = len(self.events)
            self.events.append(e)

    def _add_step(self, table: dict[str, Any], round_: int, phase: str) -> None:
        step = {"events": len(self.events), "round": round_, "phase": phase}
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
            "last_round": _scoring_event(last, self.seat, self.result()) if last else None,
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
        """The game record of the finished game; with ``stopped``, of what was played of a game
        the person abandons (a record whose ``result`` is null)."""
        players = [self.opponent, self.opponent]
        players[self.seat] = HUMAN
        meta: records.Meta = {"source": self.source, "human_seat": self.seat, "practice": self.practice}
        if self.practice:
            meta["seed"] = self.seed  # the player chose it: it reveals nothing they did not know
        return records.from_env(self.env, (players[0], players[1]), meta, stopped=stopped)


# ---------------------------------------------------- observation views ---


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
    return _on_table(info.phase, info.token, mover, other)


def _on_table(phase: Phase, token: int, mover: str | int, other: str | int) -> dict[str, Any] | None:
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


def _token_list(tokens: list[int]) -> str:
    return ", ".join(f"{t} ({TOKEN_NAMES[t]})" for t in tokens) or "none"


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


def _event(who: str, kind: str, cards: list[int], text: str) -> dict[str, Any]:
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
        out.append(_event(who, "gift", cards, f"{subject} offer{s} a Gift: {card_names(cards)}."))
    elif b.phase == Phase.SELECT and a.phase == Phase.SPLIT:
        cards = list(cards_of(a.offer))
        verb = "play" if mine else "plays"
        out.append(
            _event(who, "competition", cards, f"{subject} {verb} Competition with {card_names(cards)}.")
        )
    elif b.phase == Phase.SPLIT and a.phase == Phase.COMP_ANSWER:
        sa, sb = list(cards_of(a.set_a)), list(cards_of(a.set_b))
        if swap:
            sa, sb = sb, sa
        out.append(
            _event(
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
            out.append(_event("you", "draw", drawn, f"You draw {card_names(drawn)}."))
        else:
            out.append(_event("opponent", "draw", [], "The opponent draws a card."))
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
            _event(
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
        return [_event(who, "take", taken, text)]
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
        return _event("opponent", name.lower(), [], f"The opponent plays {name}: {what}.")
    if token == SECRET:
        return _event("you", "secret", cards, f"You play Secret: {card_names(cards)}, face down.")
    return _event("you", "trade-off", cards, f"You play Trade-off: {card_names(cards)} leave the round.")


def _scoring_event(
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
    e = _event("table", "scoring", [], text)
    e["round"] = s["round"]
    e["secrets"] = [s["secrets"][me], s["secrets"][opp]]
    e["placed"] = [list(s["placed"][me]), list(s["placed"][opp])]
    e["markers_before"] = [owner[m] for m in before]
    e["markers"] = [owner[m] for m in s["markers"]]
    e["points"] = [s["points"][me], s["points"][opp]]
    e["geishas"] = [s["geishas"][me], s["geishas"][opp]]
    e["final"] = result is not None and result.get("points") is not None
    return e


# ------------------------------------------------------------- replays ---


def bot_game(
    players: tuple[str, str], seed: int | None = None, round_limit: int | None = None
) -> records.GameRecord:
    """A whole game of two bots (player specs; ``players[0]`` is player_0), for watching: its
    record, which :func:`replay_frames` shows move by move.  Without a ``seed`` the deals take
    128 bits from the operating system."""
    seed = secrets.randbits(128) if seed is None else seed
    bots = tuple(parse_player(spec).make(seed, round_limit) for spec in players)
    for i, bot in enumerate(bots):
        bot.reset(seed=seed + 1 + i)
    env = play_env((bots[0], bots[1]), seed, round_limit)
    return records.from_env(env, players, {"source": "hanamikoji-serve watch"})


def replay_frames(record: records.GameRecord) -> list[dict[str, Any]]:
    """Every position of a recorded game with all cards shown (a record holds every deck):
    the first deal, one frame per move with the move that led to it in words (a token and
    its cards are one move, shown once the cards are chosen, as at the table), and for each
    round that ends, the scored table (Secrets revealed, markers moved) before the next
    deal, so a replay shows what the players saw at the table."""
    records.verify(record)
    states = records.replay(record)
    names = seat_names(record.players)
    stopped = [] if record.finished else [_frame(states[-1], "The game was stopped here, unfinished.", names)]
    frames = [_frame(states[0], "The first deal.", names)]
    for (seat, action), before, state in zip(record.actions, states[:-1], states[1:], strict=True):
        selecting = state.phase == Phase.SELECT and state.round == before.round
        if selecting and decode_action(action).kind in (TOKEN, CARD):
            continue  # a token's cards are being chosen: one frame once they all are
        text = move_text(before, seat, action, names)
        ended = state.round != before.round or state.phase == Phase.GAME_OVER
        if ended:  # the action ended the round: its table, the scoring, the next deal
            scored = engine.apply(before, action)
            played = _frame(scored, text, names, seat)
            played.update(
                phase="ROUND_OVER",
                markers=list(before.markers),
                score=dict(zip(("points", "geishas"), map(list, score(before.markers)), strict=True)),
                scoring=None,
                result=None,
                winner=None,
            )
            frames.append(played)
            frames.append(_frame(scored, _scored_text(scored, names), names))
            if state.phase != Phase.GAME_OVER:
                deal = f"Round {state.round} dealt; {_does(names[state.starter], 'start')}."
                frames.append(_frame(state, deal, names))
        else:
            frames.append(_frame(state, text, names, seat))
    return frames + stopped


def seat_names(players: tuple[str, ...] | list[str]) -> tuple[str, str]:
    """How a replay or a watched game names its two players: ``"you"`` for a person's seat
    (a record's ``human``), otherwise the player spec; the seat is added only where both
    would read the same (``"heuristic, seat 1"``)."""
    shown = ["you" if p == HUMAN else p for p in players]
    if shown[0] == shown[1]:
        shown = [f"{p}, seat {i + 1}" for i, p in enumerate(shown)]
    return shown[0], shown[1]


def _does(who: str, verb: str) -> str:
    """``who`` doing ``verb`` in the present: ``"You take"``, ``"heuristic takes"``."""
    return f"You {verb}" if who == "you" else f"{who} {verb}s"


def move_text(state: State, seat: int, action: int, names: tuple[str, str]) -> str:
    """A decision in words, told with full information (for replays and watched games)."""
    who = names[seat]
    kind, index = decode_action(action)
    if kind == TOKEN:
        return f"{_does(who, 'play')} {TOKEN_NAMES[index]}."
    if kind == CARD:
        return f"{_does(who, 'play')} {TOKEN_NAMES[state.token]}: {card_names([*state.selection, index])}."
    if kind == SPLIT:
        a, b = split_sets(state.offer, index)
        return (
            f"{_does(who, 'split')} the Competition cards: pair A {card_names(a)} | pair B {card_names(b)}."
        )
    if kind == GIFT_TAKE:
        return f"{_does(who, 'take')} {card_label(index)} from the Gift."
    taken = state.offer[2:] if index else state.offer[:2]
    return f"{_does(who, 'take')} pair {'AB'[index]} ({card_names(taken)})."


def _scored_text(state: State, names: tuple[str, str]) -> str:
    s = state.last_round
    assert s is not None
    return (
        f"Round {s.round} scored: charm points {s.points[0]}-{s.points[1]}, "
        f"geishas {s.geishas[0]}-{s.geishas[1]} ({names[0]} first)."
    )


def frame_playing(state: State) -> dict[str, Any] | None:
    """The token on the table in a full-information position and the seat playing it (as
    :func:`playing` tells it to one player)."""
    return _on_table(state.phase, state.token, state.to_move, 1 - state.to_move)


def _frame(state: State, text: str, names: tuple[str, str], seat: int | None = None) -> dict[str, Any]:
    scored = state.phase in (Phase.ROUND_OVER, Phase.GAME_OVER)
    last = None if state.last_round is None else state.last_round.as_dict()
    result = None
    if state.phase == Phase.GAME_OVER and state.last_round is not None:
        s, w = state.last_round, state.winner
        summary = game_summary(list(s.points), list(s.geishas), None if w == DRAW else w, names, state.round)
        result = {"winner": w, **summary}
    return {
        "move": text,
        "seat": seat,
        "round": state.round,
        "phase": state.phase.name,
        "to_move": None if scored else state.to_move,
        "token": state.token,
        "markers": list(state.markers),
        "placed": [list(p) for p in state.placed],
        "hands": [list(cards_of(h)) for h in state.hands],
        "secrets": list(state.secrets),
        "tradeoffs": [list(cards_of(t)) for t in state.tradeoffs],
        "tokens": [[not s for s in sp] for sp in state.spent],
        "offer": list(state.offer),
        "pairs": [list(state.offer[:2]), list(state.offer[2:])] if state.phase == Phase.COMP_ANSWER else None,
        "selection": list(state.selection),
        "removed": state.removed,
        "draw_pile": sorted(state.draw_pile),  # what is left, not the order it comes in
        "playing": None if scored else frame_playing(state),
        "score": dict(zip(("points", "geishas"), map(list, score(state.markers)), strict=True)),
        "scoring": last if scored else None,
        "last_round": last,
        "result": result,
        "winner": state.winner,
    }
