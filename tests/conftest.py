"""Shared test set-up."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

# The commands and scripts the tests start run torch on one thread, as the tests do (below): the
# two xdist workers already fill the cores, and more threads than cores wait on each other, the
# more so on a busy machine.  (numba's thread count is set in-process only: changing its
# environment after numba is imported breaks its next parallel kernel.)
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numba
import pytest
import torch

PACKAGE = Path(__file__).resolve().parents[1] / "hanamikoji_env"
LAYOUT_SOURCES = ("engine.py", "observation.py", "actions.py", "rules.py")
"""The modules whose constants (row columns, observation offsets, card and action ids) the
compiled kernels everywhere else freeze in at compile time."""


def purge_stale_kernels(package: Path = PACKAGE) -> bool:
    """numba checks a cached kernel against its own file only: after an edit of the row or
    observation layout, a kernel cached from another module would read the old columns (wrong
    values, or a segfault).  So when a layout module changed since the last run, every cached
    kernel goes; True if any did.  (A clean clone or an installed wheel has none to purge.)"""
    digest = hashlib.sha256(b"".join((package / name).read_bytes() for name in LAYOUT_SOURCES)).hexdigest()
    stamp = package / "__pycache__" / "layout.sha256"
    if stamp.is_file() and stamp.read_text() == digest:
        return False
    cached = [*package.rglob("*.nbi"), *package.rglob("*.nbc")]
    for path in cached:
        path.unlink(missing_ok=True)
    stamp.parent.mkdir(exist_ok=True)
    stamp.write_text(digest)
    return bool(cached)


purge_stale_kernels()


def pytest_configure(config: pytest.Config) -> None:
    """Compile, once and before any test, the kernels whose first compilation is announced
    (:mod:`hanamikoji_env.first_run`), so that no test that checks a command's output meets the
    announcement: under ``pytest -n`` the workers start after this, and load them from the cache."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has compiled them
        return
    from hanamikoji_env.first_run import warm_up

    warm_up(["heuristic", "search", "psearch:ckpt=pretrained"])


DEFAULT_SLOW_SECONDS = 10.0
"""What a ``slow`` test without a figure of its own is taken to cost."""


def cost(item: pytest.Item) -> float:
    """A test's rough seconds on one idle core: ``@pytest.mark.slow(N)`` says N, a bare ``slow``
    :data:`DEFAULT_SLOW_SECONDS`, any other 0."""
    mark = item.get_closest_marker("slow")
    if mark is None:
        return 0.0
    return float(mark.args[0]) if mark.args else DEFAULT_SLOW_SECONDS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The costliest first: the modules by their costliest test, and within a module its tests
    by cost (file order between equals).  Under ``pytest -n`` each worker takes the next test as
    it finishes one (``--maxschedchunk=1``, pyproject.toml), so the long tests start at once and
    the quick ones fill in beside them: no long test starts last and keeps the suite waiting on
    one core (it ended 100 s after the other core went idle).  A module's tests stay together,
    so its module-scoped fixtures (a Ray cluster, a built wheel) are set up once a worker."""
    by_module: dict[str, list[pytest.Item]] = {}
    for item in items:
        by_module.setdefault(item.module.__name__ if item.module else item.nodeid, []).append(item)
    modules = sorted(by_module.values(), key=lambda tests: max(map(cost, tests)), reverse=True)
    items[:] = [item for tests in modules for item in sorted(tests, key=cost, reverse=True)]
    for item in items:  # the tests of one costly module-scoped fixture on one worker: it is made once
        shared = next((name for name in SHARED_FIXTURES if name in getattr(item, "fixturenames", ())), None)
        if shared is not None:
            item.add_marker(pytest.mark.xdist_group(shared))


SHARED_FIXTURES = ("installed", "local_ray")
"""Module-scoped fixtures that cost tens of seconds (a wheel built, installed and its kernels
compiled; a Ray cluster): under ``pytest -n`` with ``--dist loadgroup`` (pyproject.toml) the
tests using one run on one worker, so it is made once, not once a worker."""


@pytest.fixture(scope="session", autouse=True)
def sb3_folders_in_pytests_temp(tmp_path_factory: pytest.TempPathFactory) -> None:
    """SB3 makes an empty ``/tmp/SB3-<time>`` folder for every ``learn()`` that logs nowhere
    unless ``$SB3_LOGDIR`` names one: the suite's (and its scripts') go under pytest's own
    temporary folder, which pytest prunes, instead of piling up in ``/tmp``."""
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3"))


@pytest.fixture(autouse=True)
def one_thread():
    """The tests' networks and batches are small: one thread each for torch and the bots' numba
    kernels is fastest and immune to a busy machine (a test of several threads sets them)."""
    before = torch.get_num_threads(), numba.get_num_threads()
    torch.set_num_threads(1)
    numba.set_num_threads(1)
    yield
    torch.set_num_threads(before[0])
    numba.set_num_threads(before[1])
