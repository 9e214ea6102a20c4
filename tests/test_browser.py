"""The browser board end to end: a real headless Chromium plays a whole game by clicking.

Needs Debian's ``chromium`` (``apt-get install chromium``; CI installs it) and
Playwright's Python package (the ``play`` extra), pointed at that executable.
The screenshot of the board is written to the test's folder (its path is printed).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import extra

from hanamikoji_env import records

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    if os.environ.get("CI"):
        pytest.fail("CI needs Debian's chromium for the browser test (apt-get install chromium)")
    pytest.skip("the browser test needs Chromium: apt-get install chromium", allow_module_level=True)

uvicorn = extra("uvicorn")
sync_api = extra("playwright.sync_api")

from hanamikoji_env.play.server import create_app  # noqa: E402

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(create_app("heuristic"), host="127.0.0.1", port=port, log_level="warning")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)


def _launch(p: Any) -> Any:
    return p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


HARNESS = {"bypass_csp": True}
"""For the pages these tests drive with ``wait_for_function`` and ``evaluate``, which Playwright runs
through ``eval``: the page's own policy forbids that.  The page itself is checked under its policy
in :func:`test_the_page_plays_under_its_own_content_security_policy`."""


def _no_horizontal_overflow(page: Any, width: int) -> None:
    """Nothing on the page is wider than the viewport (a phone shows no sideways scrolling)."""
    wide = page.evaluate(
        """(width) => [...document.querySelectorAll('body *')]
            .filter((n) => n.getClientRects().length && n.getBoundingClientRect().right > width + 1)
            .map((n) => n.tagName + '#' + n.id + '.' + n.className)""",
        width,
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= width, wide
    assert not wide, wide


TOUCH = 44
"""The least width and height of a control on a touch screen, in CSS pixels (WCAG 2.5.5)."""


def _small_controls(page: Any) -> list[str]:
    """The visible controls (buttons, links drawn as buttons, menus, fields, the replay slider)
    smaller than :data:`TOUCH` either way: each a tap that misses on a phone."""
    return page.evaluate(
        """(least) => [...document.querySelectorAll('button, .button, select, input, a[href]')]
            .filter((n) => n.getClientRects().length && getComputedStyle(n).visibility !== 'hidden')
            .map((n) => [n, n.getBoundingClientRect()])
            .filter(([n, r]) => r.width > 1 && r.height > 1 && (r.width < least || r.height < least))
            .map(([n, r]) => `${n.tagName}#${n.id}.${n.className} ${Math.round(r.width)}x${Math.round(r.height)}`)""",
        TOUCH,
    )


PARTS = [
    "#scoreboard",
    "#top-player",
    "#geishas",
    "#bottom-player",
    "#table .legend",
    "#offer-title",
    "#offer",
    "#offer .selected",
    "#prompt",
    "#tokens",
    "#selection-bar",
    "#next-move",
    "#me",
    "#finished",
]
"""The board's parts a person reads at once: none may cover another."""


def _overlaps(page: Any) -> list:
    """Pairs of the board's visible parts whose boxes intersect, with the page at its top (the
    dock is sticky: on a short screen it would cover the table)."""
    return page.evaluate(
        """async (parts) => { await Promise.all(document.getAnimations().map((a) => a.finished.catch(() => null)));  /* slides done */ window.scrollTo(0, 0);
            const boxes = parts.map((sel) => [sel, document.querySelector(sel)])
              .filter(([, n]) => n && n.getClientRects().length && !n.closest('[hidden]'))
              .map(([sel, n]) => [sel, n.getBoundingClientRect(), n]);
            const out = [];
            for (const [i, [a, r, m]] of boxes.entries()) for (const [b, q, n] of boxes.slice(i + 1)) {
              if (m.contains(n) || n.contains(m)) continue;  // a part and what lies in it
              if (r.left < q.right - 1 && q.left < r.right - 1 && r.top < q.bottom - 1 && q.top < r.bottom - 1)
                out.push([a, b, Math.round(r.bottom), Math.round(q.top)]);
            }
            return out; }""",
        PARTS,
    )


def _card_parts_overlap(page: Any) -> list:
    """Cards of the hand or an offer whose number key, charm badge, tick or name cover each other."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#hand .card, #offer .card')].flatMap((c) => {
            const parts = [...c.querySelectorAll('kbd, .charm-badge, .tick, .g')]
              .filter((n) => n.getClientRects().length && getComputedStyle(n).display !== 'none')
              .map((n) => [n.className || n.tagName, n.getBoundingClientRect()]);
            const out = [];
            for (const [i, [a, r]] of parts.entries()) for (const [b, q] of parts.slice(i + 1))
              if (r.left < q.right - 0.5 && q.left < r.right - 0.5 && r.top < q.bottom - 0.5 && q.top < r.bottom - 0.5)
                out.push([c.title, a, b]);
            return out; })"""
    )


def _low_contrast(page: Any, selectors: list[str]) -> list:
    """Of the visible elements matching ``selectors``, those whose text and background colours
    contrast less than 4.5:1 (WCAG's body text), with the two colours."""
    from hanamikoji_env.play.tui import contrast

    pairs = page.evaluate(
        """(sels) => sels.flatMap((sel) => [...document.querySelectorAll(sel)])
            .filter((n) => n.getClientRects().length)
            .map((n) => { const s = getComputedStyle(n); return [n.id || n.className, s.color, s.backgroundColor]; })""",
        selectors,
    )

    def hexed(rgb: str) -> str:
        return "#" + "".join(f"{int(x):02x}" for x in rgb[rgb.index("(") + 1 : -1].split(",")[:3])

    return [(what, c, b) for what, c, b in pairs if contrast(hexed(c), hexed(b)) < 4.5]


def _cut_words(page: Any) -> list[str]:
    """Visible card names, scores and the results' headers drawn cut (an ellipsis) or broken
    inside a word."""
    return page.evaluate(
        r"""async () => {
            await Promise.all(document.getAnimations().map((a) => a.finished.catch(() => null)));  /* slides done */
            const shown = (n) => n.getClientRects().length && getComputedStyle(n).visibility !== 'hidden';
            const cut = [...document.querySelectorAll('.card .g, #scoreboard span, .player .slot, #rounds th')]
              .filter((n) => shown(n) && n.scrollWidth > n.clientWidth + 1);
            const broken = [...document.querySelectorAll('#rounds th')].filter((n) => {
              if (!shown(n) || !n.firstChild) return false;
              const words = n.textContent.split(/\s+/).length, range = document.createRange();
              range.selectNodeContents(n);
              return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > words;
            });
            return [...cut, ...broken].map((n) => `${n.className || n.tagName}: ${n.textContent}`);
        }"""
    )


def _phone_fits(page: Any, what: str) -> None:
    """On a phone the dock, while it covers the table (sticky), takes at most a third of the
    window, and no word on the board is cut."""
    share = page.evaluate(
        """() => { const d = document.getElementById('dock');
                   return getComputedStyle(d).position === 'sticky' ? d.getBoundingClientRect().height / innerHeight : 0; }"""
    )
    assert share <= 1 / 3, (what, round(share, 3))
    assert not _cut_words(page), (what, _cut_words(page))


def _table_top(page: Any) -> list[float]:
    """Where the table and its geishas' tiles are, the page at its top: they stay put as turns
    pass and cards land."""
    return page.evaluate(
        "window.scrollTo(0, 0), [document.getElementById('table'), ...document.querySelectorAll('#geishas .tile')]"
        ".map((n) => n.getBoundingClientRect().top)"
    )


def _download_record(page: Any, button: str, path: Path) -> records.GameRecord:
    """Click ``button``, save the record it downloads to ``path``; it must hold one verified game."""
    with page.expect_download() as download:
        page.click(button)
    download.value.save_as(path)
    (record,) = list(records.read_records(path))
    records.verify(record)
    return record


def _wait_render(page: Any) -> None:
    """Until the board waits for the person again (``aria-busy`` off), the opponent's next move
    waits to be shown by hand, or a round-end screen asks to be read first."""
    page.wait_for_function(
        "document.getElementById('board').getAttribute('aria-busy') === 'false'"
        " || !document.getElementById('next-move').hidden"
        " || document.getElementById('round-end').open"
    )


class Views:
    """The views the server sent the page (each POST's JSON), so a test knows the position each
    step of the opponent's playback must show."""

    def __init__(self, page: Any) -> None:
        self.sent: list[dict] = []
        self.posts = 0
        page.on("request", lambda r: setattr(self, "posts", self.posts + (r.method == "POST")))
        page.on("response", self._got)

    def _got(self, response: Any) -> None:
        if response.request.method == "POST" and "/api/games" in response.url and response.ok:
            self.sent.append(response.json())

    def told(self) -> int:
        """The events the view before the latest told (0: the latest is a new game's first)."""
        same = len(self.sent) > 1 and self.sent[-2]["id"] == self.sent[-1]["id"]
        return len(self.sent[-2]["events"]) if same else 0

    def steps(self) -> list[dict]:
        """The positions the latest view plays out: its steps not told by the view before it."""
        return [st for st in self.sent[-1]["steps"] if st["events"] > self.told()]


def _check_step(page: Any, views: Views) -> dict:
    """The position on the board while a step is shown by hand is that step's, all of it: the
    hand, the lit token and whose it is, the offer on the table while it is open, no controls."""
    prompt = page.text_content("#prompt") or ""
    index, count = (int(x) for x in prompt[prompt.index("(move ") + 6 : prompt.index(")")].split(" of "))
    steps = views.steps()
    assert count == len(steps), (prompt, len(steps))
    step = steps[index - 1]
    b = step["board"]
    hand = page.eval_on_selector_all("#hand .card", "ns => ns.map((n) => Number(n.dataset.geisha))")
    assert hand == b["hand"], (step["phase"], hand, b["hand"])
    lit = page.eval_on_selector_all(
        "#table .token.playing", "ns => ns.map((n) => [n.closest('.player').id, Number(n.dataset.token)])"
    )
    p = b["playing"]
    assert lit == (
        [] if p is None else [[f"{'top' if p['by'] == 'opponent' else 'bottom'}-player", p["token"]]]
    )
    offer = sorted(page.eval_on_selector_all("#offer .card", "ns => ns.map((n) => Number(n.dataset.geisha))"))
    if p is not None and p["token"] >= 2:
        assert page.locator("#offer-area").is_visible() and offer == sorted(b["offer"]), (offer, b["offer"])
    else:
        assert page.locator("#offer-area").is_hidden()
    assert page.locator("#selection-bar").is_hidden() and page.locator("#tokens button").count() == 0
    since = views.sent[-1]["events"][
        steps[index - 2]["events"] if index > 1 else views.told() : step["events"]
    ]
    drawn = [g for e in since if e["kind"] == "draw" and e["who"] == "you" for g in e["cards"]]
    fresh = page.eval_on_selector_all("#hand [data-last]", "ns => ns.map((n) => Number(n.dataset.geisha))")
    assert fresh == sorted(drawn), (fresh, drawn)  # the card just drawn is marked in the hand
    if step["phase"] == "ROUND_OVER":  # the round's last move, drawn before its scoring
        assert page.locator("#table .token.left").count() == 0 and not hand
    return step


ACTIONABLE = "#tokens button, #hand button.card, #offer button, #confirm, #continue"
"""What a person acts on at a decision: tokens, hand cards, the offer's cards, Confirm, Continue."""


def _actionable_out_of_view(page: Any) -> list:
    """Enabled controls a person needs now that are not inside the window as the page opens
    (scrolled to the top): each as [what, top, bottom]."""
    return page.evaluate(
        """(sel) => { window.scrollTo(0, 0); return [...document.querySelectorAll(sel)]
            .filter((n) => n.getClientRects().length && !n.disabled && !n.closest('[hidden]'))
            .map((n) => [n.id || n.className || n.tagName, Math.round(n.getBoundingClientRect().top), Math.round(n.getBoundingClientRect().bottom)])
            .filter(([, top, bottom]) => top < 0 || bottom > innerHeight); }""",
        ACTIONABLE,
    )


GEISHA_NAMES = ["Iris", "Willow", "Lotus", "Maple", "Plum", "Orchid", "Sakura"]


def _play_whole_game(page: Any, views: Views, tmp_path: Path, tag: str) -> dict:
    """Play a game to its end through the board's interactions, as a person would: the last token
    left each turn with cards chosen in any order (one selection cancelled), a Competition split
    built on its cards, a Gift card and a pair chosen, undone, chosen again and confirmed, an
    abandon asked for and cancelled.  At every decision everything to act on must be in the window
    at the top of the page; the opponent's moves are shown by hand, each checked against its
    position (:func:`_check_step`) and marked on the table, and each round's last move is on the
    table when its scoring screen opens."""
    seen = {
        "cancelled": 0,
        "descending": 0,
        "scorings": 0,
        "split": 0,
        "undone": 0,
        "abandon": 0,
        "marked": 0,
        "gift": 0,
        "pair": 0,
        "steps": 0,
        "lit": 0,
        "next_move_at": set(),
    }
    steps = 0
    shown = None  # the last step of the opponent's playback on the board
    top = _table_top(page)  # the table stays where it is, whoever moves
    while page.locator("#finished").is_hidden() or page.locator("#round-end[open]").count():
        steps += 1
        assert steps < 600, "the game did not end"
        _wait_render(page)
        if page.locator("#finished").is_visible() and not page.locator("#round-end[open]").count():
            break  # the last scoring screen was closed: the game's end is drawn
        if page.locator("#next-move").is_visible() and not page.locator("#round-end[open]").count():
            # a step of the playback, shown by hand
            shown = _check_step(page, views)
            if tag == "390":
                assert not _overlaps(page), (shown["phase"], _overlaps(page))
                _no_horizontal_overflow(page, 390)
                _phone_fits(page, shown["phase"])
            # nothing moves under the finger: Next move stays where it was, offer or none
            seen["next_move_at"].add(round(page.locator("#next-move").bounding_box()["y"]))
            assert _table_top(page) == top, (tag, shown["phase"], page.text_content("#table"))
            seen["steps"] += 1
            seen["lit"] += shown["board"]["playing"] is not None
            if page.locator("#table [data-last], #offer-area[data-last], #hand [data-last]").count():
                seen["marked"] += 1  # what the move changed is marked
            page.click("#next-move")
            continue
        assert not _actionable_out_of_view(page), (
            tag,
            page.text_content("#prompt"),
            _actionable_out_of_view(page),
        )
        if tag == "390":  # a phone: the table, your row and the dock together, nothing covered
            assert not _overlaps(page), (page.text_content("#prompt"), _overlaps(page))
            _no_horizontal_overflow(page, 390)
            _phone_fits(page, page.text_content("#prompt"))
        if page.locator("#round-end[open]").count():
            # the move that ended the round is on the table under the scoring screen
            assert shown is not None and shown["phase"] == "ROUND_OVER", shown and shown["phase"]
            shown = None
            body = page.text_content("#round-end-body") or ""
            assert "Secrets revealed" in body and "Totals" in body and "Sakura 5" in body
            if seen["scorings"] == 0:
                page.screenshot(path=str(tmp_path / f"round-end-{tag}.png"))
                # put aside to look at the table it scored, then back, then on
                scored_round = page.text_content("#round-end-title") or ""
                page.click("#peek")
                page.wait_for_selector("#back-to-scoring", state="visible")  # on the dialog's close event
                assert page.locator("#round-end[open]").count() == 0
                round_shown = page.text_content("#scoreboard .round") or ""
                assert round_shown.split()[:2] == scored_round.split()[:2], (round_shown, scored_round)
                page.click("#back-to-scoring")
                assert page.locator("#round-end[open]").count() == 1
                assert page.locator("#back-to-scoring").is_hidden()
            seen["scorings"] += 1
            page.click("#continue")
            continue
        posts = views.posts
        shown = None
        if steps == 3 and not seen["abandon"]:  # Start during a game asks first; Keep playing keeps it
            page.click("#show-new")
            page.click("#start")
            assert page.locator("#abandon[open]").count() == 1
            page.click("#abandon-no")
            page.click("#show-new")
            assert views.posts == posts and page.locator("#abandon[open]").count() == 0
            seen["abandon"] += 1
            continue
        tokens = page.locator("#tokens button")
        if tokens.count():
            tokens.last.click()  # the largest token left: more cards to choose
            need = {"Secret": 1, "Trade-off": 2, "Gift": 3, "Competition": 4}
            label = page.text_content("#prompt") or ""
            n = next(v for k, v in need.items() if f"{k}:" in label)
            hand = page.locator("#hand button.card")
            if not seen["cancelled"] and n >= 2:  # one cancel: a card chosen, then the selection dropped
                hand.nth(0).click()
                assert page.locator("#hand .card.selected").count() == 1
                page.click("#cancel")
                assert page.locator("#hand button").count() == 0 and tokens.count()
                seen["cancelled"] += 1
                continue
            count = hand.count()
            order = list(range(count - 1, count - 1 - n, -1))  # from the right: descending geishas
            for i in order:
                hand.nth(i).click()
            hand.nth(order[0]).click()  # a selected card can be put back, then chosen again
            assert page.locator("#hand .card.selected").count() == n - 1
            assert page.locator("#confirm").is_disabled()
            hand.nth(order[0]).click()
            assert page.locator("#hand .card.selected").count() == n
            assert not _card_parts_overlap(page), _card_parts_overlap(page)
            assert not _low_contrast(
                page, ["#confirm", ".card .tick", ".pill.top", ".pill.bottom", ".token.playing"]
            )
            assert _table_top(page) == top, page.text_content("#scoreboard")
            picked = (page.text_content("#selected") or "").split(":", 1)[1]
            geishas = [GEISHA_NAMES.index(c.split()[0]) for c in picked.split(",")]
            seen["descending"] += geishas != sorted(geishas)
            assert not _actionable_out_of_view(page), (tag, "selection")
            if tag == "390":
                _phone_fits(page, "selection chosen")
            page.click("#confirm")
        elif page.locator(".group-B button.card").count():
            # the split, built on the cards: two of them moved into pair A, one moved back and again
            b = page.locator(".group-B button.card")
            b.nth(0).click()
            assert page.locator("#confirm").is_disabled()
            page.locator(".group-B button.card").nth(0).click()
            assert (
                page.locator(".group-A button.card").count() == 2
                and page.locator(".group-B button.card").count() == 2
            )
            page.locator(".group-A button.card").nth(0).click()
            assert page.locator(".group-A button.card").count() == 1
            page.locator(".group-B button.card").nth(1).click()
            assert page.locator("#confirm").is_enabled()
            if not seen["split"]:
                page.screenshot(path=str(tmp_path / f"split-{tag}.png"))
            seen["split"] += 1
            assert not _actionable_out_of_view(page), (tag, "split")
            if tag == "390":
                _phone_fits(page, "split chosen")
            page.click("#confirm")
        else:
            answers = page.locator("#offer button")
            assert answers.count(), page.text_content("#prompt")
            seen["gift" if "Gift" in (page.text_content("#offer-title") or "") else "pair"] += 1
            answers.first.click()  # chosen: nothing is sent before Confirm
            assert views.posts == posts
            assert "You take" in (page.text_content("#selected") or "")
            assert not _card_parts_overlap(page), _card_parts_overlap(page)
            if not seen["undone"]:
                page.click("#cancel")
                assert (
                    page.locator("#offer .selected").count() == 0
                    and page.locator("#selection-bar").is_hidden()
                )
                seen["undone"] += 1
                answers.last.click()
            assert not _actionable_out_of_view(page), (tag, "answer")
            if tag == "390":
                _phone_fits(page, "answer chosen")
            if tag == "390":
                assert not _overlaps(page), ("answer chosen", _overlaps(page))
            page.click("#confirm")
        _wait_render(page)
    return seen


@pytest.mark.slow
def test_a_person_plays_a_whole_game_on_the_cards_and_replays_it(server: str, tmp_path: Path) -> None:
    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 800}, accept_downloads=True, **HARNESS)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        views = Views(page)
        page.goto(server)
        page.wait_for_selector("#opponent option[value=heuristic]", state="attached")
        page.fill("#seed", "1")  # three rounds with this test's moves
        page.click("#start")
        page.wait_for_selector("#geishas .geisha")
        assert page.locator("#new-game").is_hidden()  # the form folds away during a game
        assert page.locator("#geishas .geisha").count() == 7
        assert [t.strip() for t in page.locator("#geishas .tile .name").all_text_contents()] == GEISHA_NAMES
        assert "Round 1" in page.text_content("#scoreboard") and "practice" in page.text_content(
            "#scoreboard"
        )
        # while a token is chosen the hand is plain cards, readable, not disabled buttons
        assert page.locator("#hand .card").count() == 7 and page.locator("#hand button").count() == 0
        page.select_option("#pace", "-1")  # the opponent's moves one at a time, by hand
        seen = _play_whole_game(page, views, tmp_path, "1280")
        assert not errors, errors
        assert seen["cancelled"] == 1 and seen["descending"] >= 1 and seen["abandon"] == 1
        assert seen["split"] >= 1 and seen["undone"] == 1 and seen["marked"] >= 3, seen
        assert len(seen["next_move_at"]) == 1, seen["next_move_at"]  # nothing moved under the pointer
        assert seen["gift"] >= 1 and seen["pair"] >= 1, seen  # both kinds of answer, chosen and confirmed
        assert seen["steps"] > 0 and seen["lit"] > 0, seen  # played out one at a time, offers lit
        assert page.locator("#round-end[open]").count() == 0

        # the ending: a headline, the score and why, each round, what next
        headline = page.text_content("#headline")
        assert headline in ("You won", "You lost", "Draw"), headline
        result = page.text_content("#result") or ""
        assert "Charm points" in result and "geishas" in result, result
        page.screenshot(path=str(tmp_path / "finished-1280.png"), full_page=True)
        page.emulate_media(color_scheme="dark")
        page.screenshot(path=str(tmp_path / "finished-1280-dark.png"), full_page=True)
        page.emulate_media(color_scheme="light")
        record = _download_record(page, "#download", tmp_path / "game.jsonl")
        assert record.players == ("human", "heuristic") and record.meta["seed"] == 1 and record.rounds == 3
        assert seen["scorings"] == record.rounds and page.locator("#rounds tr").count() == 2 + record.rounds

        # the replay is the board itself, with the round ends as positions of their own
        page.click("#replay-this")
        page.wait_for_selector("#nav:not([hidden])")
        assert page.text_content("#replay-move") == "The first deal."
        page.click("#next")
        assert (page.text_content("#replay-move") or "").startswith("You play ")
        page.click("#last")
        extra = page.text_content("#replay-extra") or ""
        assert "scored" in extra and "Secrets revealed" in extra and "Game over" in extra
        frames = int(page.locator("#scrub").get_attribute("max") or 0)
        assert frames == len(replay_frames_of(record)) - 1
        scoring_lines = page.locator("#log li.scoring-line")
        assert scoring_lines.count() == record.rounds  # each scoring is a line of its own, and a way there
        scoring_lines.first.click()
        assert "Round 1 scored" in (page.text_content("#replay-extra") or "")
        page.click("#close-replay")
        assert page.locator("#finished").is_visible()

        # Play again: the same settings (the same seed: a practice deal), a fresh game
        page.click("#play-again")
        page.wait_for_function("document.getElementById('finished').hidden")
        assert "Round 1" in page.text_content("#scoreboard") and page.locator("#hand .card").count() == 7
        assert not errors, errors
        browser.close()


@pytest.mark.slow
def test_watching_two_bots_and_stepping_through_a_record_file_of_many_games(
    server: str, tmp_path: Path
) -> None:
    from hanamikoji_env.play.replays import bot_game

    games = [bot_game(("heuristic", "random"), seed=s) for s in (2, 3, 4)]  # the second lasts two rounds
    path = tmp_path / "games.jsonl"
    path.write_text("".join(g.to_json() + "\n" for g in games))
    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900}, **HARNESS)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(server)
        page.wait_for_selector("#watch-0 option[value=search]", state="attached")

        # watch two bots play to the end, move by move
        page.click("#show-watch")
        page.select_option("#watch-0", "heuristic")
        page.select_option("#watch-1", "search")
        # a sign of life while the bots play, read in the same task as the click (the game may be
        # played before a second look)
        disabled, status = page.evaluate(
            "() => { document.getElementById('watch-start').click();"
            " return [document.getElementById('watch-start').disabled,"
            " document.getElementById('watch-status').textContent]; }"
        )
        assert disabled and "playing the game" in status, (disabled, status)
        page.wait_for_selector("#nav:not([hidden])")
        assert page.locator("#watch-download").is_hidden()  # the record tells the result: not before the end
        page.select_option("#pace", "300")
        assert page.locator("#scrub").is_hidden() and " of " not in (page.text_content("#replay-pos") or "")
        page.wait_for_function("document.getElementById('replay-pos').textContent.startsWith('move 2 ')")
        spoilers = page.evaluate(
            "[...document.querySelectorAll('#log li')].filter((li) => !li.hidden && Number(li.dataset.frame) > 2).length"
        )
        assert spoilers == 0  # the log grows as the game is shown: nothing told before it is played
        while not (page.text_content("#replay-extra") or "").count("Game over"):
            shown = page.evaluate(
                "[Number(document.getElementById('scrub').value), Math.max(0, ...[...document.querySelectorAll('#log li')]"
                ".filter((li) => !li.hidden).map((li) => Number(li.dataset.frame)))]"
            )
            assert shown[1] <= shown[0], shown
            page.wait_for_timeout(200)
        # the end: the scoring is its own position and line, the one line lit, scrolled into view
        assert page.locator("#log li.current").count() == 1
        assert "scoring-line" in (page.get_attribute("#log li.current", "class") or "")
        area, line = page.evaluate(
            "[document.getElementById('log-area'), document.querySelector('#log li.current')]"
            ".map((n) => [n.getBoundingClientRect().top, n.getBoundingClientRect().bottom])"
        )
        assert area[0] <= line[0] and line[1] <= area[1] + 1, (area, line)
        assert page.locator("#scrub").is_visible()  # its length is told once it is over
        assert "heuristic" in (page.text_content("#bottom-player") or "")
        assert "search" in (page.text_content("#top-player") or "")
        assert "player_" not in (page.text_content("#board") or "")  # names, not programmer labels
        page.screenshot(path=str(tmp_path / "watched-1280.png"), full_page=True)
        watched = _download_record(page, "#watch-download", tmp_path / "watched.jsonl")
        assert watched.players == ("heuristic", "search")

        # a file of many games: pick one, step through it with the keys (one step a key)
        page.set_input_files("#upload", str(path))
        page.wait_for_selector("#pick-game:not([hidden])")
        assert page.locator("#pick option").count() == 3
        page.select_option("#pick", "1")
        page.click("#pick-open")
        page.wait_for_function(
            f"document.getElementById('scrub').max === '{len(replay_frames_of(games[1])) - 1}'"
        )
        page.focus("#scrub")
        page.keyboard.press("ArrowRight")
        assert page.locator("#scrub").input_value() == "1"
        page.locator("body").click(position={"x": 5, "y": 400})
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert page.locator("#scrub").input_value() == "3"
        page.keyboard.press("ArrowLeft")
        assert page.locator("#scrub").input_value() == "2"
        scored = next(i for i, f in enumerate(replay_frames_of(games[1])) if f["scoring"] is not None)
        page.locator("#scrub").fill(str(scored))
        assert "Round 1 scored" in (page.text_content("#replay-extra") or "")
        line = page.locator("#log li").nth(4)  # a line of the log takes the board to its position
        line.click()
        assert page.locator("#scrub").input_value() == line.get_attribute("data-frame")
        assert "current" in (line.get_attribute("class") or "")
        assert "won" in (page.text_content("#pick option >> nth=0") or "") or "draw" in (
            page.text_content("#pick option >> nth=0") or ""
        )
        page.click("#close-replay")
        assert page.locator("#welcome").is_visible()  # no game in progress: the start page, not a blank one
        assert not errors, errors
        browser.close()


def replay_frames_of(record: records.GameRecord) -> list[dict]:
    from hanamikoji_env.play.replays import replay_frames

    return replay_frames(record)


@pytest.mark.slow
def test_the_board_fits_a_phone_and_keys_play_it(server: str, tmp_path: Path) -> None:
    from hanamikoji_env.play.replays import bot_game

    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(
            viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, **HARNESS
        )
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.emulate_media(color_scheme="dark")  # the phone plays in the dark scheme
        page.goto(server)
        page.wait_for_selector("#opponent option[value=heuristic]", state="attached")
        _no_horizontal_overflow(page, 390)
        assert not _small_controls(page), _small_controls(page)  # every control a finger's size
        views = Views(page)
        page.fill("#seed", "11")
        page.click("#start")
        page.wait_for_selector("#geishas .geisha")
        _no_horizontal_overflow(page, 390)
        page.screenshot(path=str(tmp_path / "board-390.png"), full_page=True)
        # the number keys: a token, then cards, Enter confirms
        page.keyboard.press("4")  # the fourth token left: Competition
        assert "Competition" in (page.text_content("#prompt") or "")
        for key in "7531":
            page.keyboard.press(key)
        assert page.locator("#hand .card.selected").count() == 4
        page.screenshot(path=str(tmp_path / "selection-390.png"), full_page=True)
        _no_horizontal_overflow(page, 390)
        assert not _small_controls(page), _small_controls(page)
        page.keyboard.press("Enter")
        _wait_render(page)
        # keys 7 5 3 1 chose the 7th, 5th, 3rd and 1st cards of the hand Iris Willow Willow Maple
        # Orchid Orchid Sakura; the board sent them ascending
        assert "You play Competition with Iris 2, Willow 2, Orchid 4, Sakura 5." in (
            page.text_content("#log") or ""
        )
        assert "pair A" in (page.text_content("#prompt") or "")
        # the split by keys: the 1st and 4th cards of the offer make pair A
        page.keyboard.press("1")
        page.keyboard.press("4")
        assert page.text_content("#selected") == "Pair A: Iris 2, Sakura 5"
        assert not _actionable_out_of_view(page)
        # while the split is on its way, the pairs stay as built, named as the person's
        page.evaluate(
            """() => { const send = window.fetch; let release; const held = new Promise((r) => { release = r; });
                       window.releaseTurn = () => { window.fetch = send; release(); };
                       window.fetch = async (url, options) => { if (String(url).endsWith('/actions')) await held;
                                                                 return send(url, options); }; }"""
        )
        page.keyboard.press("Enter")
        page.wait_for_function("document.getElementById('board').getAttribute('aria-busy') === 'true'")
        assert page.text_content("#offer-title") == "Your Competition, being split into pairs"
        groups = [page.locator(f".group-{g} .card").all_text_contents() for g in "AB"]
        assert groups == [["2Iris", "5Sakura"], ["2Willow", "4Orchid"]], groups
        page.evaluate("window.releaseTurn()")
        _wait_render(page)
        assert "pair A Iris 2, Sakura 5 | pair B Willow 2, Orchid 4" in (page.text_content("#log") or "")
        # and the rest of the game by touch, everything to act on in the window at every decision
        page.select_option("#pace", "-1")
        seen = _play_whole_game(page, views, tmp_path, "390")
        assert seen["marked"] >= 3 and page.text_content("#headline") in ("You won", "You lost", "Draw")
        assert len(seen["next_move_at"]) == 1, seen["next_move_at"]  # nothing moved under the finger
        assert not _cut_words(page), _cut_words(page)  # the results' headers whole
        _no_horizontal_overflow(page, 390)
        assert not _overlaps(page)
        # the ending is read without scrolling: the headline and what next are in the window
        for part in ("#headline", "#play-again", "#download", "#replay-this"):
            box = page.locator(part).bounding_box()
            assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 844, (part, box)
        # the log is a drawer: closed, its moves take no room; a tap opens it
        assert page.locator("#log").is_hidden()
        page.click("#log-toggle")
        assert page.locator("#log").is_visible() and page.locator("#log li").count() > 10
        assert not _small_controls(page), _small_controls(page)
        page.screenshot(path=str(tmp_path / "finished-390.png"), full_page=True)
        # the replay of a finished game and the rules fit too
        record = bot_game(("pretrained", "search"), seed=5)  # the longest name a watch offers
        path = tmp_path / "one.jsonl"
        path.write_text(record.to_json() + "\n")
        page.set_input_files("#upload", str(path))
        page.wait_for_selector("#nav:not([hidden])")
        for _ in range(len(replay_frames_of(record)) - 1):  # every position: no card name or score cut
            page.click("#next")
            assert not _cut_words(page), (page.text_content("#replay-pos"), _cut_words(page))
        _no_horizontal_overflow(page, 390)
        assert not _small_controls(page), _small_controls(page)
        page.click("#show-rules")
        assert page.locator("#rules[open]").count() == 1
        _no_horizontal_overflow(page, 390)
        page.click("#close-rules")
        # the scheme follows the system's setting
        page.screenshot(path=str(tmp_path / "replay-390-dark.png"), full_page=True)
        dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
        page.emulate_media(color_scheme="light")
        light = page.evaluate("getComputedStyle(document.body).backgroundColor")
        rgb = [int(x) for x in dark[dark.index("(") + 1 : -1].split(",")[:3]]
        assert light != dark and max(rgb) < 60, (light, dark)
        page.screenshot(path=str(tmp_path / "replay-390.png"), full_page=True)
        print(f"screenshots: {tmp_path}")
        assert not errors, errors
        browser.close()


@pytest.mark.slow
def test_the_page_plays_under_its_own_content_security_policy(server: str) -> None:
    """No ``bypass_csp`` here, and no harness ``eval``: a game started and played a few moves by
    clicks only, with no policy violation (Chromium reports each as a console error)."""
    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        reply = page.goto(server)
        assert reply is not None and "frame-ancestors 'none'" in reply.headers["content-security-policy"]
        page.wait_for_selector("#opponent option[value=heuristic]", state="attached")
        page.click("#start")
        page.wait_for_selector("#geishas .geisha")
        for _ in range(3):  # a token and its cards, clicked
            page.wait_for_selector("#tokens button, #hand button.card")
            buttons = page.locator("#tokens button")
            (buttons if buttons.count() else page.locator("#hand button.card")).first.click()
        assert page.locator("#geishas .geisha").count() == 7
        assert not errors, errors
        browser.close()


def in_page(server: str, script: str, arg: Any) -> Any:
    """``script`` (a JavaScript function of ``arg``) evaluated in the board's page: for its
    modules alone, imported there."""
    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(**HARNESS)
        page.goto(server)
        page.wait_for_selector("#opponent option[value=heuristic]", state="attached")
        try:
            return page.evaluate(script, arg)
        finally:
            browser.close()


@pytest.mark.slow
def test_the_pages_pure_helpers(server: str) -> None:
    """``words.js`` alone, imported in the page: choices found by what the person built (never an
    id computed), the marks of a move (a new deal's first move included), the card just drawn,
    and the tables drawn from a server view or a replay frame."""
    from hanamikoji_env.play.session import GameSession

    session = GameSession("heuristic", seat=1, seed=5)
    view = session.view()
    frames = replay_frames_of(bot_record())
    got = in_page(
        server,
        """async ([view, frames]) => {
              const w = await import('/static/words.js');
              const choices = [
                {action: 11, kind: 'split', cards: [], sets: [[0, 3], [5, 6]]},
                {action: 12, kind: 'split', cards: [], sets: [[0, 5], [3, 6]]},
                {action: 14, kind: 'gift-take', cards: [0]}, {action: 19, kind: 'gift-take', cards: [5]},
                {action: 21, kind: 'comp-take', cards: [0, 3], pair: 0}, {action: 22, kind: 'comp-take', cards: [5, 6], pair: 1},
              ];
              const offer = [0, 3, 5, 6];
              const table = w.playTable(view, view, 'your move');
              const moved = structuredClone(table);
              moved.sides.top[2] += 1;
              moved.top.tokens[2] = false;
              moved.sides.top[2] += 1;  // two cards of geisha 2 placed at once
              const offered = structuredClone(table);
              offered.offer = { kind: 'gift', side: 'top', cards: [1, 1, 4], pairs: null };
              const taken = structuredClone(table);
              taken.sides.bottom[1] += 1;
              taken.sides.top[1] += 1;
              taken.sides.top[4] += 1;
              const nextRound = structuredClone(table);
              nextRound.round += 1;
              nextRound.sides.top[4] = 1;
              const scored = frames.find((f) => f.scoring);
              return {
                splitBA: w.splitChoice(choices, offer, [2, 3]).action,
                splitAB: w.splitChoice(choices, offer, [1, 0]).action,
                splitHalf: w.splitChoice(choices, offer, [0]),
                splitNone: w.splitChoice(choices, offer, [1, 2]),
                pairSize: w.pairSize(choices), noPairs: w.pairSize(choices.slice(2)),
                gift: w.giftChoice(choices, 5).action, giftNone: w.giftChoice(choices, 4),
                pair: w.pairChoice(choices, 1).action,
                drawn: w.drawnAt([0, 1, 3, 3, 6], [1]), drawnTwin: w.drawnAt([3, 3], [3]), drawnTwo: w.drawnAt([3, 3, 5], [3, 3]),
                drawnNone: w.drawnAt([0], []),
                same: w.changes(table, structuredClone(table)).any,
                moved: w.changes(table, moved),
                deal: w.changes(table, nextRound),
                offered: w.changes(table, offered), taken: w.changes(offered, taken),
                table,
                frame: w.frameTable(frames[1], ['a', 'b']),
                scored: w.frameTable(scored, ['a', 'b']).status,
              };
            }""",
        [view, frames],
    )
    assert got["splitBA"] == 11 and got["splitAB"] == 11  # pair A may be either of the server's pairs
    assert got["splitHalf"] is None and got["splitNone"] is None
    assert got["pairSize"] == 2 and got["noPairs"] == 0
    assert got["gift"] == 19 and got["giftNone"] is None and got["pair"] == 22
    assert (
        got["drawn"] == [1]
        and got["drawnTwin"] == [1]
        and got["drawnTwo"] == [0, 1]
        and got["drawnNone"] == []
    )
    assert got["same"] is False
    moved = got["moved"]
    assert moved["top"] == [2] and moved["tokens"]["top"] == [2] and moved["any"]
    assert (
        moved["added"]["top"][2] == 2
        and sum(moved["added"]["top"]) == 2
        and not any(moved["added"]["bottom"])
    )
    assert not moved["fromOffer"] and not got["offered"]["fromOffer"] and got["offered"]["offer"]
    taken = got["taken"]  # a Gift taken: its cards land on both sides, from the offer
    assert taken["fromOffer"] and taken["added"]["top"][1] == 1 and taken["added"]["top"][4] == 1
    assert taken["added"]["bottom"][1] == 1 and sum(taken["added"]["bottom"]) == 1
    assert got["deal"]["top"] == [4] and got["deal"]["any"]  # a new deal's first move is marked
    t = got["table"]
    b = view["board"]
    assert t["bottom"]["hand"] == b["hand"] and t["top"]["hand"] == b["their_hand_size"]
    assert t["toMove"] == "bottom" and t["sides"] == {"top": b["their_side"], "bottom": b["your_side"]}
    assert got["frame"]["bottom"]["name"] == "a" and got["frame"]["top"]["name"] == "b"
    assert got["scored"] in ("round scored", "game over")


def live_positions(seat: int, seed: int) -> tuple[records.GameRecord, list[tuple[int, dict]]]:
    """A person's game against random from ``seat``, moves drawn at random: its record, and at
    each of the person's decisions the view and how many actions led there."""
    import numpy as np

    from hanamikoji_env.play.session import GameSession

    session = GameSession("random", seat=seat, seed=seed)
    rng = np.random.default_rng(seed)
    positions = []
    while not session.over:
        positions.append((len(session.env.history().actions), session.view()))
        session.play(int(rng.choice(session.legal_actions())))
    return session.record(), positions


def live_and_recorded(server: str, games: list[list]) -> list[list[dict]]:
    """For each game ``[frames, names, positions]`` (a replay's or watch's frames and seat names,
    and live play's views at positions ``at``): at each position, the table live play draws
    from the view and the one the replay draws from the frame there (None mid-selection, where
    no frame is), in the parts a person compares, and the name at the bottom of the replay."""
    return in_page(
        server,
        """async (games) => {
              const w = await import('/static/words.js');
              const sorted = (cards) => [...cards].sort((a, b) => a - b);
              const drawn = (t) => t && {
                sides: t.sides, markers: t.markers, toMove: t.toMove, score: t.score, pile: t.pile,
                tokens: [t.top.tokens, t.bottom.tokens], hand: t.bottom.hand,
                offer: t.offer && { kind: t.offer.kind, side: t.offer.side, cards: sorted(t.offer.cards),
                                    pairs: t.offer.pairs && t.offer.pairs.map(sorted) },
              };
              return games.map(([frames, names, positions]) => positions.map(([at, view]) => {
                const frame = frames.filter((f) => f.at === at).pop();
                const replayed = frame ? w.frameTable(frame, names) : null;
                return { at, phase: view.phase, live: drawn(w.playTable(view, view, '')),
                         replayed: drawn(replayed), bottom: replayed && replayed.bottom.name };
              }));
            }""",
        games,
    )


@pytest.mark.slow(10)
def test_a_replay_draws_every_position_as_live_play_drew_it(server: str) -> None:
    """A record of a game played from either seat, replayed: at every position where the person
    decided, the replay's table (drawn from the frame) has what live play's had (drawn from the
    view): the person at the bottom, the sides, markers, tokens, hands, score, whose move, and
    an open offer on the table with its side and cards.  Replays once put a person who played
    second at the top and left every open offer off the table."""
    from hanamikoji_env.play.replays import seat_names

    games = []
    for seat in (0, 0, 1, 1):
        record, positions = live_positions(seat, seed=20 + len(games))
        games.append([replay_frames_of(record), list(seat_names(record.players)), positions])
    got = live_and_recorded(server, games)
    for seat in (0, 1):
        offers = 0
        compared = got[2 * seat] + got[2 * seat + 1]  # two games from each seat
        matched = [c for c in compared if c["replayed"] is not None]  # mid-selection: no frame
        assert len(matched) >= 20, (seat, len(matched))
        for c in matched:
            assert c["bottom"] == "you", (seat, c["at"])
            assert c["replayed"] == c["live"], (seat, c["at"], c["phase"], c["live"], c["replayed"])
            offers += c["live"]["offer"] is not None
        assert offers >= 2, (seat, offers)  # the person answered offers: each on the table in both


def seat_zero_positions(record: records.GameRecord) -> list[tuple[int, dict]]:
    """A bot game replayed as live play by a person in seat 0 on the same deals: at each of
    seat 0's decisions the person's view and how many actions led there."""
    from hanamikoji_env.play.session import GameSession

    session = GameSession("random", seat=0, decks=[list(d) for d in record.decks], bot_replies=False)
    positions = []
    for at, (seat, action) in enumerate(record.actions):
        if seat == 0:
            positions.append((at, session.view()))
            session.play(action)
        else:
            session.bot_play(action)
    assert session.over
    return positions


@pytest.mark.slow(5)
def test_a_watched_game_draws_every_position_as_live_play_would(server: str) -> None:
    """A bot game as the watch view shows it (the server's watch reply): at each of seat 0's
    decisions its table equals the one live play draws for a person in seat 0 on the same deals
    making the same moves (the sides, markers, tokens, hand, score, whose move and an open offer
    with its pairs), seat 0 at the bottom."""
    import json

    from hanamikoji_env.play.workers import watched

    matched, offers = 0, 0
    for seed in (7, 8, 9):
        reply = json.loads(watched(("heuristic", "search"), seed=seed, round_limit=None))
        positions = seat_zero_positions(records.parse_line(reply["record"]))
        [got] = live_and_recorded(server, [[reply["frames"], reply["names"], positions]])
        for c in got:
            if c["replayed"] is None:  # mid-selection: no frame
                continue
            assert c["bottom"] == reply["names"][0], (seed, c["at"])
            assert c["replayed"] == c["live"], (seed, c["at"], c["phase"], c["live"], c["replayed"])
            matched += 1
            offers += c["live"]["offer"] is not None
    assert matched >= 25 and offers >= 3, (matched, offers)


@pytest.mark.slow(5)
def test_moves_are_seen_happening_except_at_once_or_under_reduced_motion(server: str, tmp_path: Path) -> None:
    """Stepping through a replay: the cards each move placed, and only those, slide in (from
    below on the bottom side, from above on the top; from the middle when an offer is taken);
    nothing moves at the "at once" pace or when the system asks for reduced motion."""
    record = bot_record()
    frames = replay_frames_of(record)
    path = tmp_path / "one.jsonl"
    path.write_text(record.to_json() + "\n")
    arrivals = """() => [...document.querySelectorAll('.stack .mini.arrived')].map((n) =>
        [n.closest('.stack').classList.contains('top') ? 'top' : 'bottom', getComputedStyle(n).animationName])"""
    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900}, **HARNESS)
        page.goto(server)
        page.wait_for_selector("#opponent option[value=heuristic]", state="attached")
        page.set_input_files("#upload", str(path))
        page.wait_for_selector("#nav:not([hidden])")
        page.select_option("#pace", "-1")  # by hand: one step a key
        page.locator("#scrub").fill("0")
        seen: dict[tuple[str, str], int] = {}
        for i in range(1, len(frames)):
            page.focus("#scrub")
            page.keyboard.press("ArrowRight")
            assert page.locator("#scrub").input_value() == str(i)
            got = page.evaluate(arrivals)
            before, after = frames[i - 1], frames[i]
            gained = {
                side: sum(max(0, a - b) for a, b in zip(after["placed"][s], before["placed"][s], strict=True))
                for side, s in (("bottom", 0), ("top", 1))
            }
            if after["round"] != before["round"]:
                continue  # a new deal: nothing placed yet
            for side in ("bottom", "top"):
                assert sum(1 for x in got if x[0] == side) == gained[side], (i, side, got, gained)
            for side, name in got:
                seen[(side, name)] = seen.get((side, name), 0) + 1
        assert {("bottom", "from-below"), ("top", "from-above")} <= set(seen), seen
        assert {("bottom", "from-above"), ("top", "from-below")} & set(seen), seen  # offers taken

        def animations() -> set[str]:
            """The arrivals' animations over the whole replay, stepped from its start."""
            page.locator("#scrub").fill("0")
            names = set()
            for _ in range(len(frames) - 1):
                page.focus("#scrub")
                page.keyboard.press("ArrowRight")
                names |= {name for _, name in page.evaluate(arrivals)}
            return names

        page.select_option("#pace", "0")  # at once: the same arrivals marked, nothing moving
        assert animations() == {"none"}
        page.select_option("#pace", "-1")
        page.emulate_media(reduced_motion="reduce")
        assert animations() == {"none"}
        browser.close()


def bot_record() -> records.GameRecord:
    from hanamikoji_env.play.replays import bot_game

    return bot_game(("heuristic", "search"), seed=5)


@pytest.mark.slow
def test_a_failed_move_leaves_the_board_playable_and_a_replay_keeps_the_game(
    server: str, tmp_path: Path
) -> None:
    """A move the server refuses (here a 503) is said in one line and the controls come back, so
    the person can send it again; opening a replay during a game does not abandon it unasked."""
    path = tmp_path / "one.jsonl"
    path.write_text(bot_record().to_json() + "\n")
    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 800}, **HARNESS)
        page.goto(server)
        page.wait_for_selector("#opponent option[value=heuristic]", state="attached")
        page.fill("#seed", "3")
        page.click("#start")
        page.wait_for_selector("#tokens button")
        page.locator("#tokens button").first.click()  # Secret: one card
        page.locator("#hand button.card").first.click()
        page.route(
            "**/turn",
            lambda route: route.fulfill(
                status=503, content_type="application/json", body='{"detail": "busy"}'
            ),
        )
        page.click("#confirm")
        page.wait_for_selector("#error:not([hidden])")
        assert page.text_content("#error") == "busy"
        _wait_render(page)
        assert page.get_attribute("#board", "aria-busy") == "false" and page.locator("#confirm").is_enabled()
        page.unroute("**/turn")
        page.click("#confirm")  # the same selection, sent again
        page.wait_for_function("document.getElementById('error').hidden")
        _wait_render(page)
        assert "You play Secret" in (page.text_content("#log") or "")
        # a replay opened mid-game, then New game: the game in progress is not dropped unasked
        page.set_input_files("#upload", str(path))
        page.wait_for_selector("#nav:not([hidden])")
        page.click("#show-new")
        page.click("#start")
        assert page.locator("#abandon[open]").count() == 1
        page.click("#abandon-no")
        browser.close()
