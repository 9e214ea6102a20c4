"""Round-robin evaluation of bots and checkpoints.

    python -m training.evaluate --players random heuristic search [ckpt:PATH ...] \\
        --games 1000 --seed 0 --out runs/eval

The tournament itself lives in :mod:`hanamikoji_env.tournament` (also installed
as the ``hanamikoji-eval`` command).
"""

from hanamikoji_env.tournament import main

if __name__ == "__main__":
    main()
