"""RLlib's PPO with action masking on Hanamikoji, both seats one policy, exported to our format.

    python -m hanamikoji_env.training.train_rllib --iterations 20 [--out runs/rllib] [--hidden 128] [--layers 2]

Uses RLlib's new API stack: ``hanamikoji_env.rllib.env_creator`` (PettingZoo's
AEC env with RLlib's observation keys), RLlib's ``ActionMaskingTorchRLModule``
(from its examples) with a shared tanh encoder and linear policy and value
heads, and :func:`hanamikoji_env.rllib.self_play_mapping` (both seats train
one policy).  After the last iteration the policy is converted, exactly, to a
hanamikoji-env checkpoint (``OUT/policy.pt``), so ``ckpt:OUT/policy.pt`` plays
in the tournament and ``PolicyBot`` loads it safely (``weights_only``), with no
Ray and no pickled code (:func:`export_policy`).  Needs the ``ray`` extra.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from hanamikoji_env.nn import PolicyNet, save_checkpoint
from hanamikoji_env.observation import OBS_HIGH
from hanamikoji_env.rllib import POLICY_ID, env_creator, self_play_mapping

ENV_NAME = "hanamikoji"


def build_config(
    hidden: int, layers: int, round_limit: int | None, seed: int, batch: int, variant: str = "full"
) -> Any:
    """The PPOConfig: multi-agent self-play with action masking on ``variant``, sized for a small
    machine."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env

    register_env(ENV_NAME, env_creator)
    module = RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        model_config={
            "fcnet_hiddens": [hidden] * layers,
            "fcnet_activation": "tanh",
            "head_fcnet_hiddens": [],  # linear policy and value heads, as PolicyNet's
            "vf_share_layers": True,  # one trunk, as PolicyNet's
        },
    )
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config={"round_limit": round_limit, "variant": variant})
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
        .multi_agent(policies={POLICY_ID}, policy_mapping_fn=self_play_mapping)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={POLICY_ID: module}))
        .training(train_batch_size_per_learner=batch, minibatch_size=min(batch, 256), num_epochs=4, lr=3e-4)
        .debugging(seed=seed)
    )


@contextlib.contextmanager
def built(config: Any) -> Iterator[Any]:
    """``config``'s Algorithm, stopped on leaving.  Ray makes a log folder in ``~/ray_results``
    for every Algorithm built outside Tune, and we log nothing there: it goes too, if still empty."""
    algo = config.build_algo()
    try:
        yield algo
    finally:
        algo.stop()
        with contextlib.suppress(OSError):  # something was written there: kept
            os.rmdir(algo.logdir)


@torch.no_grad()
def export_policy(module: Any, hidden: int, layers: int, variant: str = "full") -> PolicyNet:
    """The RLlib module as a :class:`PolicyNet` computing the same logits and values.

    PolicyNet scales observations by ``1 / OBS_HIGH`` before its first layer; RLlib's module
    reads them raw, so the first layer's weights are multiplied by ``OBS_HIGH`` per input."""
    state = {k: v.detach().cpu() for k, v in module.state_dict().items()}
    linear = sorted(
        (k for k in state if k.startswith("encoder.") and k.endswith(".weight")),
        key=lambda k: [int(x) if x.isdigit() else x for x in k.split(".")],
    )
    if len(linear) != layers:
        raise ValueError(f"expected {layers} encoder layers in the RLlib module, found {linear}")
    net = PolicyNet(hidden, layers, variant=variant)
    for i, (key, dst) in enumerate(zip(linear, net.trunk[::2], strict=True)):
        weight = state[key]
        if i == 0:
            weight = weight * torch.as_tensor(OBS_HIGH, dtype=weight.dtype)[None, :]
        dst.weight.copy_(weight)
        dst.bias.copy_(state[key[: -len("weight")] + "bias"])
    for prefix, dst in (("pi.", net.policy), ("vf.", net.value)):
        (w,) = [k for k in state if k.startswith(prefix) and k.endswith("weight")]
        dst.weight.copy_(state[w])
        dst.bias.copy_(state[w[: -len("weight")] + "bias"])
    return net.eval()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m hanamikoji_env.training.train_rllib", description=__doc__.splitlines()[0]
    )
    p.add_argument("--iterations", type=int, default=20, help="RLlib training iterations")
    p.add_argument("--out", type=Path, default=Path("runs/rllib"), help="folder for policy.pt")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--batch", type=int, default=2000, help="env steps per iteration")
    p.add_argument("--round-limit", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local Ray")
    args = p.parse_args(argv)
    if args.iterations < 1 or args.batch < 1:
        p.error("--iterations and --batch must be >= 1")
    import ray  # the ray extra (missing: one line, hanamikoji_env.entry.run_as_main)

    ray.init(num_cpus=args.num_cpus, include_dashboard=False, ignore_reinit_error=True)
    with built(build_config(args.hidden, args.layers, args.round_limit, args.seed, args.batch)) as algo:
        start = time.perf_counter()
        for i in range(1, args.iterations + 1):
            result = algo.train()
            returns = result.get("env_runners", {}).get("agent_episode_returns_mean", {})
            print(
                f"iteration {i}: env steps {result.get('num_env_steps_sampled_lifetime', '?')}, returns {returns}"
            )
        net = export_policy(algo.get_module(POLICY_ID), args.hidden, args.layers)
    args.out.mkdir(parents=True, exist_ok=True)
    save_checkpoint(args.out / "policy.pt", net, source="rllib", iterations=args.iterations)
    print(
        f"trained {args.iterations} iterations in {time.perf_counter() - start:.0f} s -> {args.out / 'policy.pt'}"
    )
    print(f"evaluate: hanamikoji-eval --players random heuristic ckpt:{args.out / 'policy.pt'} --games 200")
    ray.shutdown()


if __name__ == "__main__":
    main()
