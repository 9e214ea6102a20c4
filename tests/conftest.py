"""Shared test set-up."""

from __future__ import annotations

import pytest
import torch
from numba import njit

from hanamikoji_env import observation
from hanamikoji_env.engine import C_TURN
from hanamikoji_env.observation import OBS_LAYOUT, OBS_SIZE, Field, ObservationVersion, encode_row


@pytest.fixture(autouse=True)
def one_torch_thread():
    """The tests' networks are tiny: one thread is fastest and immune to a busy machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


TURN = Field("turn", OBS_SIZE, 1, (8.0,), "turns played this round")


@njit(cache=False)
def _encode_row_v2(s, i, seat, o, m):
    encode_row(s, i, seat, o[:OBS_SIZE], m)
    o[OBS_SIZE] = s[i, C_TURN]


@njit(cache=False)
def _encode_rows_v2(s, seats, obs, mask):
    for i in range(s.shape[0]):
        _encode_row_v2(s, i, seats[i], obs[i], mask[i])


V2 = ObservationVersion(2, (*OBS_LAYOUT, TURN), _encode_row_v2, _encode_rows_v2)


@pytest.fixture
def v2(monkeypatch):
    """A second observation version: version 1 plus the turn count, registered for the test."""
    monkeypatch.setitem(observation.VERSIONS, 2, V2)
    return V2
