"""Training and evaluation: ``hanamikoji_env.training`` once installed (this folder, mapped in by
pyproject.toml). Installed: ``hanamikoji-train``, ``hanamikoji-exploit`` or
``python -m hanamikoji_env.training.NAME``; from a clone, ``python -m training.NAME`` works too."""

from hanamikoji_env.entry import run_as_main

run_as_main(__name__)  # python -m of a module here: a missing extra in one line
