"""Expert iteration (training/expert.py): its labels are PolicySearchBot's moves, distillation
moves the policy to them, and a run writes a loadable policy and its curve."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from hanamikoji_env import raw_env
from hanamikoji_env.bots.psearch import PolicySearchBot
from hanamikoji_env.nn import PolicyNet, load_policy
from hanamikoji_env.training.expert import ExpertConfig, distil, label, main


def positions(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of decisions with a choice, from seeded random games."""
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    game = 0
    while len(obs) < n:
        e = raw_env()
        e.reset(seed=seed * 1000 + game)
        game += 1
        while not any(e.terminations.values()) and len(obs) < n:
            o = e.observe(e.agent_selection)
            legal = np.flatnonzero(o["action_mask"])
            if len(legal) > 1:
                obs.append(o["observation"])
                masks.append(o["action_mask"])
            e.step(int(rng.choice(legal)))
    return np.array(obs, np.float32), np.array(masks, np.int8)


@pytest.mark.parametrize("label_batch", [1, 16])
def test_labels_are_the_moves_policy_search_plays(label_batch: int) -> None:
    torch.manual_seed(0)
    model = PolicyNet(hidden=32, layers=2).eval()
    obs, mask = positions(24)
    cfg = ExpertConfig(samples=8, candidates=3, prior=0.1, temperature=0.0, label_batch=label_batch)
    targets = label(model, obs, mask, cfg, np.random.default_rng(5), progress=False)
    assert np.allclose(targets.sum(1), 1) and set(np.unique(targets)) <= {0.0, 1.0}
    bot = PolicySearchBot(model, seed=5, samples=8, candidates=3, prior=0.1)
    moves = [bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, mask, strict=True)]
    assert targets.argmax(1).tolist() == moves  # the same draws in the same order: the same moves


def test_soft_labels_reweight_the_policy_by_the_playouts() -> None:
    torch.manual_seed(1)
    model = PolicyNet(hidden=32, layers=2).eval()
    obs, mask = positions(12, seed=1)
    cfg = ExpertConfig(samples=8, candidates=4, prior=0.1, temperature=0.1, label_batch=4)
    targets = label(model, obs, mask, cfg, np.random.default_rng(2), progress=False)
    assert np.allclose(targets.sum(1), 1)
    assert ((targets > 0) <= (mask == 1)).all()  # only legal moves
    assert ((targets > 0).sum(1) <= 4).all() and ((targets > 0).sum(1) >= 2).any()
    hard = label(model, obs, mask, ExpertConfig(samples=8, candidates=4, temperature=0.0, label_batch=4),
                 np.random.default_rng(2), progress=False)  # fmt: skip
    assert (targets.argmax(1) == hard.argmax(1)).all()  # the same playouts: the same best move


@pytest.mark.slow
def test_distillation_moves_the_policy_to_the_targets_and_the_kl_term_holds_it() -> None:
    obs, mask = positions(128, seed=2)
    rng = np.random.default_rng(0)
    targets = np.zeros(mask.shape, np.float32)
    targets[np.arange(len(mask)), [rng.choice(np.flatnonzero(m)) for m in mask]] = 1.0
    data = {"obs": obs, "mask": mask, "return": rng.choice([-1.0, 1.0], len(obs)).astype(np.float32)}
    agreement = {}
    for kl_coef in (0.0, 100.0):
        torch.manual_seed(0)
        model = PolicyNet(hidden=64, layers=2).eval()
        cfg = ExpertConfig(epochs=40, minibatch=32, learning_rate=3e-3, kl_coef=kl_coef)
        optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
        stats = distil(model, data, targets, cfg, optimizer, torch.Generator().manual_seed(0))
        agreement[kl_coef] = stats["agreement"]
    assert agreement[0.0] > 0.9  # it fits the targets
    assert agreement[100.0] < agreement[0.0] - 0.2  # a strong pull to the old policy holds it back


@pytest.mark.slow
def test_a_run_writes_a_policy_every_player_spec_takes_and_its_curve(tmp_path: Path) -> None:
    main([f"runs_dir={tmp_path}", "run_name=x", "iterations=2", "positions=64", "samples=4",
          "eval_games=8", "num_envs=32", "rollout_steps=8", "--no-progress"])  # fmt: skip
    model = load_policy(tmp_path / "x" / "policy.pt")
    assert model.config["hidden"] == 512  # it improves the shipped agent by default
    rows = (tmp_path / "x" / "curve.csv").read_text().splitlines()
    assert rows[0].startswith("iteration,positions,seconds,heuristic,search") and len(rows) == 3
    assert rows[2].split(",")[1] == "128"


def test_bad_settings_are_one_line_errors(capsys) -> None:
    for override, message in [("temperature=-1", "temperature"), ("candidates=1", "candidates"),
                              ("colour=red", "unknown keys")]:  # fmt: skip
        with pytest.raises(SystemExit) as exit_:
            main([override])
        assert exit_.value.code == 2 and message in capsys.readouterr().err
