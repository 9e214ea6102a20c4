"""PPO self-play on the batch engine: one readable training loop.

One shared policy (``hanamikoji_env.nn.PolicyNet``) plays both seats from the
perspective observation.  Illegal actions are masked out of the logits before
sampling and in the loss (their probability is exactly 0).

Credit assignment.  A turn is several decisions and the two players'
decisions interleave (a Gift's answer belongs to the opponent), so each
(env, seat) has its own trajectory: the decisions that seat made, in order.
The "next state" of a decision is the same seat's next decision; the
opponent's decisions in between are part of the environment.  Rewards are 0
until the game ends; then +1 / -1 (0 / 0 for a draw) reach the last decision
of *both* seats, whoever made the final move.  GAE runs backward over each
seat's trajectory with ``gamma`` and ``gae_lambda``; a trajectory cut by the
end of the rollout is bootstrapped with the value of that seat's own view of
the position.  Only the learner's decisions are trained on: both seats in a
self-play game, one seat against a snapshot or a bot (see ``selfplay.py``).

Oracle critic (``critic: oracle``).  Centralized training, decentralized
play: the values of GAE then come from :class:`OracleCritic`, which reads the
seat's observation *and* the opponent's own observation (their hand, Secret
and Trade-off; the removed card and the draw pile stay hidden from both), so
it can predict outcomes better than any function of one seat's view and give
less noisy advantages.  It exists only in training: the policy's inputs
are unchanged, its own value head keeps learning the same returns, and
``policy.pt`` does not contain the critic.

Determinism: one seed; every random draw comes from generators that are
saved in the checkpoint (the engine's deck generator, the opponent and
minibatch generator, the torch sampling generator), so a run that is
interrupted and resumed ends with the same weights as one that was not.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from hanamikoji_env.bots import RandomBot
from hanamikoji_env.bots.base import Bot
from hanamikoji_env.bots.spec import parse_player
from hanamikoji_env.nn import (
    PolicyNet,
    load_checkpoint,
    policy_from,
    remove_stale_temporaries,
    save_checkpoint,
    tanh_layers,
    widen,
)
from hanamikoji_env.observation import OBS_HIGH, OBS_SIZE
from hanamikoji_env.rules import VALUES
from hanamikoji_env.vector import VectorHanamikoji, random_actions
from training.config import Config
from training.selfplay import SELF, OpponentPool, OpponentSchedule

CHECKPOINT = "checkpoint.pt"
POLICY = "policy.pt"


class TrainingDivergedError(RuntimeError):
    """The loss or the weights became non-finite; nothing of the failed update was saved."""


def make_bot(spec: str, seed: int, round_limit: int | None) -> Bot:
    """A baseline bot from a player spec (``random``, ``heuristic``, ``search:samples=100``)."""
    return parse_player(spec).make(seed, round_limit)


def bot_move(
    bot: Bot, obs: np.ndarray, mask: np.ndarray, states: dict[int, tuple[int, ...]], env: int
) -> int:
    """``bot``'s move in env ``env``: one bot plays many games, each with its own game state."""
    bot.set_game_state(states.get(env, ()))
    action = bot.act({"observation": obs, "action_mask": mask})
    states[env] = bot.game_state()
    return action


class OracleCritic(nn.Module):
    """Training-only value function of (the seat's observation, the opponent's observation)."""

    def __init__(self, hidden: int, layers: int) -> None:
        super().__init__()
        self.register_buffer("scale", torch.as_tensor(1.0 / np.tile(OBS_HIGH, 2), dtype=torch.float32))
        self.net = nn.Sequential(*tanh_layers(2 * OBS_SIZE, hidden, layers), nn.Linear(hidden, 1))

    def forward(self, obs: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([obs, other], -1) * self.scale).squeeze(-1)


def load_init_from(cfg: Config) -> dict[str, Any]:
    """The checkpoint ``cfg.init_from``, if its network fits the config's (same, or narrower)."""
    assert cfg.init_from is not None
    start = load_checkpoint(cfg.init_from)
    shape, asked = start["model_config"], {"hidden": cfg.hidden, "layers": cfg.layers}
    if shape != asked and not (shape["layers"] == cfg.layers and shape["hidden"] < cfg.hidden):
        raise ValueError(
            f"init_from {cfg.init_from} has network {shape}, config asks {asked} "
            "(set hidden and layers to the same, or the same layers and a wider hidden size)"
        )
    return start


class Trainer:
    """Owns the model, optimizer, engine, opponents and every generator of one run."""

    def __init__(self, cfg: Config, run_dir: Path) -> None:
        self.cfg = cfg.validate()
        self.run_dir = Path(run_dir)
        torch.set_num_threads(cfg.torch_threads)
        torch.manual_seed(cfg.seed)  # network initialisation only
        self.model = PolicyNet(cfg.hidden, cfg.layers)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.learning_rate, eps=1e-5)
        if cfg.init_from is not None:
            start = load_init_from(cfg)
            if start["model_config"] == self.model.config:
                self.model.load_state_dict(start["state_dict"])
                if "optimizer" in start:
                    self.optimizer.load_state_dict(start["optimizer"])
            else:  # a narrower network: widened, with a fresh optimizer
                self.model = widen(policy_from(start, cfg.init_from), cfg.hidden)
                self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.learning_rate, eps=1e-5)
        self.critic: OracleCritic | None = None
        if cfg.critic == "oracle":
            self.critic = OracleCritic(cfg.hidden, cfg.layers)
            self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=cfg.learning_rate, eps=1e-5)
        self.gen = torch.Generator().manual_seed(cfg.seed + 1)  # action sampling
        self.rng = np.random.default_rng(cfg.seed + 2)  # opponents, seats, minibatches, bot seeds
        self.engine = VectorHanamikoji(cfg.num_envs, seed=cfg.seed + 3, round_limit=cfg.round_limit)
        self.pool = OpponentPool(cfg.pool_size)
        self.schedule = OpponentSchedule(cfg.pool_share, cfg.bot_shares)
        self.bots = {name: make_bot(name, cfg.seed, cfg.round_limit) for name in self.schedule.bots}
        self.update = 0
        self.saved_update = 0
        """The update of the newest checkpoint on disk."""
        self.decisions = 0
        self.games = 0
        self.obs, self.mask, self.to_play = self.engine.reset()
        self.rounds = np.ones(cfg.num_envs, dtype=np.int32)  # for shaping: the round each env is in
        self.potential = np.zeros((cfg.num_envs, 2), np.float32)  # each seat's shaping potential
        self.opponent = np.full(cfg.num_envs, SELF, dtype=np.int64)
        self.learner_seat = np.zeros(cfg.num_envs, dtype=np.int64)
        self.bot_states: dict[int, tuple[int, ...]] = {}  # env -> its bot opponent's game state
        self._new_games(np.arange(cfg.num_envs))
        self.last_eval: dict[str, float] = {}

    # ------------------------------------------------------------ rollout ---

    def _new_games(self, envs: np.ndarray) -> None:
        """Draw the opponent and the learner's seat for the games starting in ``envs``."""
        self.opponent[envs] = self.schedule.draw(self.rng, len(envs), len(self.pool.nets))
        self.learner_seat[envs] = self.rng.integers(0, 2, len(envs))
        for i in envs:
            self.bot_states.pop(int(i), None)

    def _is_learner(self, seats: np.ndarray) -> np.ndarray:
        return (self.opponent == SELF) | (seats == self.learner_seat)

    @torch.no_grad()
    def _sample(self, model: PolicyNet, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, ...]:
        logits, value = model(torch.as_tensor(obs), torch.as_tensor(mask))
        logp_all = torch.log_softmax(logits, -1)
        action = torch.multinomial(logp_all.exp(), 1, generator=self.gen)
        return action.squeeze(1).numpy(), logp_all.gather(1, action).squeeze(1).numpy(), value.numpy()

    def _opponent_actions(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """Fill ``actions[rows]`` for rows where a snapshot or a bot is to play."""
        codes = self.opponent[rows]
        for code in np.unique(codes):
            sub = rows[codes == code]
            if code >= 0:
                actions[sub] = self._sample(self.pool.nets[code], self.obs[sub], self.mask[sub])[0]
            elif isinstance(bot := self.bots[self.schedule.bot_name(code)], RandomBot):
                actions[sub] = random_actions(self.mask[sub], self.rng)
            else:
                for i in sub:
                    bot.seed(int(self.rng.integers(2**31)))  # each decision's draws from the run's generator
                    actions[i] = bot_move(bot, self.obs[i], self.mask[i], self.bot_states, int(i))

    def collect(self) -> dict[str, np.ndarray]:
        """One rollout of ``rollout_steps`` engine steps, with per-seat GAE."""
        cfg = self.cfg
        t_steps, n = cfg.rollout_steps, cfg.num_envs
        buf = {
            "obs": np.zeros((t_steps, n, self.obs.shape[1]), np.float32),
            "mask": np.zeros((t_steps, n, self.mask.shape[1]), np.int8),
            "action": np.zeros((t_steps, n), np.int64),
            "logp": np.zeros((t_steps, n), np.float32),
            "value": np.zeros((t_steps, n), np.float32),
            "learner": np.zeros((t_steps, n), bool),
            "seat": np.zeros((t_steps, n), np.int64),
            "reward": np.zeros((t_steps, n, 2), np.float32),
            "done": np.zeros((t_steps, n), bool),
        }
        if self.critic is not None:
            buf["other"] = np.zeros_like(buf["obs"])  # the opponent's own observation
        for t in range(t_steps):
            seats = self.to_play.astype(np.int64)
            learner = self._is_learner(seats)
            actions = np.zeros(n, np.int64)
            rows = np.flatnonzero(learner)
            if rows.size:
                a, logp, value = self._sample(self.model, self.obs[rows], self.mask[rows])
                actions[rows] = a
                buf["logp"][t, rows] = logp
                buf["value"][t, rows] = value
            if self.critic is not None:
                buf["other"][t] = self.engine.observe(1 - seats)[0]
                with torch.no_grad():
                    buf["value"][t, rows] = self.critic(
                        torch.as_tensor(self.obs[rows]), torch.as_tensor(buf["other"][t, rows])
                    ).numpy()
            self._opponent_actions(np.flatnonzero(~learner), actions)
            buf["obs"][t], buf["mask"][t] = self.obs, self.mask
            buf["action"][t], buf["learner"][t], buf["seat"][t] = actions, learner, seats
            self.obs, self.mask, to_play, rewards, done, _ = self.engine.step(actions)
            self.to_play = to_play
            buf["reward"][t], buf["done"][t] = rewards + self._shaping(done), done
            self.decisions += int(learner.sum())
            if done.any():
                self.games += int(done.sum())
                self._new_games(np.flatnonzero(done))
        buf["advantage"], buf["return"] = gae(buf, self._bootstrap(), cfg.gamma, cfg.gae_lambda)
        return buf

    @torch.no_grad()
    def _bootstrap(self) -> np.ndarray:
        """``[N, 2]``: each seat's value of its own view of the position the rollout stopped in."""
        values = np.zeros((self.cfg.num_envs, 2), np.float32)
        views = [self.engine.observe(np.full(self.cfg.num_envs, seat)) for seat in (0, 1)]
        for seat in (0, 1):
            obs, mask = views[seat]
            if self.critic is not None:
                values[:, seat] = self.critic(
                    torch.as_tensor(obs), torch.as_tensor(views[1 - seat][0])
                ).numpy()
            else:
                values[:, seat] = self.model(torch.as_tensor(obs), torch.as_tensor(mask))[1].numpy()
        return values

    def _shaping(self, done: np.ndarray) -> np.ndarray:
        """Shaping rewards ``[N, 2]`` for this step: the change of each seat's potential."""
        if not self.cfg.shaping:
            return np.zeros((self.cfg.num_envs, 2), np.float32)
        rounds, markers = self.engine.markers()
        lead = np.zeros((self.cfg.num_envs, 2), np.float32)
        for seat in (0, 1):
            mine, theirs = markers == seat, markers == 1 - seat
            points = ((mine.astype(np.float32) - theirs) * np.array(VALUES, np.float32)).sum(1)
            lead[:, seat] = points / 11.0 + (mine.sum(1) - theirs.sum(1)) / 4.0
        potential = np.where(done[:, None], 0.0, 0.5 * self.cfg.shaping * lead)  # 0 once the game is over
        scored = done | (rounds != self.rounds)
        shaped = np.where(scored[:, None], potential - self.potential, 0.0).astype(np.float32)
        self.potential = np.where(scored[:, None], np.where(done[:, None], 0.0, potential), self.potential)
        self.rounds = rounds
        return shaped

    # ------------------------------------------------------------- update ---

    def learn(self, buf: dict[str, np.ndarray]) -> dict[str, float]:
        cfg = self.cfg
        keep = buf["learner"].reshape(-1)
        keys = ["obs", "mask", "action", "logp", "value", "advantage", "return"]
        if self.critic is not None:
            keys.append("other")
        data = {k: torch.as_tensor(buf[k].reshape(-1, *buf[k].shape[2:])[keep]) for k in keys}
        warmup = self.update < cfg.critic_warmup  # only the value functions learn
        size = int(keep.sum())
        batch = max(1, size // cfg.num_minibatches)
        if cfg.anneal_lr:
            frac = 1.0 - self.decisions / cfg.total_decisions
            self.optimizer.param_groups[0]["lr"] = max(frac, 0.0) * cfg.learning_rate
            if self.critic is not None:
                self.critic_optimizer.param_groups[0]["lr"] = max(frac, 0.0) * cfg.learning_rate
        stats: dict[str, list[float]] = {
            k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac")
        }
        for _ in range(cfg.update_epochs):
            order = self.rng.permutation(size)
            for start in range(0, size - batch + 1, batch):
                mb = {k: v[order[start : start + batch]] for k, v in data.items()}
                logits, value = self.model(mb["obs"], mb["mask"])
                own_value_loss = torch.zeros(())
                if self.critic is not None:  # the policy's own value head learns the same returns
                    own_value_loss = 0.5 * ((value - mb["return"]) ** 2).mean()
                    value = self.critic(mb["obs"], mb["other"])
                logp_all = torch.log_softmax(logits, -1)  # illegal actions: about -1e9, probability 0
                logp = logp_all.gather(1, mb["action"][:, None]).squeeze(1)
                ratio = (logp - mb["logp"]).exp()
                adv = mb["advantage"]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(
                    -adv * ratio, -adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)
                ).mean()
                if cfg.clip_vloss:
                    clipped = mb["value"] + (value - mb["value"]).clamp(-cfg.clip_coef, cfg.clip_coef)
                    v_loss = (
                        0.5 * torch.max((value - mb["return"]) ** 2, (clipped - mb["return"]) ** 2).mean()
                    )
                else:
                    v_loss = 0.5 * ((value - mb["return"]) ** 2).mean()
                entropy = -(logp_all.exp() * logp_all).sum(-1).mean()
                value_loss = cfg.vf_coef * (v_loss + own_value_loss)
                loss = value_loss if warmup else pg_loss - cfg.ent_coef * entropy + value_loss
                if not torch.isfinite(loss):  # stop before the optimizer spreads it into the weights
                    raise TrainingDivergedError(f"the loss became {loss.item()} at update {self.update + 1}")
                self.optimizer.zero_grad()
                if self.critic is not None:
                    self.critic_optimizer.zero_grad()
                loss.backward()
                if warmup:  # the trunk is shared with the policy: in warm-up only the value head moves
                    for p in (*self.model.trunk.parameters(), *self.model.policy.parameters()):
                        p.grad = None
                nn.utils.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm)
                self.optimizer.step()
                if self.critic is not None:
                    nn.utils.clip_grad_norm_(self.critic.parameters(), cfg.max_grad_norm)
                    self.critic_optimizer.step()
                with torch.no_grad():
                    log_ratio = logp - mb["logp"]
                    stats["approx_kl"].append(float(((ratio - 1) - log_ratio).mean()))
                    stats["clipfrac"].append(float(((ratio - 1).abs() > cfg.clip_coef).float().mean()))
                stats["policy_loss"].append(pg_loss.item())
                stats["value_loss"].append(v_loss.item())
                stats["entropy"].append(entropy.item())
            if (
                cfg.target_kl is not None
                and np.mean(stats["approx_kl"][-cfg.num_minibatches :]) > cfg.target_kl
            ):
                break
        if not all(torch.isfinite(p).all() for p in self.model.parameters()):
            raise TrainingDivergedError(f"the weights became non-finite at update {self.update + 1}")
        out = {k: float(np.mean(v)) for k, v in stats.items()}
        y, pred = data["return"].numpy(), data["value"].numpy()
        var = float(np.var(y))
        out["explained_variance"] = float("nan") if var == 0 else 1 - float(np.var(y - pred)) / var
        out["learning_rate"] = self.optimizer.param_groups[0]["lr"]
        return out

    # --------------------------------------------------------- evaluation ---

    @torch.no_grad()
    def evaluate(self, bot_name: str, games: int) -> float:
        """Win rate (draws half) of the greedy policy against a bot, half the games in each seat."""
        engine = VectorHanamikoji(games, seed=10_000 + self.update, round_limit=self.cfg.round_limit)
        bot = make_bot(bot_name, 12_345 + self.update, self.cfg.round_limit)
        obs, mask, to_play = engine.reset()
        my_seat = np.arange(games) % 2
        result = np.full(games, np.nan)
        states: dict[int, tuple[int, ...]] = {}
        while np.isnan(result).any():
            actions = np.zeros(games, np.int64)
            mine = to_play == my_seat
            if mine.any():
                logits, _ = self.model(torch.as_tensor(obs[mine]), torch.as_tensor(mask[mine]))
                actions[mine] = logits.argmax(1).numpy()
            over = ~mine & ~np.isnan(result)  # finished games play on (auto-reset): any legal move
            actions[over] = mask[over].argmax(1)
            for i in np.flatnonzero(~mine & np.isnan(result)):
                actions[i] = bot_move(bot, obs[i], mask[i], states, int(i))
            obs, mask, to_play, rewards, done, _ = engine.step(actions)
            first = done & np.isnan(result)
            result[first] = rewards[first, my_seat[first]]
        return float(((result > 0) + 0.5 * (result == 0)).mean())

    # -------------------------------------------------------- checkpoints ---

    def save(self) -> None:
        """The whole run state to ``checkpoint.pt`` (for ``--resume``) and the policy to
        ``policy.pt`` (weights, optimizer and RNG states, config, counts: small enough to ship)."""
        common = {
            "config": self.cfg.to_dict(),
            "update": self.update,
            "decisions": self.decisions,
            "games": self.games,
            "optimizer": self.optimizer.state_dict(),
            "torch_generator": self.gen.get_state(),
            "rng": self.rng.bit_generator.state,
            "last_eval": self.last_eval,
        }
        save_checkpoint(
            self.run_dir / CHECKPOINT,
            self.model,
            **common,
            engine={
                k: torch.as_tensor(v) if isinstance(v, np.ndarray) else v
                for k, v in self.engine.get_state().items()
            },
            pool=self.pool.state(),
            opponent=torch.as_tensor(self.opponent),
            learner_seat=torch.as_tensor(self.learner_seat),
            rounds=torch.as_tensor(self.rounds),
            potential=torch.as_tensor(self.potential),
            bot_states=[[env, *state] for env, state in self.bot_states.items() if state],
            **(
                {"critic": self.critic.state_dict(), "critic_optimizer": self.critic_optimizer.state_dict()}
                if self.critic is not None
                else {}
            ),
        )
        save_checkpoint(self.run_dir / POLICY, self.model, **common)
        self.saved_update = self.update

    def restore(self) -> None:
        data = check_resumable(self.cfg, self.run_dir)
        self.model.load_state_dict(data["state_dict"])
        self.optimizer.load_state_dict(data["optimizer"])
        self.gen.set_state(data["torch_generator"])
        self.rng.bit_generator.state = data["rng"]
        engine = {k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in data["engine"].items()}
        self.obs, self.mask, self.to_play = self.engine.set_state(engine)
        self.pool.load(data["pool"], self.model.config)
        self.opponent = data["opponent"].numpy().copy()
        self.learner_seat = data["learner_seat"].numpy().copy()
        self.rounds = data["rounds"].numpy().copy()
        self.potential = data["potential"].numpy().copy()
        saved = data.get(
            "bot_states", data.get("plans", [])
        )  # older checkpoints name it "plans"
        self.bot_states = {int(p[0]): tuple(int(x) for x in p[1:]) for p in saved}
        if self.critic is not None:
            self.critic.load_state_dict(data["critic"])
            self.critic_optimizer.load_state_dict(data["critic_optimizer"])
        self.update, self.decisions, self.games = data["update"], data["decisions"], data["games"]
        self.saved_update = self.update
        self.last_eval = dict(data["last_eval"])


def check_resumable(cfg: Config, run_dir: Path) -> dict[str, Any]:
    """The run's ``checkpoint.pt``, checked (a ``CheckpointError``/``ValueError`` names the problem)."""
    data = load_checkpoint(Path(run_dir) / CHECKPOINT)
    if data.get("config") != cfg.to_dict():
        saved = data.get("config") if isinstance(data.get("config"), dict) else {}
        changed = sorted(k for k in cfg.to_dict() if saved.get(k) != getattr(cfg, k))
        raise ValueError(
            f"{Path(run_dir) / CHECKPOINT} was written with another config than {Path(run_dir) / 'config.json'} "
            f"(differs in {changed[:8]}): was config.json edited?"
        )
    return data


def train(
    cfg: Config, run_dir: Path, resume: bool = False, progress: bool = True, stop_after: int | None = None
) -> Trainer:
    """Train until ``cfg.total_decisions`` (or ``stop_after`` more updates, for tests)."""
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    run_dir = Path(run_dir)
    trainer = Trainer(cfg, run_dir)
    if resume:
        trainer.restore()
    else:
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.json").write_text(json.dumps(cfg.to_dict(), indent=2))
    for name in (CHECKPOINT, POLICY):
        remove_stale_temporaries(run_dir / name)  # left by a save that was killed midway
    writer = SummaryWriter(str(run_dir / "tb"))
    bar = tqdm(total=cfg.total_decisions, initial=min(trainer.decisions, cfg.total_decisions), unit="dec",
               disable=not progress, smoothing=0.1)  # fmt: skip
    updates_done = 0
    while trainer.decisions < cfg.total_decisions and (stop_after is None or updates_done < stop_after):
        start, before = time.perf_counter(), trainer.decisions
        buf = trainer.collect()
        try:
            stats = trainer.learn(buf)
        except TrainingDivergedError as e:
            bar.close()
            writer.close()
            kept = run_dir / CHECKPOINT
            raise TrainingDivergedError(
                f"{e}; stopped without saving it. The last good checkpoint is {kept}"
                + (f" (update {trainer.saved_update})" if kept.is_file() else " (none was saved yet)")
                + ": lower learning_rate / ent_coef, or check the config"
            ) from None
        trainer.update += 1
        updates_done += 1
        if trainer.update % cfg.snapshot_every == 0:
            trainer.pool.add(trainer.model)
        elapsed = time.perf_counter() - start
        stats["decisions_per_second"] = (trainer.decisions - before) / elapsed
        for key, value in stats.items():
            writer.add_scalar(f"train/{key}", value, trainer.decisions)
        finished = trainer.decisions >= cfg.total_decisions or updates_done == stop_after
        if (cfg.eval_every and trainer.update % cfg.eval_every == 0) or finished:
            for bot in cfg.eval_bots:
                trainer.last_eval[bot] = trainer.evaluate(bot, cfg.eval_games)
                writer.add_scalar(f"eval/win_rate_vs_{bot}", trainer.last_eval[bot], trainer.decisions)
        if trainer.update % cfg.checkpoint_every == 0 or finished:
            trainer.save()
        bar.update(trainer.decisions - before)
        bar.set_postfix(
            dps=f"{stats['decisions_per_second']:.0f}",
            ent=f"{stats['entropy']:.2f}",
            kl=f"{stats['approx_kl']:.3f}",
            **{f"vs_{k[:4]}": f"{v:.2f}" for k, v in trainer.last_eval.items()},
        )
    bar.close()
    writer.close()
    return trainer


def gae(
    buf: dict[str, np.ndarray], bootstrap: np.ndarray, gamma: float, lam: float
) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns ``[T, N]`` over each (env, seat) trajectory (module docstring).

    ``buf`` holds per engine step ``seat``, ``learner``, ``value``, ``reward`` (``[T, N, 2]``
    by seat) and ``done``; ``bootstrap[i, s]`` values seat ``s`` of env ``i`` after the last step.
    """
    t_steps, n = buf["seat"].shape
    idx = np.arange(n)
    next_value = bootstrap.astype(np.float32).copy()
    next_adv = np.zeros((n, 2), np.float32)
    pending = np.zeros((n, 2), np.float32)  # rewards waiting for the seat's previous decision
    alive = np.ones((n, 2), np.float32)  # 0 once the game ended after the seat's last decision
    adv = np.zeros((t_steps, n), np.float32)
    for t in reversed(range(t_steps)):
        done = buf["done"][t]
        # a game ended at this step: its final rewards reach the last decision of both seats
        next_value[done], next_adv[done], alive[done], pending[done] = 0.0, 0.0, 0.0, 0.0
        pending += buf["reward"][t]
        s, learner, value = buf["seat"][t], buf["learner"][t], buf["value"][t]
        c = alive[idx, s]
        delta = pending[idx, s] + gamma * next_value[idx, s] * c - value
        a = delta + gamma * lam * c * next_adv[idx, s]
        adv[t] = np.where(learner, a, 0.0)
        rows, seats = idx[learner], s[learner]
        next_value[rows, seats] = value[learner]
        next_adv[rows, seats] = a[learner]
        pending[rows, seats] = 0.0
        alive[rows, seats] = 1.0
    return adv, adv + buf["value"]
