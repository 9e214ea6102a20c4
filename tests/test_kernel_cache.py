"""The test set-up's guard against numba kernels cached from an older row or observation layout."""

from __future__ import annotations

from conftest import LAYOUT_SOURCES, purge_stale_kernels


def test_cached_kernels_go_when_a_layout_module_changes_and_only_then(tmp_path) -> None:
    for name in LAYOUT_SOURCES:
        (tmp_path / name).write_text(f"# {name}\nWIDTH = 119\n")
    kernels = [
        tmp_path / "__pycache__" / "engine.play-1.py311.nbi",
        tmp_path / "bots" / "__pycache__" / "enum.x.nbc",
    ]

    def cache() -> None:
        for path in kernels:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"machine code")

    cache()
    assert purge_stale_kernels(tmp_path)  # no stamp yet: nothing says the cache is current
    assert not any(path.exists() for path in kernels)
    cache()
    assert not purge_stale_kernels(tmp_path) and all(path.exists() for path in kernels)
    (tmp_path / "bots" / "enum.py").write_text("# a bot's own edit: numba sees that one itself\n")
    assert not purge_stale_kernels(tmp_path) and all(path.exists() for path in kernels)
    (tmp_path / "engine.py").write_text("# engine.py\nWIDTH = 120\n")  # the row layout changed
    assert purge_stale_kernels(tmp_path) and not any(path.exists() for path in kernels)
