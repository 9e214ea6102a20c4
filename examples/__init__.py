"""Runnable recipes for the RL libraries users train with, shipped as ``hanamikoji_env.examples``
(the repository's ``examples/``, mapped in by pyproject.toml); the tests run every one.

    python -m hanamikoji_env.examples.tianshou_dqn      # Tianshou 2.x: masked DQN, one per seat
    python -m hanamikoji_env.examples.tianshou_ppo      # Tianshou 2.x: masked PPO in self-play
    python -m hanamikoji_env.examples.torchrl_rollout   # TorchRL's PettingZooWrapper, masked
    python -m hanamikoji_env.examples.sb3_tutorial      # PettingZoo's SB3 tutorial wrapper

Each plays ``raw_env``, which raises on an illegal move, so a run that finishes made none; each
``main()`` takes its size as arguments and returns what it measured.  Install the library first
(``pip install "hanamikoji-env[tianshou]"``, ``[torchrl]`` or ``[sb3]``).  RLlib's recipe is a
trainer of its own: ``python -m hanamikoji_env.training.train_rllib``.
"""

from hanamikoji_env.entry import run_as_main

run_as_main(__name__)  # python -m of a module here: a missing extra in one line
