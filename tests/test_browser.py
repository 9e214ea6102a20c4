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


def _launch(p: object) -> object:
    return p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)  # type: ignore[attr-defined]


HARNESS = {"bypass_csp": True}
"""For the pages these tests drive with ``wait_for_function`` and ``evaluate``, which Playwright runs
through ``eval``: the page's own policy forbids that.  The page itself is checked under its policy
in :func:`test_the_page_plays_under_its_own_content_security_policy`."""


def _no_horizontal_overflow(page: object, width: int) -> None:
    """Nothing on the page is wider than the viewport (a phone shows no sideways scrolling)."""
    wide = page.evaluate(  # type: ignore[attr-defined]
        """(width) => [...document.querySelectorAll('body *')]
            .filter((n) => n.getClientRects().length && n.getBoundingClientRect().right > width + 1)
            .map((n) => n.tagName + '#' + n.id + '.' + n.className)""",
        width,
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= width, wide  # type: ignore[attr-defined]
    assert not wide, wide


def _download_record(page: object, button: str, path: Path) -> records.GameRecord:
    """Click ``button``, save the record it downloads to ``path``; it must hold one verified game."""
    with page.expect_download() as download:  # type: ignore[attr-defined]
        page.click(button)  # type: ignore[attr-defined]
    download.value.save_as(path)
    (record,) = list(records.read_records(path))
    records.verify(record)
    return record


def _wait_render(page: object, before: str) -> None:
    page.wait_for_function(f"document.body.dataset.renders !== '{before}'")  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_person_plays_a_whole_game_choosing_cards_in_any_order_and_replays_it(
    server: str, tmp_path: Path
) -> None:
    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(viewport={"width": 1280, "height": 900}, accept_downloads=True, **HARNESS)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(server)
        page.wait_for_selector("#opponent option[value=heuristic]", state="attached")
        page.fill("#seed", "8")  # three rounds with this test's moves
        page.click("#start")
        page.wait_for_selector("#geishas .geisha")
        assert page.locator("#geishas .geisha").count() == 7
        assert "Round 1" in page.text_content("#scoreboard")
        # while a token is chosen the hand is plain cards, readable, not disabled buttons
        assert page.locator("#hand .card").count() == 7 and page.locator("#hand button").count() == 0
        cancelled = descending = scorings = steps = 0
        while page.locator("#finished").is_hidden() or page.locator("#round-end[open]").count():
            steps += 1
            assert steps < 400, "the game did not end"
            if page.locator("#round-end[open]").count():
                body = page.text_content("#round-end-body") or ""
                assert "Secrets revealed" in body and "Totals" in body and "G6 (5)" in body
                if "game is over" in (page.text_content("#round-end-title") or ""):
                    final = page.text_content("#round-end-body") or ""
                    assert "Game over" in final and "charm points" in final, final
                    page.screenshot(path=str(tmp_path / "game-end-1280.png"))
                elif scorings == 0:
                    page.screenshot(path=str(tmp_path / "round-end-1280.png"))
                scorings += 1
                page.click("#continue")
                continue
            renders = page.evaluate("document.body.dataset.renders")
            tokens = page.locator("#tokens button")
            if tokens.count():
                tokens.last.click()  # the largest token left: more cards to choose
                need = {"Secret": 1, "Trade-off": 2, "Gift": 3, "Competition": 4}
                label = page.text_content("#prompt") or ""
                n = next(v for k, v in need.items() if f"{k}:" in label)
                hand = page.locator("#hand button.card")
                if not cancelled and n >= 2:  # one cancel: a card chosen, then the whole selection dropped
                    hand.nth(0).click()
                    assert page.locator("#hand .card.selected").count() == 1
                    page.click("#cancel")
                    assert (
                        page.locator("#hand button").count() == 0 and page.locator("#tokens button").count()
                    )
                    cancelled += 1
                    continue
                count = hand.count()
                order = list(range(count - 1, count - 1 - n, -1))  # from the right: descending geishas
                for i in order:
                    hand.nth(i).click()
                # a selected card can be put back, then chosen again
                hand.nth(order[0]).click()
                assert page.locator("#hand .card.selected").count() == n - 1
                assert page.locator("#confirm").is_disabled()
                hand.nth(order[0]).click()
                assert page.locator("#hand .card.selected").count() == n
                shown = page.text_content("#selected") or ""
                geishas = [int(x) for x in shown.split(":")[1].replace("G", " ").split()]
                descending += geishas != sorted(geishas)
                if descending == 1 and n >= 3:
                    page.screenshot(path=str(tmp_path / "selection-1280.png"))
                page.click("#confirm")
            else:
                target = page.locator("#offer button.card, #offer button.set, #choices button").first
                target.click()
            _wait_render(page, renders)
        assert not errors, errors
        assert cancelled == 1 and descending >= 1
        assert scorings == 3 and page.locator("#round-end[open]").count() == 0
        result = page.text_content("#result") or ""
        assert "Game over" in result and "charm points" in result and "geishas" in result, result
        page.screenshot(path=str(tmp_path / "finished-1280.png"), full_page=True)

        record = _download_record(page, "#download", tmp_path / "game.jsonl")
        assert record.players == ("human", "heuristic") and record.meta["seed"] == 8

        # the replay is the board itself, with the round ends as positions of their own
        page.click("#replay-this")
        page.wait_for_selector("#nav:not([hidden])")
        assert page.text_content("#replay-move") == "The first deal."
        page.click("#next")
        assert (page.text_content("#replay-move") or "").startswith("human (player_0) plays ")
        page.click("#last")
        extra = page.text_content("#replay-extra") or ""
        assert "Game over" in extra and "scored" in extra and "Secrets revealed" in extra
        frames = int(page.locator("#scrub").get_attribute("max") or 0)
        assert (
            frames == len(record.actions) + record.rounds - 1
        )  # each round end: the scored table, then the deal
        page.click("#close-replay")
        assert page.locator("#finished").is_visible()
        assert not errors, errors
        browser.close()


@pytest.mark.slow
def test_watching_two_bots_and_stepping_through_a_record_file_of_many_games(
    server: str, tmp_path: Path
) -> None:
    from hanamikoji_env.play.session import bot_game

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
        page.click("#watch-start")
        page.wait_for_selector("#nav:not([hidden])")
        page.select_option("#speed", "250")
        page.wait_for_function("document.getElementById('replay-pos').textContent.startsWith('decision 2 ')")
        page.wait_for_function(
            "document.getElementById('replay-extra').textContent.includes('Game over')", timeout=120_000
        )
        assert "heuristic (player_0)" in (page.text_content("#bottom-player") or "")
        assert "search (player_1)" in (page.text_content("#top-player") or "")
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
        scored = next(i for i, f in enumerate(replay_frames_of(games[1])) if f["phase"] == "ROUND_OVER")
        page.locator("#scrub").fill(str(scored))
        assert "Round 1 scored" in (page.text_content("#replay-extra") or "")
        page.click("#close-replay")
        assert page.locator("#welcome").is_visible()  # no game in progress: the start page, not a blank one
        assert not errors, errors
        browser.close()


def replay_frames_of(record: records.GameRecord) -> list[dict]:
    from hanamikoji_env.play.session import replay_frames

    return replay_frames(record)


@pytest.mark.slow
def test_the_board_fits_a_phone_and_keys_play_it(server: str, tmp_path: Path) -> None:
    from hanamikoji_env.play.session import bot_game

    with sync_api.sync_playwright() as p:
        browser = _launch(p)
        page = browser.new_page(
            viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, **HARNESS
        )
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server)
        page.wait_for_selector("#opponent option[value=heuristic]", state="attached")
        _no_horizontal_overflow(page, 390)
        page.fill("#seed", "11")
        page.click("#start")
        page.wait_for_selector("#geishas .geisha")
        _no_horizontal_overflow(page, 390)
        page.screenshot(path=str(tmp_path / "board-390.png"), full_page=True)
        # the number keys: a token, then cards, Enter confirms
        renders = page.evaluate("document.body.dataset.renders")
        page.keyboard.press("4")  # the fourth token left: Competition
        assert "Competition" in (page.text_content("#prompt") or "")
        for key in "7531":
            page.keyboard.press(key)
        assert page.locator("#hand .card.selected").count() == 4
        page.screenshot(path=str(tmp_path / "selection-390.png"), full_page=True)
        _no_horizontal_overflow(page, 390)
        page.keyboard.press("Enter")
        _wait_render(page, renders)
        # keys 7 5 3 1 chose G6 G5 G1 G0 of the hand G0 G1 G1 G3 G5 G5 G6; the board sent them ascending
        assert "You play Competition with G0 G1 G5 G6." in (page.text_content("#log") or "")
        assert "Split the Competition cards" in (page.text_content("#prompt") or "")
        # the replay of a finished game and the rules fit too
        record = bot_game(("heuristic", "search"), seed=5)
        path = tmp_path / "one.jsonl"
        path.write_text(record.to_json() + "\n")
        page.set_input_files("#upload", str(path))
        page.wait_for_selector("#nav:not([hidden])")
        page.click("#last")
        _no_horizontal_overflow(page, 390)
        page.screenshot(path=str(tmp_path / "replay-390.png"), full_page=True)
        page.click("#show-rules")
        assert page.locator("#rules[open]").count() == 1
        _no_horizontal_overflow(page, 390)
        page.click("#close-rules")
        # dark mode follows the system's setting
        light = page.evaluate("getComputedStyle(document.body).backgroundColor")
        page.emulate_media(color_scheme="dark")
        dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
        rgb = [int(x) for x in dark[dark.index("(") + 1 : -1].split(",")[:3]]
        assert light != dark and max(rgb) < 60, (light, dark)
        page.screenshot(path=str(tmp_path / "replay-390-dark.png"), full_page=True)
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
