"""rgb_array rendering: PettingZoo's render_test, and images that show only what they may."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import render_test

from hanamikoji_env import env, raw_env
from hanamikoji_env.image import HEIGHT, WIDTH, draw_table
from hanamikoji_env.rules import EMPTY, Phase


def test_pettingzoo_render_test_passes_for_every_render_mode(capsys) -> None:
    render_test(env)
    capsys.readouterr()  # the human mode prints every frame


def played(seed: int, steps: int, render_mode: str = "rgb_array") -> raw_env:
    e = env(render_mode=render_mode)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    return e


def test_rgb_array_is_an_image_of_the_table_that_changes_with_the_game() -> None:
    e = played(1, 0)
    first = e.render()
    assert isinstance(first, np.ndarray) and first.shape == (HEIGHT, WIDTH, 3) and first.dtype == np.uint8
    for _ in range(12):
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    assert not np.array_equal(e.render(), first)
    mine = e.render_for("player_0", "rgb_array")
    assert mine.shape == first.shape and not np.array_equal(mine, e.render())
    with pytest.raises(ValueError, match="mode must be"):
        e.render_for("player_0", "human")  # type: ignore[arg-type]


def hide_swapped(state, seat: int):
    """The same position with everything ``seat`` cannot see changed: the other hand (same
    size), the other Secret and Trade-off, the removed card and the draw pile order."""
    other = 1 - seat
    size = sum(state.hands[other])
    hand = list(EMPTY)
    hand[6 if state.hands[other][6] == 0 else 0] = size
    hands = list(state.hands)
    hands[other] = tuple(hand)
    secrets, tradeoffs = list(state.secrets), list(state.tradeoffs)
    if secrets[other] >= 0:
        secrets[other] = (secrets[other] + 1) % 7
    if sum(tradeoffs[other]):
        tradeoffs[other] = (0, 0, 0, 0, 0, 0, 2)
    return state._replace(
        hands=tuple(hands),
        secrets=tuple(secrets),
        tradeoffs=tuple(tradeoffs),
        removed=(state.removed + 3) % 7,
        draw_pile=state.draw_pile[::-1],
    )


def test_images_do_not_show_hidden_cards() -> None:
    checked = 0
    for seed in (0, 1):
        e = played(seed, 0)
        for _ in range(15):
            state = e.game
            if state.phase == Phase.GAME_OVER:
                break
            seat = state.to_move
            # the player's own view does not change with what they cannot see ...
            assert np.array_equal(draw_table(state, seat), draw_table(hide_swapped(state, seat), seat))
            # ... nor does the public view with either player's hidden cards
            both = hide_swapped(hide_swapped(state, 0), 1)
            assert np.array_equal(draw_table(state), draw_table(both))
            # while the player's own hand does show
            if sum(state.hands[seat]):
                assert not np.array_equal(
                    draw_table(state, seat), draw_table(hide_swapped(state, 1 - seat), seat)
                )
            checked += 1
            e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[-1]))
    assert checked >= 25


def test_the_header_tells_the_score_as_the_markers_stand() -> None:
    """The last frame of a recorded game shows its final score: the header's right half changes
    with the charm points and geishas the markers give, and only there when nothing else does."""
    e = played(3, 0)
    state = e.unwrapped.game
    even = draw_table(state._replace(markers=(-1,) * 7))
    ahead = draw_table(state._replace(markers=(0, 0, 0, 1, -1, -1, 1)))
    changed = np.argwhere((even != ahead).any(axis=2))
    header = changed[changed[:, 0] < 32]
    assert len(header) and header[:, 1].min() > WIDTH // 2  # the tally, right of the status
