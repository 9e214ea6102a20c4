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

from hanamikoji_env import records

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    if os.environ.get("CI"):
        pytest.fail("CI needs Debian's chromium for the browser test (apt-get install chromium)")
    pytest.skip("the browser test needs Chromium: apt-get install chromium", allow_module_level=True)

uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

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


@pytest.mark.slow
def test_a_person_plays_a_whole_game_by_clicking_downloads_and_replays_it(
    server: str, tmp_path: Path
) -> None:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900}, accept_downloads=True)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server)
        page.wait_for_selector("#opponent option[value=heuristic]", state="attached")
        page.fill("#seed", "7")
        page.click("#start")
        page.wait_for_selector("#geishas .geisha")
        assert page.locator("#geishas .geisha").count() == 7
        clicks = 0
        while page.locator("#finished").is_hidden():
            # play through the board itself where it offers the move: a hand card, a Gift card or a set
            cards = page.locator("#hand button.card:enabled, #offer button.card:enabled, #offer button.set")
            target = cards.first if cards.count() else page.locator("button.choice").first
            renders = page.evaluate("document.body.dataset.renders")
            if clicks == 10:  # mid-game: a hand, cards on both sides
                page.screenshot(path=str(tmp_path / "board-midgame.png"), full_page=True)
            target.click()
            # the next view is on the page (the board re-renders once per answer of the server)
            page.wait_for_function(f"document.body.dataset.renders !== '{renders}'")
            clicks += 1
            assert clicks < 400, "the game did not end"
        assert not errors, errors
        result = page.text_content("#result")
        assert result is not None and "Game over" in result
        shot = tmp_path / "board.png"
        page.screenshot(path=str(shot), full_page=True)
        print(f"screenshot of the finished board: {shot}")
        assert shot.stat().st_size > 10_000

        with page.expect_download() as download:
            page.click("#download")
        saved = tmp_path / "game.jsonl"
        download.value.save_as(saved)
        (record,) = list(records.read_records(saved))
        records.verify(record)
        assert record.players[0] == "human" and record.players[1] == "heuristic"
        assert record.meta["seed"] == 7 and record.meta["source"] == "hanamikoji-serve"
        assert len(record.actions) >= clicks

        # the replay view steps through the same game, forward and back
        page.click("#replay-this")
        page.wait_for_selector("#replay:not([hidden])")
        assert page.text_content("#replay-move") == "The first deal"
        page.click("#next")
        first_move = page.text_content("#replay-move")
        assert first_move is not None and first_move.startswith("Move: human (player_0)")
        page.click("#last")
        assert "wins" in (page.text_content("#replay-board") or "") or "draw" in (
            page.text_content("#replay-board") or ""
        )
        page.click("#prev")
        page.click("#first")
        assert page.text_content("#replay-move") == "The first deal"

        # a record file uploaded from disk opens in the same view
        page.click("#back-to-play")
        page.set_input_files("#upload", str(saved))
        page.wait_for_selector("#replay:not([hidden])")
        assert page.locator("#scrub").get_attribute("max") == str(len(record.actions))
        assert not errors, errors
        browser.close()
