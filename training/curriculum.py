"""A curriculum: training stages in one YAML file, each stage starting from the previous one's policy.

    run_name: ppo_selfplay          # stage folders: runs_dir/run_name/<stage name>/
    base: {...}                     # a Config (training/config.py), shared by every stage
    stages:
      - {name: stage1, updates: 890}                        # base as it is, stopped after 890 updates
      - {name: stage2, updates: 710, learning_rate: 5e-4}   # base with these keys replaced

Each stage is ``base`` with that stage's keys replaced (not the previous
stage's), plus ``updates``: stop after this many updates of the stage (else
it runs to its ``total_decisions``, which also sets the learning-rate
annealing).  Stage 2 and later start from the previous stage's ``policy.pt``
(``init_from``, set here; a stage may not set it).  ``key=value`` overrides
apply to every stage, except ``run_name=NAME``: it names the curriculum's
folder.  Running the same command again continues where it stopped: finished
stages are skipped, an interrupted one is resumed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hanamikoji_env.nn import load_checkpoint
from hanamikoji_env.training.config import MAX_ITEMS, Config, parse_overrides, read_yaml, short
from hanamikoji_env.training.run_folder import CHECKPOINT, POLICY


@dataclass(frozen=True)
class Stage:
    name: str
    cfg: Config
    updates: int | None
    """Stop after this many updates of the stage (None: at ``cfg.total_decisions``)."""

    @property
    def run_dir(self) -> Path:
        return Path(self.cfg.runs_dir) / self.cfg.run_name


def is_curriculum(data: dict[str, Any]) -> bool:
    return "stages" in data


def load_curriculum(path: str | Path, overrides: list[str] | None = None) -> list[Stage]:
    """The stages of a curriculum file, each a checked Config; ``ValueError`` names what is wrong."""
    data, source = read_yaml(path)
    unknown = sorted(set(data) - {"run_name", "base", "stages"})
    if unknown or not isinstance(data.get("base"), dict) or not isinstance(data.get("stages"), list):
        raise ValueError(
            f"{source}: a curriculum has run_name, base (a mapping) and stages (a list); got {short(unknown)}"
        )
    stages_data = data["stages"]
    if not 1 <= len(stages_data) <= MAX_ITEMS:
        raise ValueError(f"{source}: stages must hold 1..{MAX_ITEMS} stages, got {len(stages_data)}")
    extra = parse_overrides(overrides or [])
    run_name = extra.pop("run_name", data.get("run_name", Path(path).stem))  # names the stages' folder
    if not isinstance(run_name, str) or not run_name or "/" in run_name:
        raise ValueError(f"{source}: run_name must be a plain folder name, got {short(run_name)}")
    stages: list[Stage] = []
    for k, raw in enumerate(stages_data):
        where = f"{source}: stage {k + 1}"
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            raise ValueError(f"{where} must be a mapping with a name")
        own = {key: value for key, value in raw.items() if key not in ("name", "updates")}
        if "run_name" in own or ("init_from" in own and k > 0):
            raise ValueError(f"{where}: run_name and init_from are set by the curriculum")
        updates = raw.get("updates")
        if updates is not None and (type(updates) is not int or not 1 <= updates <= 10**7):
            raise ValueError(f"{where}: updates must be an int in [1, 10000000], got {short(updates)}")
        if any(raw["name"] == s.name for s in stages) or not raw["name"] or "/" in raw["name"]:
            raise ValueError(f"{where}: name {short(raw['name'])} must be a new plain folder name")
        merged = {**data["base"], **own, **extra}
        merged["runs_dir"] = str(Path(merged.get("runs_dir", "runs")) / str(run_name))
        merged["run_name"] = raw["name"]
        if stages:
            merged["init_from"] = str(stages[-1].run_dir / POLICY)
        stages.append(Stage(raw["name"], Config.from_dict(merged, where, check_files=not stages), updates))
    return stages


def stage_progress(stage: Stage) -> tuple[bool, int]:
    """``(finished, updates done)`` of a stage's run folder (``(False, 0)`` if it has not started)."""
    path = stage.run_dir / CHECKPOINT
    if not path.is_file():
        return False, 0
    data = load_checkpoint(path)
    done = data["update"]
    finished = data["decisions"] >= stage.cfg.total_decisions or (
        stage.updates is not None and done >= stage.updates
    )
    return finished, done


def run_curriculum(stages: list[Stage], progress: bool = True) -> None:
    """Train every stage in order, skipping finished ones and resuming an interrupted one."""
    from hanamikoji_env.training.ppo import train

    for k, stage in enumerate(stages):
        finished, done = stage_progress(stage)
        if finished:
            print(f"stage {k + 1}/{len(stages)} {stage.name}: already finished in {stage.run_dir}")
            continue
        print(
            f"stage {k + 1}/{len(stages)} {stage.name}: {'resuming' if done else 'training'} in {stage.run_dir}"
        )
        if not done:
            stage.run_dir.mkdir(parents=True, exist_ok=True)
        left = None if stage.updates is None else stage.updates - done
        train(stage.cfg, stage.run_dir, resume=bool(done), progress=progress, stop_after=left)
