"""Round-robin evaluation of bots and checkpoints: mirrored deals, Wilson intervals, Elo.

Every pair of players plays the same deals twice, seats swapped, so the luck
of the cards cancels.  Games run in parallel over the machine's cores.
Results: a table on the terminal, ``results.json`` and ``pairs.csv`` and a
win-rate heatmap ``heatmap.png`` in ``--out``.

Players are named by the player specs of :mod:`hanamikoji_env.bots.spec`, every
bot there with its options as ``name:key=value,key=value`` (e.g.
``search:samples=800``), a checkpoint as ``ckpt:PATH`` or ``pretrained``;
``hanamikoji-eval --help`` lists them all, from the same registry.  Specs are
checked before any game starts.

One job a module: ``schedule.py`` (the pairs' deals as tasks for worker
processes or Ray, each game a :class:`GameResult`; :func:`run_tournament`),
``summary.py`` (the statistics and the ``results.json`` schema), ``outputs.py``
(table, files, heatmap) and ``cli.py`` (``hanamikoji-eval``, or ``python -m
hanamikoji_env.tournament``, same arguments).  A single game between two bots
is :func:`hanamikoji_env.games.play_game`.
"""

from hanamikoji_env.games import play_env, play_game
from hanamikoji_env.tournament.cli import build_parser, main
from hanamikoji_env.tournament.outputs import GAMES_FILE, check_writable, format_table, heatmap, write_outputs
from hanamikoji_env.tournament.schedule import MAX_GAMES, GameResult, Interrupted, Task, run_tournament
from hanamikoji_env.tournament.summary import SCHEMA, summarise

__all__ = [
    "GAMES_FILE",
    "MAX_GAMES",
    "SCHEMA",
    "GameResult",
    "Interrupted",
    "Task",
    "build_parser",
    "check_writable",
    "format_table",
    "heatmap",
    "main",
    "play_env",
    "play_game",
    "run_tournament",
    "summarise",
    "write_outputs",
]
