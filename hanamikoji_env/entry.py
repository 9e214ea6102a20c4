"""The console commands, each a thin door to its module: a module that needs an extra the
install lacks ends the command in one line naming that extra, not in a traceback.

Every ``[project.scripts]`` entry of pyproject.toml points here; this module imports nothing
optional, and each command's own module is imported only when the command runs."""

from __future__ import annotations

import contextlib
import importlib
import runpy
import sys
from collections.abc import Callable, Iterator

EXTRA_OF = {
    "torch": ("train", "torch"),
    "yaml": ("train", "PyYAML"),
    "tensorboard": ("train", "tensorboard"),
    "matplotlib": ("eval", "matplotlib"),
    "stable_baselines3": ("sb3", "stable-baselines3"),
    "sb3_contrib": ("sb3", "sb3-contrib"),
    "pyspiel": ("openspiel", "open_spiel"),
    "open_spiel": ("openspiel", "open_spiel"),
    "tree": ("openspiel", "dm-tree"),
    "textual": ("play", "textual"),
    "fastapi": ("play", "fastapi"),
    "uvicorn": ("play", "uvicorn"),
    "ray": ("ray", "ray"),
    "tianshou": ("tianshou", "tianshou"),
    "torchrl": ("torchrl", "torchrl"),
}
"""The top-level module of each optional dependency -> (the extra that brings it, its package)."""


def missing_extra(error: ModuleNotFoundError) -> str | None:
    """One line for a module an extra would bring (None for any other missing module: a bug)."""
    top = (error.name or "").split(".")[0]
    if top not in EXTRA_OF:
        return None
    extra, package = EXTRA_OF[top]
    return (
        f"{package} is not installed; it comes with the {extra} extra: pip install 'hanamikoji-env[{extra}]'"
    )


@contextlib.contextmanager
def extras_said(prog: str) -> Iterator[None]:
    """A library an extra brings, missing inside: one line on stderr naming the extra, and exit
    status 2 (any other missing module is a bug, raised as it is).  A Ctrl-C that no command
    handled (one while its modules load, say): one line too, and exit status 130."""
    try:
        yield
    except ModuleNotFoundError as e:
        line = missing_extra(e)
        if line is None:
            raise
        print(f"{prog}: error: {line}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted", file=sys.stderr)
        raise SystemExit(130) from None


def run(module: str, prog: str, argv: list[str] | None = None) -> int | None:
    """Import ``module`` and run its ``main(argv)`` (its exit status, if it returns one); a missing
    extra is one line on stderr and exit status 2."""
    with extras_said(prog):
        main: Callable[[list[str] | None], int | None] = importlib.import_module(module).main
        return main(argv)


def main_module(package: str) -> str | None:
    """The module of ``package`` this process runs as ``python -m PACKAGE.NAME``, or None."""
    args = iter(getattr(sys, "orig_argv", [])[1:])
    for arg in args:
        if arg == "-m":
            target = next(args, "")
            return target if target.startswith(f"{package}.") else None
        if arg in ("-W", "-X", "--check-hash-based-pycs"):  # an interpreter option and its value
            next(args, None)
        elif arg in ("-c", "-") or not arg.startswith("-"):  # a command or a script: not -m
            return None
    return None


def run_as_main(package: str) -> None:
    """Called at the end of a package's ``__init__``: where this process runs one of its modules
    with ``python -m``, it runs that module here, as ``python -m`` would, so that a library an
    extra brings, missing (imported at the top or when the work starts), ends the run in one line
    naming the extra (exit status 2), as the console commands do; the process ends with it."""
    target = main_module(package)
    if target is None:
        return
    with extras_said(f"python -m {target}"):
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    raise SystemExit(0)


def _command(module: str, prog: str) -> Callable[[list[str] | None], int | None]:
    """The console entry point of ``prog``: :func:`run` of ``module``."""

    def command(argv: list[str] | None = None) -> int | None:
        return run(module, prog, argv)

    command.__doc__ = f"``{prog}``: ``{module}.main``, a missing extra in one line."
    return command


COMMANDS: dict[str, Callable[[list[str] | None], int | None]] = {
    prog: _command(module, prog)
    for prog, module in (
        ("hanamikoji-eval", "hanamikoji_env.tournament"),
        ("hanamikoji-play", "hanamikoji_env.play.tui"),
        ("hanamikoji-serve", "hanamikoji_env.play.server"),
        ("hanamikoji-train", "hanamikoji_env.training.train"),
        ("hanamikoji-exploit", "hanamikoji_env.training.exploit"),
        ("hanamikoji-docs", "hanamikoji_env.manual"),
        ("hanamikoji-plot", "hanamikoji_env.training.plot"),
    )
}
"""Every console command (pyproject.toml's ``[project.scripts]``, checked by a test)."""

evaluate, play, serve, train, exploit, docs, plot = COMMANDS.values()
