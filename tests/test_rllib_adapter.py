"""The RLlib adapter: RLlib's observation keys, PettingZoo compliance, no Ray needed."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from pettingzoo.test import api_test

from hanamikoji_env import env
from hanamikoji_env.rllib import POLICY_ID, RLlibObservations, env_creator, rllib_aec_env, self_play_mapping


def test_observations_use_rllibs_keys() -> None:
    e = rllib_aec_env()
    ref = env()
    e.reset(seed=3)
    ref.reset(seed=3)
    rng = np.random.default_rng(0)
    for agent in e.agent_iter(200):
        obs, _, term, trunc, _ = e.last()
        assert set(obs) == {"observations", "action_mask"} and obs["action_mask"].dtype == np.int8
        assert e.observation_space(agent).contains(obs)
        plain = ref.observe(agent)
        assert np.array_equal(obs["observations"], plain["observation"])
        assert np.array_equal(obs["action_mask"], plain["action_mask"])
        action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        e.step(action)
        ref.step(action)


# api_test's notes on RLlib's format, which is the point of the adapter: a dict observation
# ("observations" + "action_mask") and an all-zero mask for the agent not on move
@pytest.mark.filterwarnings(
    "ignore:Observation is not a NumPy array", "ignore:Observation space for each agent"
)
@pytest.mark.filterwarnings("ignore:Action mask numpy array is all zeros")
def test_the_adapter_passes_pettingzoos_api_test() -> None:
    api_test(rllib_aec_env(), num_cycles=300)


def test_unmasked_actions_end_the_game_instead_of_raising() -> None:
    """RLlib's env pre-check samples actions without the mask: the adapter must not raise on them."""
    e = rllib_aec_env()
    e.reset(seed=0)
    with pytest.warns(UserWarning, match="illegal action"):
        e.step(22)  # a Competition answer at the first token decision
    assert all(e.terminations.values()) and e.rewards == {"player_0": -1, "player_1": 0}


def test_self_play_maps_both_seats_to_one_policy_and_ray_is_not_needed_to_import() -> None:
    assert self_play_mapping("player_0") == self_play_mapping("player_1", None) == POLICY_ID
    assert isinstance(rllib_aec_env(round_limit=2).unwrapped, type(env()))
    assert rllib_aec_env(round_limit=2).unwrapped.round_limit == 2 and isinstance(
        rllib_aec_env(), RLlibObservations
    )
    code = "import sys, hanamikoji_env.rllib; assert 'ray' not in sys.modules; print('ok')"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "ok"


def test_env_creator_without_ray_says_what_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ray.rllib.env.wrappers.pettingzoo_env", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'ray\[rllib\]'"):
        env_creator({})
