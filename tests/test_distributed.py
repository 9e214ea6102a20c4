"""Scaling out: the device key, Ray rollout workers, Ray tournaments and RLlib.

The Ray tests start one local Ray (4 logical CPUs on this 2-core machine, so two
trainers' workers fit side by side) and are marked slow; the device tests are fast.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import extra

from hanamikoji_env.bots.policy import PolicyBot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.nn import PolicyNet, resolve_device, save_checkpoint
from hanamikoji_env.tournament import run_tournament
from hanamikoji_env.training.config import Config
from hanamikoji_env.training.ppo import Trainer, train
from hanamikoji_env.training.run_folder import check_resumable


def fingerprint(model: torch.nn.Module) -> str:
    h = hashlib.sha256()
    for key, value in sorted(model.state_dict().items()):
        h.update(key.encode())
        h.update(value.detach().cpu().numpy().tobytes())
    return h.hexdigest()


def tiny(**changes) -> Config:
    base = dict(
        run_name="t", seed=5, num_envs=16, rollout_steps=16, hidden=16, layers=1, num_minibatches=2,
        total_decisions=10**9, eval_every=0, eval_games=4, checkpoint_every=1000, torch_threads=1,
        pool_share=0.3, snapshot_every=1, bot_shares={"heuristic": 0.2, "random": 0.1},
    )  # fmt: skip
    return Config(**{**base, **changes})


# ------------------------------------------------------------------ device ---


def test_device_names_are_checked_and_auto_picks_what_the_machine_has(monkeypatch) -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    for bad in ("gpu", "cuda:x", "CPU", "", "cuda:123"):
        with pytest.raises(ValueError, match="device must be auto, cpu, cuda or cuda:N"):
            resolve_device(bad)
    with monkeypatch.context() as m:  # a machine without CUDA, whatever this one has
        m.setattr(torch.cuda, "is_available", lambda: False)
        assert resolve_device("auto") == torch.device("cpu")
        for name in ("cuda", "cuda:0"):
            with pytest.raises(ValueError, match="CUDA is not available"):
                resolve_device(name)
    with monkeypatch.context() as m:  # a machine with one GPU, whatever this one has
        m.setattr(torch.cuda, "is_available", lambda: True)
        m.setattr(torch.cuda, "device_count", lambda: 1)
        assert resolve_device("auto") == torch.device("cuda")
        assert resolve_device("cuda:0") == torch.device("cuda:0")
        with pytest.raises(ValueError, match="this machine has 1 CUDA device"):
            resolve_device("cuda:3")
    with pytest.raises(ValueError, match="device must be"):
        tiny(device="tpu").validate()
    with pytest.raises(ValueError, match="backend must be"):
        tiny(backend="spark").validate()


def test_a_checkpoint_saved_on_a_gpu_loads_on_the_cpu(tmp_path: Path, monkeypatch) -> None:
    """The file is written as a GPU writes it (every tensor tagged ``cuda:0``) on any machine, so
    the GPU -> CPU direction runs on CPU-only CI too."""
    model = PolicyNet(16, 1)
    with monkeypatch.context() as m:
        m.setattr(torch.serialization, "location_tag", lambda storage: "cuda:0")
        save_checkpoint(tmp_path / "p.pt", model)
    if not torch.cuda.is_available():  # the file really names the GPU: a plain load needs one
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(tmp_path / "p.pt", weights_only=True)
    bot = PolicyBot(tmp_path / "p.pt", device="cpu")
    assert next(bot.model.parameters()).device.type == "cpu"
    obs = np.zeros((3, 109), np.float32)
    mask = np.ones((3, 23), np.int8)
    assert bot.act_batch(obs, mask).shape == (3,)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            PolicyBot(tmp_path / "p.pt", device="cuda")
        with pytest.raises(ValueError, match="CUDA is not available"):
            run_tournament(
                [parse_player("random"), parse_player("heuristic")], 2, device="cuda", progress=False
            )


@pytest.mark.slow
def test_a_run_may_resume_on_another_device_but_not_with_another_recipe(tmp_path: Path) -> None:
    cfg = tiny(device="cpu")
    train(cfg, tmp_path / "r", progress=False, stop_after=1)
    check_resumable(Config(**{**cfg.to_dict(), "device": "auto", "torch_threads": 2}), tmp_path / "r")
    with pytest.raises(ValueError, match="differs in"):
        check_resumable(Config(**{**cfg.to_dict(), "num_workers": 3}), tmp_path / "r")


# --------------------------------------------------------------------- Ray ---


@pytest.mark.slow  # a fresh interpreter that imports torch
def test_a_local_run_never_imports_ray(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys; from hanamikoji_env.training.ppo import train; from hanamikoji_env.training.config import Config; "
        f"train(Config(run_name='x', num_envs=8, rollout_steps=8, hidden=8, layers=1, num_minibatches=2, "
        f"eval_games=2, torch_threads=1), {str(tmp_path / 'x')!r}, progress=False, stop_after=1); "
        "print('ray' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "False"


@pytest.mark.slow(15)
def test_training_joins_a_running_cluster_by_its_address(tmp_path: Path) -> None:
    """`ray start --head` in its own session (with its own token), then the README's training
    command with ray_address; the cluster is stopped by killing that session's processes, so
    nothing else on the machine (another Ray) is touched."""
    extra("ray")
    import os
    import shutil
    import signal
    import socket
    import subprocess
    import sys
    import tempfile
    import time

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "hanamikoji-test-" + "0" * 16}
    ray_cli = shutil.which("ray", path=str(Path(sys.executable).parent))
    short_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
    assert ray_cli is not None
    head = subprocess.Popen(
        [ray_cli, "start", "--head", "--block", f"--port={port}", "--num-cpus=2", "--include-dashboard=false",
         "--node-ip-address=127.0.0.1", "--disable-usage-stats", f"--temp-dir={short_dir}"],
        env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline and head.poll() is None, "the Ray head did not start"
            time.sleep(0.5)
        root = Path(__file__).resolve().parents[1]
        out = subprocess.run(
            [sys.executable, "-m", "training.train", "--config", "configs/quick.yaml", "--no-progress",
             "backend=ray", "num_workers=2", f"ray_address=127.0.0.1:{port}", "total_decisions=20000",
             f"runs_dir={tmp_path}", "run_name=cluster", "eval_games=10"],
            cwd=root, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        assert (tmp_path / "cluster" / "policy.pt").is_file() and "trained" in out.stdout
    finally:
        os.killpg(head.pid, signal.SIGKILL)  # the head and everything it started, nothing else
        head.wait(60)
        shutil.rmtree(short_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def local_ray():
    ray = extra("ray")
    ray.init(num_cpus=4, include_dashboard=False, ignore_reinit_error=True)
    yield ray
    ray.shutdown()


def step(trainer: Trainer) -> None:
    trainer.learn(trainer.collect())
    trainer.update += 1
    trainer.add_snapshot()


@pytest.mark.slow(20)
def test_ray_runs_are_deterministic_and_a_killed_worker_is_restarted_without_a_trace(
    local_ray, tmp_path: Path
) -> None:
    cfg = tiny(backend="ray", num_workers=2, critic="oracle")
    a, b = Trainer(cfg, tmp_path / "a"), Trainer(cfg, tmp_path / "b")
    for update in range(3):
        if update == 1:
            local_ray.kill(b.collector.actors[0])  # dies between rollouts: its next rollout is redone
        step(a)
        step(b)
    assert fingerprint(a.model) == fingerprint(b.model)
    assert (a.decisions, a.games) == (b.decisions, b.games)
    assert b.collector.restarts == 1 and a.collector.restarts == 0


@pytest.mark.slow(25)
def test_ray_workers_label_their_rollouts_with_the_teacher_during_the_warm_start(
    local_ray, tmp_path: Path
) -> None:
    """The same labels as a local run's: each worker's teacher reads its own games; then PPO."""
    from hanamikoji_env.bots.heuristic import heuristic_actions

    cfg = tiny(backend="ray", num_workers=2, teacher="heuristic", imitation_decisions=600)
    trainer = Trainer(cfg, tmp_path / "r")
    buf = trainer.collect()
    learner = buf["learner"]
    obs, mask, target = buf["obs"][learner], buf["mask"][learner], buf["target"][learner]
    assert len(target) > 100 and np.array_equal(target.argmax(1), heuristic_actions(obs, mask))
    assert "imitation_loss" in trainer.learn(buf)
    while trainer.imitating:
        trainer.learn(trainer.collect())
    assert "approx_kl" in trainer.learn(trainer.collect())


@pytest.mark.slow(20)
def test_a_ray_run_resumes_exactly(local_ray, tmp_path: Path) -> None:
    cfg = tiny(backend="ray", num_workers=2)
    straight = train(cfg, tmp_path / "straight", progress=False, stop_after=3)
    train(cfg, tmp_path / "resumed", progress=False, stop_after=2)
    resumed = train(cfg, tmp_path / "resumed", resume=True, progress=False, stop_after=1)
    assert fingerprint(straight.model) == fingerprint(resumed.model)
    assert straight.decisions == resumed.decisions


@pytest.mark.slow(20)
def test_ray_and_local_runs_learn_alike(local_ray, tmp_path: Path) -> None:
    """The same recipe, collected in this process or by two Ray workers: both beat RandomBot
    by the same margin within the noise of 400 evaluation games."""
    rates = {}
    for backend in ("local", "ray"):
        cfg = tiny(
            backend=backend, num_workers=2, num_envs=128, rollout_steps=32, hidden=64, layers=2,
            num_minibatches=8, learning_rate=0.002, total_decisions=150_000, shaping=1.0,
            pool_share=0.2, bot_shares={"random": 0.2}, snapshot_every=10,
        )  # fmt: skip
        trainer = train(cfg, tmp_path / backend, progress=False)
        rates[backend] = trainer.evaluate("random", 400)
    # an untrained policy scores about 0.5 (+-0.05 over 400 games); both learned to beat it
    assert rates["local"] > 0.6 and rates["ray"] > 0.6, rates
    assert abs(rates["local"] - rates["ray"]) < 0.1, rates


@pytest.mark.slow
def test_a_ray_tournament_gives_the_local_results_and_games(local_ray, tmp_path: Path) -> None:
    players = [parse_player(s) for s in ("random", "heuristic", "search:samples=8,candidates=3")]
    local = run_tournament(players, 6, seed=2, workers=2, progress=False, save_games=tmp_path / "l")
    remote = run_tournament(players, 6, seed=2, progress=False, save_games=tmp_path / "r", backend="ray")
    assert local["pairs"] == remote["pairs"] and local["elo"] == remote["elo"]
    assert (tmp_path / "l" / "games.jsonl").read_text() == (tmp_path / "r" / "games.jsonl").read_text()


# ------------------------------------------------------------------- RLlib ---


@pytest.mark.slow
# RLlib's env pre-check samples actions without the mask: env() then ends that game with -1 and says
# so, by design (docs/training.md), so the warning is expected here
@pytest.mark.filterwarnings("ignore:illegal action .* the game ends with -1 for the mover")
def test_rllib_trains_one_iteration_and_its_policy_plays_in_the_tournament(local_ray, tmp_path: Path) -> None:
    extra("ray.rllib")
    from ray.rllib.core.columns import Columns

    from hanamikoji_env.aec import env
    from hanamikoji_env.rllib import POLICY_ID
    from hanamikoji_env.training.train_rllib import build_config, built, export_policy

    with built(build_config(16, 2, None, 0, 200)) as algo:
        result = algo.train()
        module = algo.get_module(POLICY_ID)
    assert not Path(algo.logdir).exists()  # the empty folder Ray made in ~/ray_results went with it
    assert result["num_env_steps_sampled_lifetime"] >= 200
    net = export_policy(module, 16, 2)
    # the exported network computes RLlib's logits and values
    e = env()
    e.reset(seed=1)
    rng = np.random.default_rng(0)
    obs, masks = [], []
    for _ in range(40):
        o, _, term, trunc, _ = e.last()
        if term or trunc:
            break
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        e.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    o, m = torch.as_tensor(np.array(obs)), torch.as_tensor(np.array(masks))
    batch = {Columns.OBS: {"observations": o, "action_mask": m}}
    with torch.no_grad():
        theirs = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        values = module.compute_values(batch)
        logits, ours = net(o, m)
    legal = m.bool()
    assert torch.allclose(theirs[legal], logits[legal], atol=1e-5)
    assert torch.allclose(values, ours, atol=1e-5)
    # the mini variant: RLlib's env is the mini game, the exported network says it learned it
    assert build_config(16, 2, None, 0, 200, "mini").env_config == {"round_limit": None, "variant": "mini"}
    assert export_policy(module, 16, 2, "mini").variant == "mini" and net.variant == "full"
    save_checkpoint(tmp_path / "policy.pt", net, source="rllib")
    results = run_tournament(
        [parse_player(f"ckpt:{tmp_path / 'policy.pt'}"), parse_player("random")], 4, workers=1, progress=False
    )
    assert results["pairs"][0]["games"] == 4
