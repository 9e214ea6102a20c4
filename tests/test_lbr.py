"""The full game's sampled local best response (hanamikoji_env.lbr, hanamikoji-exploit --method lbr).

What is checked: the player sees only what its seat may know (every input it is given, the
rows it is dealt from and the moves it is told); its particles follow the real game move for
move and hold its real hand; its Bayes weights rule out every deal the target could not have
played from; it beats the players it models; and bad input is refused in one line."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from hanamikoji_env.actions import CARD_BASE, GIFT, NUM_TOKENS, SECRET, TOKEN_SIZES
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.engine import (
    C_HANDS,
    C_OFFER,
    C_PILE,
    C_PILE_POS,
    C_REMOVED,
    C_SECRETS,
    C_SELECTION,
    C_TRADEOFFS,
    GAME_WIDTH,
    SELECT_PHASE,
    Dealer,
    apply_one,
    blank_row,
)
from hanamikoji_env.lbr import (
    Budget,
    LocalBestResponse,
    hidden_from_other,
    lbr_player,
    play_games,
    public_row,
    redeal,
    shuffle_unseen,
)
from hanamikoji_env.observation import OFFSETS
from hanamikoji_env.rules import DRAW_PILE_SIZE, FULL, NUM_GEISHAS
from hanamikoji_env.training.exploit import main as exploit_main


def hidden(seat: int) -> list[int]:
    """The columns ``seat`` cannot see, besides the pile and the log."""
    opp = 1 - seat
    return [
        *range(C_HANDS + NUM_GEISHAS * opp, C_HANDS + NUM_GEISHAS * (opp + 1)),
        *range(C_TRADEOFFS + NUM_GEISHAS * opp, C_TRADEOFFS + NUM_GEISHAS * (opp + 1)),
        C_SECRETS + opp,
        C_REMOVED,
    ]


def public_columns(seat: int) -> list[int]:
    """The columns ``seat`` sees, less the selection (its own only, while it selects)."""
    left_out = [*hidden(seat), *range(C_PILE, C_PILE + DRAW_PILE_SIZE), *range(C_SELECTION, C_SELECTION + 4)]
    return [c for c in range(GAME_WIDTH) if c not in left_out]


HIDDEN, PUBLIC_COLUMNS = hidden(0), public_columns(0)


def dealt(seed: int) -> np.ndarray:
    row = blank_row()
    Dealer(1, np.random.default_rng(seed), "permutation").deal(
        row, np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.bool_)
    )
    return row


def deck_counts(rows: np.ndarray) -> np.ndarray:
    """Every card of each row, wherever it lies, per geisha (placed, hands, Secrets, Trade-offs,
    the removed card and the whole pile, drawn slots included, less the hands' drawn cards)."""
    out = np.zeros((len(rows), NUM_GEISHAS), dtype=np.int64)
    for seat in (0, 1):
        out += rows[:, C_HANDS + NUM_GEISHAS * seat : C_HANDS + NUM_GEISHAS * (seat + 1)]
        out += rows[:, C_TRADEOFFS + NUM_GEISHAS * seat : C_TRADEOFFS + NUM_GEISHAS * (seat + 1)]
    for i, row in enumerate(rows):
        for seat in (0, 1):
            if row[C_SECRETS + seat] >= 0:
                out[i, row[C_SECRETS + seat]] += 1
        out[i, row[C_REMOVED]] += 1
        for k in range(int(row[C_PILE_POS]), DRAW_PILE_SIZE):
            out[i, row[C_PILE + k]] += 1
    return out


def test_a_public_row_is_the_same_whatever_the_other_player_holds() -> None:
    row = dealt(3)
    other = row.copy()
    other[0, HIDDEN] = 0
    other[0, C_HANDS + NUM_GEISHAS + 2] = 6  # another hand, removed card and pile
    other[0, C_PILE : C_PILE + DRAW_PILE_SIZE] = 5
    assert np.array_equal(public_row(row[0], 0), public_row(other[0], 0))
    assert not public_row(row[0], 0)[GAME_WIDTH:].any()  # the log (its draws) is blanked
    assert np.array_equal(public_row(row[0], 0)[PUBLIC_COLUMNS], row[0, PUBLIC_COLUMNS])


def test_a_public_row_is_refused_while_the_other_chooses_face_down_cards() -> None:
    row = dealt(4)
    mover = int(row[0, 4])  # C_TO_MOVE
    apply_one(row, 0, SECRET, -1)
    assert row[0, 5] == SELECT_PHASE and hidden_from_other(row[0], CARD_BASE)
    with pytest.raises(ValueError, match="face-down"):
        public_row(row[0], 1 - mover)
    public_row(row[0], mover)  # its own selection it sees


def test_only_face_down_cards_are_hidden_from_the_other_player() -> None:
    row = dealt(5)
    assert not hidden_from_other(row[0], SECRET)  # tokens are public
    gift = row.copy()
    apply_one(gift, 0, GIFT, -1)
    assert not any(hidden_from_other(gift[0], CARD_BASE + g) for g in range(NUM_GEISHAS))


def test_redeal_fills_exactly_the_unseen_places_with_the_unseen_cards() -> None:
    row = dealt(6)
    from hanamikoji_env.lbr import views

    obs = views(row, [0])[0][0]
    rows = redeal(public_row(row[0], 0), 0, obs, 200, np.random.default_rng(0))
    full = np.bincount(np.array(FULL.full_deck), minlength=NUM_GEISHAS)
    assert (deck_counts(rows) == deck_counts(row)).all() and (deck_counts(row) == full).all()
    assert (rows[:, PUBLIC_COLUMNS] == row[0, PUBLIC_COLUMNS]).all()
    opp = rows[:, C_HANDS + NUM_GEISHAS : C_HANDS + 2 * NUM_GEISHAS]
    assert (opp.sum(1) == row[0, C_HANDS + NUM_GEISHAS : C_HANDS + 2 * NUM_GEISHAS].sum()).all()
    assert len({r.tobytes() for r in rows}) > 100  # random deals, not one
    unseen = rows.copy()
    shuffle_unseen(unseen, np.random.default_rng(1))
    assert (deck_counts(unseen) == full).all()
    assert (unseen[:, PUBLIC_COLUMNS + HIDDEN[:-1]] == rows[:, PUBLIC_COLUMNS + HIDDEN[:-1]]).all()
    with pytest.raises(ValueError, match="unseen"):
        bad = obs.copy()
        bad[OFFSETS["unseen"].start] += 1
        redeal(public_row(row[0], 0), 0, bad, 2, np.random.default_rng(0))


class Recorder(LocalBestResponse):
    """The LBR player, recording every input it is given and checking its particles each step."""

    log: list[tuple[str, object]]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.log = []

    def start(self, public, obs) -> None:
        self.log.append(("start", public.copy()))
        super().start(public, obs)

    def opponent_moved(self, action) -> None:
        self.log.append(("opponent", action))
        super().opponent_moved(action)

    def own_draw(self, card) -> None:
        self.log.append(("draw", card))
        super().own_draw(card)

    def act(self, public, obs, mask) -> int:
        self.log.append(("act", public.copy()))
        if not self.lost:  # the particles follow the real game and hold the player's real hand
            hand = OFFSETS["hand"]
            mine = self.rows[:, C_HANDS + NUM_GEISHAS * self.seat : C_HANDS + NUM_GEISHAS * (self.seat + 1)]
            assert (mine == np.rint(obs[hand]).astype(int)).all()
            seen = public_columns(self.seat)
            assert (self.rows[:, seen] == public[seen]).all()
            assert (self.weights > 0).all()
        return super().act(public, obs, mask)


def test_the_player_is_told_only_what_its_seat_sees_and_its_particles_follow_the_game() -> None:
    target = parse_player("heuristic").make(seed=0, round_limit=None)
    players: list[Recorder] = []

    def make(seat, rng):
        players.append(Recorder(target.play_probabilities, seat, Budget(64, 8), rng))
        return players[-1]

    play_games(target, 4, make, seed=1, progress=False)
    for player in players:
        opp = 1 - player.seat
        kinds = {kind for kind, _ in player.log}
        assert kinds == {"start", "opponent", "draw", "act"}
        for kind, what in player.log:
            if kind in ("start", "act"):
                assert not what[C_HANDS + NUM_GEISHAS * opp : C_HANDS + NUM_GEISHAS * (opp + 1)].any()
                assert not what[C_TRADEOFFS + NUM_GEISHAS * opp : C_TRADEOFFS + NUM_GEISHAS * (opp + 1)].any()
                assert what[C_SECRETS + opp] == -1 and what[C_REMOVED] == 0
                assert not what[C_PILE : C_PILE + DRAW_PILE_SIZE].any()
                assert not what[GAME_WIDTH:].any()
                if kind == "start" or what[5] != SELECT_PHASE:  # C_PHASE: not its own selection
                    assert not what[C_SELECTION : C_SELECTION + 4].any()
        told = [what for kind, what in player.log if kind == "opponent"]
        assert None in told  # the heuristic plays Secrets and Trade-offs: their cards are not told


def test_bayes_weights_keep_only_deals_a_deterministic_target_could_have_played_from() -> None:
    """Against the greedy shipped agent (one move per position), the particles left after each
    of its moves the LBR player sees are those whose deal makes it choose that move, no others."""
    from hanamikoji_env.lbr import views

    target = parse_player("pretrained").make(seed=0, round_limit=None)
    informative = 0
    for seed in range(8):
        row = dealt(8 + seed)
        heuristic = int(row[0, 4])  # C_TO_MOVE: its first turn
        seat = 1 - heuristic
        lbr = LocalBestResponse(target.play_probabilities, seat, Budget(512, 8), np.random.default_rng(seed))
        lbr.start(public_row(row[0], seat), views(row, [seat])[0][0])
        opp = slice(C_HANDS + NUM_GEISHAS * heuristic, C_HANDS + NUM_GEISHAS * (heuristic + 1))
        while int(row[0, 4]) == heuristic and int(row[0, 3]) == heuristic:  # C_CURRENT: its turn
            action = int(target.act_batch(*views(row, [heuristic]))[0])
            told = None if hidden_from_other(row[0], action) else action
            if told is not None:
                agrees = target.act_batch(*views(lbr.rows, np.full(len(lbr.rows), heuristic))) == action
                kept = {r[opp].tobytes() for r in lbr.rows[agrees]}
                dropped = {r[opp].tobytes() for r in lbr.rows[~agrees]}
                informative += 0 < agrees.sum() < len(agrees)
                before = {r[opp].tobytes() for r in lbr.rows}
            lbr.opponent_moved(told)
            apply_one(row, 0, action, -1)
            if told is not None and len(lbr.rows):  # each survivor is a kept deal, the move applied
                after = lbr.rows[:, opp].copy()
                if action >= CARD_BASE and row[0, 7] == 0:  # C_SEL_LEN 0: the offer left the hand
                    after += np.bincount(row[0, C_OFFER : C_OFFER + row[0, 8]], minlength=NUM_GEISHAS)
                survivors = {r.tobytes() for r in after}
                assert survivors <= kept and not survivors & dropped and survivors <= before
    assert informative >= 3  # the evidence ruled deals out, more than once


class Watched(LocalBestResponse):
    """The LBR player, each of its moves logged: how many were legal, the move, whether it valued
    moves there and the rest of its move chosen whole."""

    log: list[tuple[int, int, bool, list[int]]]

    def act(self, public, obs, mask) -> int:
        action = super().act(public, obs, mask)
        self.log.append((int(mask.sum()), action, self.valued, list(self.planned)))
        return action


def watched_moves(plans: int) -> list[tuple[int, int, bool, list[int]]]:
    """:class:`Watched`'s moves in two games against the heuristic, at ``plans``."""
    target = parse_player("heuristic").make(seed=0, round_limit=None)
    log: list[tuple[int, int, bool, list[int]]] = []

    def make(seat, rng):
        player = Watched(target.play_probabilities, seat, Budget(64, 8, plans), rng)
        player.log = log
        return player

    play_games(target, 2, make, seed=3, progress=False)
    return log


def test_a_token_and_its_cards_are_chosen_as_one_move() -> None:
    """With ``plans``, a token decision values whole moves (the heuristic's best plans: each a
    legal token with its cards from the hand, the heuristic's own choice first) and the player
    then plays that move's cards without valuing them again; with ``plans=0`` it values each
    card decision on its own."""
    from hanamikoji_env.bots.heuristic import heuristic_actions
    from hanamikoji_env.lbr import turn_plans, views

    for seed in range(6):
        row = dealt(seed)
        obs, mask = views(row, [int(row[0, 4])])  # C_TO_MOVE: the starter's first decision
        sequences, lengths = turn_plans(obs[0], mask[0], 5)
        assert len(sequences) == 5 and sequences[0, 0] == heuristic_actions(obs, mask)[0]
        for sequence, n in zip(sequences, lengths, strict=True):
            token, cards = int(sequence[0]), sequence[1:n] - CARD_BASE
            assert mask[0, token] and n == 1 + TOKEN_SIZES[token]
            assert (np.bincount(cards, minlength=NUM_GEISHAS) <= obs[0, OFFSETS["hand"]]).all()
    for plans in (3, 0):
        log = watched_moves(plans)
        wholes = 0
        for i, (choices, action, valued, planned) in enumerate(log):
            if action < NUM_TOKENS and choices > 1 and plans:  # its cards follow, as planned
                assert valued and len(planned) == TOKEN_SIZES[action]
                assert [a for _, a, _, _ in log[i + 1 : i + 1 + len(planned)]] == planned
                assert not any(s for _, _, s, _ in log[i + 1 : i + 1 + len(planned)])
                wholes += 1
            if not plans:
                assert valued == (choices > 1) and not planned
        assert wholes >= 4 or not plans


def test_lbr_beats_random_and_is_refused_for_players_it_cannot_model() -> None:
    target = parse_player("random").make(seed=0, round_limit=None)
    result = play_games(target, 40, lbr_player(target, Budget(256, 64)), seed=2, progress=False)
    summary = result.as_dict()
    assert summary["ci95"][0] > 0.7 and summary["games"] == 40
    assert summary["decision_ms"]["decisions"] > 200
    with pytest.raises(ValueError, match="cannot give its move probabilities"):
        lbr_player(parse_player("search").make(seed=0, round_limit=None), Budget())
    with pytest.raises(ValueError, match="positive even"):
        play_games(target, 3, lbr_player(target, Budget()), progress=False)
    with pytest.raises(ValueError, match="particles must be an int"):
        Budget(particles=0)


def test_own_moves_make_the_lbr_players_later_moves_in_its_playouts_and_the_target_the_rest() -> None:
    """With ``own``, the LBR player's playouts ask ``own`` for its own moves only and the target
    for the target's only (told apart by the observation's "i_started": the player's, as it sees
    it at the round's start, against the asked row's)."""
    target = parse_player("heuristic").make(seed=0, round_limit=None)
    own = parse_player("random").make(seed=0, round_limit=None)
    started = OFFSETS["i_started"].start
    now: dict[str, bool] = {}  # the player's "i_started" this round
    same_seat: dict[str, list[np.ndarray]] = {"own": [], "target": []}

    def spy(name, probs):
        def ask(obs, mask):
            same_seat[name].append((obs[:, started] > 0.5) == now["mine"])
            return probs(obs, mask)

        return ask

    class Logged(LocalBestResponse):
        def start(self, public, obs) -> None:
            now["mine"] = bool(obs[started] > 0.5)
            super().start(public, obs)

    def make(seat, rng):
        args = spy("target", target.play_probabilities), seat, Budget(64, 8, 3), rng
        return Logged(*args, own=spy("own", own.play_probabilities))

    result = play_games(target, 4, make, seed=5, progress=False)
    assert len(result.scores) == 4
    own_calls, target_calls = np.concatenate(same_seat["own"]), np.concatenate(same_seat["target"])
    assert len(own_calls) > 100 and own_calls.all()
    assert len(target_calls) > 100 and not target_calls.any()


@pytest.mark.parametrize(
    ("version", "needs"), [(2, "this round's and earlier rounds' logs"), (3, "this round's log")]
)
def test_a_target_reading_a_log_of_the_game_is_refused_saying_what_it_needs(
    version: int, needs: str, tmp_path
) -> None:
    """The particles hold positions, not a history: a target on observation version 2 or 3 would
    read the real game's log in every particle (its draws and face-down cards), so it is refused."""
    from hanamikoji_env.bots.policy import PolicyBot
    from hanamikoji_env.nn import PolicyNet, save_checkpoint

    for v in (1, version):
        save_checkpoint(tmp_path / f"v{v}.pt", PolicyNet(16, 1, observation_version=v))
    with pytest.raises(ValueError, match=f"a version-{version} target needs {re.escape(needs)}"):
        lbr_player(PolicyBot(tmp_path / f"v{version}.pt"), Budget())
    lbr_player(PolicyBot(tmp_path / "v1.pt"), Budget())  # version 1: modelled


def test_exploit_lbr_on_the_full_game_writes_its_estimate(tmp_path, capsys) -> None:
    out = tmp_path / "lbr.json"
    exploit_main(
        ["--target", "random", "--method", "lbr", "--variant", "full", "--games", "4",
         "--particles", "32", "--samples", "4", "--plans", "3", "--no-progress", "--out", str(out)]
    )  # fmt: skip
    report = json.loads(out.read_text())
    assert report["method"] == "lbr" and report["variant"] == "full" and report["games"] == 4
    assert report["budget"] == {"particles": 32, "samples": 4, "plans": 3} and report["bound"] == "lower"
    assert report["own_moves"] == "target"
    valued = report["decision_ms"]["valued"]
    assert 0 < valued < report["decision_ms"]["decisions"]  # a move's cards come with its token
    assert report["ci95"][0] <= report["br_score"] <= report["ci95"][1]
    assert "local best response scores" in capsys.readouterr().out
    for argv, message in (
        (
            ["--target", "search", "--method", "lbr", "--variant", "full"],
            "cannot give its move probabilities",
        ),
        (["--target", "random", "--method", "lbr", "--variant", "full", "--samples", "0"], "samples must be"),
        (["--target", "random", "--method", "lbr", "--variant", "full", "--plans", "-1"], "plans must be"),
        (["--target", "random", "--method", "lbr", "--variant", "full", "--games", "3"], "positive even"),
        (
            ["--target", "random", "--method", "lbr", "--variant", "full", "--own-moves", "search"],
            "--own-moves: search cannot give its move probabilities",
        ),
        (
            ["--target", "random", "--method", "lbr", "--own-moves", "heuristic"],
            "are for --method lbr on the full game",
        ),
        (
            ["--target", "random", "--method", "rl", "--own-moves", "heuristic"],
            "are for --method lbr on the full game",
        ),
        (
            ["--target", "random", "--method", "exact", "--games", "4"],
            "are for --method lbr on the full game",
        ),
        (
            ["--target", "random", "--method", "rl", "--particles", "4"],
            "are for --method lbr on the full game",
        ),
    ):
        with pytest.raises(SystemExit):
            exploit_main(argv)
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()[-1]) < 300, err
