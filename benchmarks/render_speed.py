"""Milliseconds per ``render_mode="rgb_array"`` frame: ours against PettingZoo's connect_four_v3.

Both envs play random legal moves; every frame of a game is rendered and timed
(the render call only).  connect_four_v3 draws with pygame, the peer most
PettingZoo users know; ours draws with Pillow.  Target: under 20 ms a frame.

Usage: ``python benchmarks/render_speed.py [--frames 300]`` (``bench`` extra for the peer).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np


def ms_per_frame(make: Callable[[], object], frames: int, seed: int = 0) -> float:
    env = make()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    timed, total = 0, 0.0
    while timed < frames:
        for _agent in env.agent_iter():
            obs, _reward, term, trunc, _info = env.last()
            start = time.perf_counter()
            image = env.render()
            total += time.perf_counter() - start
            timed += 1
            assert isinstance(image, np.ndarray) and image.ndim == 3
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            if timed >= frames:
                break
        env.reset()
    return 1000 * total / timed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=300)
    args = p.parse_args()
    from hanamikoji_env import env

    ours = ms_per_frame(lambda: env(render_mode="rgb_array"), args.frames)
    print(f"hanamikoji_v0   rgb_array: {ours:6.2f} ms/frame  (target < 20)")
    try:
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        from pettingzoo.classic import connect_four_v3
    except ImportError as e:
        print(f"connect_four_v3 not measured ({e}); pip install -e '.[bench]'")
        return
    peer = ms_per_frame(lambda: connect_four_v3.env(render_mode="rgb_array"), args.frames)
    print(f"connect_four_v3 rgb_array: {peer:6.2f} ms/frame")
    print(f"ratio (connect_four time / ours): {peer / ours:.2f}x")


if __name__ == "__main__":
    main()
