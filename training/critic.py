"""The value function of the advantages: the policy's own value head, or a training-only oracle critic.

``critic: policy`` (the default): GAE and the value loss use the PolicyNet's own
value head.  ``critic: oracle``: centralized training, decentralized play.  The
values come from :class:`OracleCritic`, which reads the seat's observation *and*
the opponent's own observation (their hand, Secret and Trade-off; the removed
card and the draw pile stay hidden from both), so it can predict outcomes
better than any function of one seat's view and give less noisy advantages.
It exists only in training: the policy's inputs are unchanged, its own value
head keeps learning the same returns (an auxiliary loss), and ``policy.pt``
does not contain the critic.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from hanamikoji_env.nn import PolicyNet, tanh_layers
from hanamikoji_env.observation import DEFAULT_VERSION, get_version


class OracleCritic(nn.Module):
    """Training-only value function of (the seat's observation, the opponent's observation)."""

    def __init__(self, hidden: int, layers: int, observation_version: int = DEFAULT_VERSION) -> None:
        super().__init__()
        version = get_version(observation_version)
        self.register_buffer("scale", torch.as_tensor(1.0 / np.tile(version.high, 2), dtype=torch.float32))
        self.net = nn.Sequential(*tanh_layers(2 * version.size, hidden, layers), nn.Linear(hidden, 1))

    def forward(self, obs: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([obs, other], -1) * self.scale).squeeze(-1)


class Values:
    """The advantages' value function for a run: ``critic`` None (the policy's value head) or an
    :class:`OracleCritic` with its own optimizer."""

    def __init__(
        self,
        model: PolicyNet,
        critic: OracleCritic | None,
        learning_rate: float,
        device: torch.device | None = None,
    ) -> None:
        self.model = model
        self.critic = critic
        self.device = device or torch.device("cpu")
        """Where the networks are: batches go there, values come back as numpy."""
        self.optimizer = (
            torch.optim.Adam(critic.parameters(), lr=learning_rate, eps=1e-5) if critic is not None else None
        )

    @property
    def needs_other(self) -> bool:
        """Does it read the opponent's own observation (which the rollout must then record)?"""
        return self.critic is not None

    @torch.no_grad()
    def of(
        self, obs: np.ndarray, mask: np.ndarray, other: np.ndarray | None, own: np.ndarray | None = None
    ) -> np.ndarray:
        """Values of a batch of positions, as numpy (for GAE); ``own``: the policy's own values of
        them, when already computed."""
        dev = self.device
        if self.critic is not None:
            return (
                self.critic(torch.as_tensor(obs, device=dev), torch.as_tensor(other, device=dev))
                .cpu()
                .numpy()
            )
        if own is not None:
            return own
        return (
            self.model(torch.as_tensor(obs, device=dev), torch.as_tensor(mask, device=dev))[1].cpu().numpy()
        )

    def for_loss(
        self, own_value: torch.Tensor, obs: torch.Tensor, other: torch.Tensor | None, returns: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(value, auxiliary loss)`` of a minibatch: the value the PPO value loss fits and, with the
        oracle critic, the policy's own value head's loss on the same returns."""
        if self.critic is None:
            return own_value, torch.zeros(())
        return self.critic(obs, other), 0.5 * ((own_value - returns) ** 2).mean()
