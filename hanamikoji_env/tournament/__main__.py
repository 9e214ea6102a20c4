"""``python -m hanamikoji_env.tournament``: the same command as ``hanamikoji-eval``."""

from hanamikoji_env.tournament.cli import main

if __name__ == "__main__":  # a spawned worker imports this module as __mp_main__: no second run
    main()
