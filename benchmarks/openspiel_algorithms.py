"""How far OpenSpiel's algorithms get on ``python_hanamikoji`` in a fixed time, beside Leduc poker.

Each algorithm runs in its own process for ``--seconds`` (default 60) on the
game (``python_hanamikoji``, its default ``round_limit`` of 12) and, in the same
run, on OpenSpiel's C++ ``leduc_poker`` as the peer; the process is killed when
its time is up, so an algorithm that cannot finish one unit (a CFR tree walk,
an iteration) reports 0.  Units:

- ``random``: whole games of uniform random play (``rl_environment``);
- ``mcts``, ``ismcts``: decisions of OpenSpiel's MCTS / ISMCTS bots (100
  simulations each, random rollouts), from random positions;
- ``os-mccfr``, ``es-mccfr``: outcome- and external-sampling MCCFR iterations;
- ``cfr``: tabular CFR iterations (its constructor first walks the whole tree);
- ``dqn``, ``nfsp``: training episodes of the PyTorch agents on
  ``rl_environment`` (observation tensors: the game has no information-state
  tensor), both players learning.

First it times ``information_state_string`` (what CFR-family algorithms key
their tables by) against ``observation_string`` of the same states, and Leduc's;
then it counts how often outcome-sampling MCCFR's table meets an information
state again (``--revisit-iterations``, default 1500): a table that only ever
grows new entries learns nothing it can reuse.

Usage: ``python benchmarks/openspiel_algorithms.py [--seconds 60] [--only mcts,cfr] [--revisit-iterations 1500]``
(``openspiel`` extra).  Prints a table and the ratio game / Leduc per algorithm.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import time
from collections.abc import Callable

import numpy as np

GAMES = ("python_hanamikoji", "leduc_poker")


def _load(name: str):
    import pyspiel

    import hanamikoji_env.openspiel  # noqa: F401 - registers python_hanamikoji

    return pyspiel.load_game(name)


def _random_position(game, rng: np.random.Generator):
    state = game.new_initial_state()
    for _ in range(int(rng.integers(0, 30))):
        if state.is_terminal():
            state = game.new_initial_state()
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    while state.is_chance_node() or state.is_terminal():
        if state.is_terminal():
            state = game.new_initial_state()
            continue
        outcomes, probs = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(int(rng.choice(outcomes, p=probs)))
    return state


def _random_games(game, count) -> None:
    from open_spiel.python import rl_environment

    env = rl_environment.Environment(game)
    rng = np.random.default_rng(0)
    while True:
        step = env.reset()
        while not step.last():
            player = step.observations["current_player"]
            step = env.step([int(rng.choice(step.observations["legal_actions"][player]))])
        count.value += 1


def _search(kind: str) -> Callable:
    def run(game, count) -> None:
        from open_spiel.python.algorithms import ismcts, mcts

        rng = np.random.default_rng(0)
        random_state = np.random.RandomState(0)
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state)
        if kind == "mcts":
            bot = mcts.MCTSBot(game, 2.0, 100, evaluator, solve=False, random_state=random_state)
        else:
            bot = ismcts.ISMCTSBot(game, evaluator, 2.0, 100, random_state=random_state)
        while True:
            bot.step(_random_position(game, rng))
            count.value += 1

    return run


def _solver(make: Callable) -> Callable:
    def run(game, count) -> None:
        solver = make(game)
        while True:
            if hasattr(solver, "iteration"):
                solver.iteration()
            else:
                solver.evaluate_and_update_policy()
            count.value += 1

    return run


def _os_mccfr(game):
    from open_spiel.python.algorithms import outcome_sampling_mccfr

    return outcome_sampling_mccfr.OutcomeSamplingSolver(game)


def _es_mccfr(game):
    from open_spiel.python.algorithms import external_sampling_mccfr

    return external_sampling_mccfr.ExternalSamplingSolver(game)


def _cfr(game):
    from open_spiel.python.algorithms import cfr

    return cfr.CFRSolver(game)


def _learners(kind: str) -> Callable:
    def run(game, count) -> None:
        import torch
        from open_spiel.python import rl_environment

        torch.set_num_threads(1)
        env = rl_environment.Environment(game)
        size = env.observation_spec()["info_state"][0]
        actions = env.action_spec()["num_actions"]
        if kind == "dqn":
            from open_spiel.python.pytorch import dqn

            agents = [dqn.DQN(p, size, actions, hidden_layers_sizes=[128]) for p in (0, 1)]
        else:
            from open_spiel.python.pytorch import nfsp

            agents = [nfsp.NFSP(p, size, actions, [128], 100_000, 0.1) for p in (0, 1)]
        while True:
            step = env.reset()
            while not step.last():
                player = step.observations["current_player"]
                step = env.step([agents[player].step(step).action])
            for agent in agents:
                agent.step(step)
            count.value += 1

    return run


ALGORITHMS: dict[str, tuple[str, Callable]] = {
    "random": ("games", _random_games),
    "mcts": ("decisions", _search("mcts")),
    "ismcts": ("decisions", _search("ismcts")),
    "os-mccfr": ("iterations", _solver(_os_mccfr)),
    "es-mccfr": ("iterations", _solver(_es_mccfr)),
    "cfr": ("iterations", _solver(_cfr)),
    "dqn": ("episodes", _learners("dqn")),
    "nfsp": ("episodes", _learners("nfsp")),
}


def _child(algorithm: str, game_name: str, count, ready) -> None:
    game = _load(game_name)
    ready.set()  # the clock starts once the game is loaded (imports and compilation excluded)
    ALGORITHMS[algorithm][1](game, count)


def measure(algorithm: str, game_name: str, seconds: float) -> tuple[int, str]:
    """Units the algorithm completes in ``seconds`` (its process killed then), and how it ended."""
    ctx = multiprocessing.get_context("spawn")
    count, ready = ctx.Value("q", 0), ctx.Event()
    process = ctx.Process(target=_child, args=(algorithm, game_name, count, ready), daemon=True)
    process.start()
    if not ready.wait(300):
        process.kill()
        raise RuntimeError(f"{game_name} did not load within 300 s")
    process.join(seconds)
    ended = "ran" if process.is_alive() else f"stopped (exit code {process.exitcode})"
    process.kill()
    process.join()
    return int(count.value), ended


def string_costs(game_name: str, positions: int = 2000) -> tuple[float, float]:
    """Microseconds per ``information_state_string`` and per ``observation_string`` call, over
    ``positions`` decision states of random games."""
    game, rng = _load(game_name), np.random.default_rng(0)
    states = []
    while len(states) < positions:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            else:
                states.append(state.clone())
                state.apply_action(int(rng.choice(state.legal_actions())))
    costs = []
    for method in ("information_state_string", "observation_string"):
        start = time.perf_counter()
        for state in states[:positions]:
            getattr(state, method)(state.current_player())
        costs.append((time.perf_counter() - start) / positions * 1e6)
    return costs[0], costs[1]


def mccfr_revisits(game_name: str, iterations: int) -> tuple[int, float, float]:
    """Outcome-sampling MCCFR for ``iterations``: its table lookups, the share of them that met an
    information state for the first time, and the peak memory growth in MB."""
    from open_spiel.python.algorithms import outcome_sampling_mccfr

    game = _load(game_name)
    np.random.seed(0)  # OpenSpiel's MCCFR samples with numpy's global generator
    solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    lookups = 0
    lookup = solver._lookup_infostate_info  # counted around, not changed

    def counted(key, num_legal_actions):
        nonlocal lookups
        lookups += 1
        return lookup(key, num_legal_actions)

    solver._lookup_infostate_info = counted
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(iterations):
        solver.iteration()
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    return lookups, len(solver._infostates) / max(lookups, 1), grown


def _revisits_child(game_name: str, iterations: int, queue) -> None:
    queue.put(mccfr_revisits(game_name, iterations))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=60.0, help="time per algorithm and game")
    p.add_argument("--only", default=",".join(ALGORITHMS), help="comma-separated algorithms")
    p.add_argument("--revisit-iterations", type=int, default=1500, help="MCCFR iterations for the revisits")
    args = p.parse_args()
    chosen = args.only.split(",")
    unknown = sorted(set(chosen) - set(ALGORITHMS))
    if unknown:
        p.error(f"unknown algorithms {unknown}; known: {list(ALGORITHMS)}")
    for game in GAMES:
        info, obs = string_costs(game)
        print(f"{game}: information_state_string {info:.1f} us, observation_string {obs:.1f} us a call")
    ctx = multiprocessing.get_context("spawn")
    for game in GAMES:  # each in a fresh process, so that the memory growth is this table's alone
        queue = ctx.Queue()
        process = ctx.Process(target=_revisits_child, args=(game, args.revisit_iterations, queue))
        process.start()
        lookups, new, grown = queue.get()
        process.join()
        print(f"{game}: outcome-sampling MCCFR, {args.revisit_iterations} iterations: {lookups:,} table "
              f"lookups, {new:.1%} of them new information states, peak memory +{grown:.0f} MB")  # fmt: skip
    print(f"{args.seconds:.0f} s per algorithm and game, one process each")
    print(f"| algorithm | unit | {GAMES[0]} | {GAMES[1]} | ratio |")
    print("|---|---|---|---|---|")
    for name in chosen:
        results = []
        for game in GAMES:
            done, ended = measure(name, game, args.seconds)
            note = "" if ended == "ran" else f" ({ended})"
            results.append((done, note))
        ratio = f"{results[0][0] / results[1][0]:.3g}" if results[1][0] else "-"
        cells = " | ".join(f"{done:,}{note}" for done, note in results)
        print(f"| {name} | {ALGORITHMS[name][0]} | {cells} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
