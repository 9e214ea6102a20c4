"""Policy network checkpoints: safe loading, clear errors, and PolicyBot."""

from __future__ import annotations

import pickle
import re
import time

import numpy as np
import pytest
import torch
from helpers import BOMB_REFUSED, HASH_BOMBS, hash_bomb_pickle, legacy_with_object, peak_growth

from hanamikoji_env import env
from hanamikoji_env.bots.policy import PolicyBot
from hanamikoji_env.nn import (
    FORMAT,
    CheckpointError,
    PolicyNet,
    load_checkpoint,
    load_policy,
    sample_actions,
    save_checkpoint,
)


def test_sample_actions_picks_by_inverse_cdf_and_never_a_zero_probability_action() -> None:
    probs = np.array([[0.0, 0.25, 0.0, 0.75, 0.0], [0.5, 0.0, 0.0, 0.0, 0.5 - 1e-15]])
    edge = np.nextafter(1.0, 0.0)  # the largest uniform: a row summing to 1 - eps must not run past
    u = np.array([0.0, 0.2499, 0.25, 0.9, edge])
    picked = [sample_actions(probs[r : r + 1], u[i : i + 1])[0] for r in (0, 1) for i in range(5)]
    assert picked == [1, 1, 3, 3, 3, 0, 0, 0, 4, 4]
    rng = np.random.default_rng(0)
    counts = np.bincount(sample_actions(np.repeat(probs[:1], 20_000, 0), rng.random(20_000)), minlength=5)
    assert counts[[0, 2, 4]].sum() == 0 and abs(counts[3] / 20_000 - 0.75) < 0.02


@pytest.fixture
def ckpt(tmp_path):
    torch.manual_seed(0)
    path = tmp_path / "policy.pt"
    save_checkpoint(path, PolicyNet(hidden=16, layers=2), steps=123)
    return path


def test_round_trip(ckpt) -> None:
    data = load_checkpoint(ckpt)
    assert data["format"] == FORMAT and data["steps"] == 123
    model = load_policy(ckpt)
    ref = PolicyNet(hidden=16, layers=2)
    ref.load_state_dict(data["state_dict"])
    x = torch.rand(4, 109) * 3
    mask = torch.ones(4, 23, dtype=torch.int8)
    mask[:, 5] = 0
    logits, value = model(x, mask)
    assert torch.equal(logits, ref(x, mask)[0]) and value.shape == (4,)
    assert (logits[:, 5] == -1e9).all()
    assert [p.name for p in ckpt.parent.iterdir()] == ["policy.pt"]  # no temporary file left


def rewrite(path, **changes) -> None:
    data = torch.load(path, weights_only=True)
    data.update(changes)
    torch.save(data, path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "something/9"}, "not a hanamikoji-env policy checkpoint"),
        ({"observation_version": 7}, "reads observation version 7; this hanamikoji-env .* knows versions"),
        ({"observation_version": True}, "reads observation version True"),
        ({"layout_hash": "0" * 16}, "another layout of observation version 1"),
        ({"model_config": {"hidden": 16}}, "bad model_config"),
        (
            {"model_config": {"hidden": 32, "layers": 2}},
            r"does not fit a network .*trunk.0.bias \(16,\) \(expected \(32,\)\)",
        ),
        ({"model_config": {"hidden": 10**8, "layers": 2}}, "bad model_config .*must be ints in"),
        ({"model_config": {"hidden": True, "layers": 2}}, "bad model_config"),
        ({"model_config": {"hidden": 16.0, "layers": 2}}, "bad model_config"),
        ({"model_config": {"hidden": 16, "layers": 0}}, "bad model_config"),
        ({"model_config": {"hidden": 16, "layers": 99}}, "bad model_config"),
        ({"model_config": "big"}, "bad model_config"),
        ({"state_dict": [1, 2]}, "no state_dict"),
    ],
)
def test_mismatched_checkpoints(ckpt, change, message, monkeypatch) -> None:
    rewrite(ckpt, **change)
    # every bad checkpoint is refused before a network is built (no 43 GB allocation)
    monkeypatch.setattr("hanamikoji_env.nn.PolicyNet", None)
    with pytest.raises(CheckpointError, match=message):
        load_policy(ckpt)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda sd: sd.pop("value.bias"), r"value.bias missing \(expected \(1,\)\)"),
        (lambda sd: sd.update(extra=torch.zeros(3)), r"extra \(3,\) \(expected none\)"),
        (lambda sd: sd.update({"policy.bias": 7}), r"policy.bias int \(expected \(23,\)\)"),
        (lambda sd: sd.update({"trunk.2.weight": torch.zeros(16, 15)}), r"trunk.2.weight \(16, 15\)"),
        # keys of mixed types could not even be sorted for the message: named by type, no traceback
        (
            lambda sd: sd.update({5: sd.pop("value.bias")}),
            r"state_dict keys must be parameter names, got a int",
        ),
    ],
)
def test_state_dicts_that_do_not_fit_are_checkpoint_errors(ckpt, edit, message) -> None:
    data = torch.load(ckpt, weights_only=True)
    edit(data["state_dict"])
    torch.save(data, ckpt)
    with pytest.raises(CheckpointError, match=message):
        load_policy(ckpt)


def test_unreadable_files(ckpt, tmp_path) -> None:
    data = ckpt.read_bytes()
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(data[: len(data) // 2])
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    listed = tmp_path / "list.pt"
    torch.save([1, 2, 3], listed)
    for path, message in [
        (truncated, "not a readable checkpoint"),
        (
            text,
            r"is not a PyTorch checkpoint: torch.save writes a zip archive \(or a pickle\), and this file starts with b'hell'",
        ),
        (listed, "not a hanamikoji-env policy checkpoint"),
        (tmp_path / "missing.pt", "does not exist"),
        (tmp_path, "not a file"),
    ]:
        with pytest.raises(CheckpointError, match=message):
            load_checkpoint(path)


class Evil:
    def __reduce__(self):
        return (print, ("code ran while loading",))


def test_pickles_with_code_are_refused(tmp_path, capsys) -> None:
    path = tmp_path / "evil.pt"
    with open(path, "wb") as f:
        pickle.dump({"format": FORMAT, "x": Evil()}, f)
    with pytest.raises(CheckpointError, match="not a readable checkpoint"):
        load_checkpoint(path)
    assert "code ran" not in capsys.readouterr().out


@pytest.mark.parametrize("greedy", [True, False])
def test_policy_bot_plays_legal_moves_deterministically(ckpt, greedy) -> None:
    def game(seed: int) -> list:
        e = env()
        e.reset(seed=0)
        bot = PolicyBot(ckpt, seed=seed, greedy=greedy)
        out = []
        for _agent in e.agent_iter():
            obs, _, term, _, _ = e.last()
            a = None if term else bot.act(obs)
            assert a is None or obs["action_mask"][a]
            out.append(a)
            e.step(a)
        return out

    assert game(1) == game(1)
    if not greedy:
        assert game(1) != game(2)


def test_policy_bot_batch_matches_single(ckpt) -> None:
    from hanamikoji_env.vector import BatchEngine

    v = BatchEngine(32, seed=0)
    obs, mask, _ = v.reset()
    bot = PolicyBot(ckpt)
    batch = bot.act_batch(obs, mask)
    single = [bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, mask, strict=True)]
    assert batch.tolist() == single and mask[np.arange(32), batch].all()


@pytest.mark.slow
def test_the_shipped_checkpoint_loads_and_beats_random_and_the_heuristic() -> None:
    """checkpoints/ppo_selfplay.pt matches this env version and observation layout, and plays well:
    short checks of the benchmark's 0.97 and 0.86 (2000 games) with clear margins."""
    from hanamikoji_env.bots.spec import parse_player
    from hanamikoji_env.tournament import run_tournament

    players = [parse_player(p) for p in ("ckpt:checkpoints/ppo_selfplay.pt", "random", "heuristic")]
    results = run_tournament(players, 200, seed=6, workers=2, progress=False, first_only=True)
    by_opponent = {pair["b"]: pair for pair in results["pairs"]}
    assert by_opponent["random"]["ci95"][0] > 0.85, by_opponent
    assert by_opponent["heuristic"]["ci95"][0] > 0.7, by_opponent


@pytest.mark.slow  # writing the 2 GiB bomb (compressed) takes a few seconds
def test_a_checkpoint_that_would_unpack_to_gigabytes_is_refused_unread(ckpt, tmp_path) -> None:
    """A small file whose compressed extra entry inflates to 2 GiB: refused from the zip's directory,
    before torch reads it (the process's memory never grows by the bomb)."""
    import zipfile

    bomb = tmp_path / "bomb.pt"
    with zipfile.ZipFile(ckpt) as src, zipfile.ZipFile(bomb, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        prefix = src.namelist()[0].split("/")[0]
        entry = zipfile.ZipInfo(f"{prefix}/data/999")
        entry.compress_type = zipfile.ZIP_DEFLATED
        with dst.open(entry, "w", force_zip64=True) as big:
            chunk = bytes(2**24)
            for _ in range(128):  # 2 GiB of zeros, about 2 MB compressed
                big.write(chunk)
    assert bomb.stat().st_size < 20 * 2**20
    grown, error = peak_growth(
        "from hanamikoji_env.nn import load_checkpoint", f"load_checkpoint({str(bomb)!r})"
    )
    assert error is not None and re.search(
        r"CheckpointError: .*unpacks to 2,048 MiB, more than a checkpoint may \(512 MiB\): refused", error
    ), error
    assert grown < 200, grown  # MiB


def test_a_legacy_format_file_is_bounded_by_its_own_size(tmp_path) -> None:
    """Not a zip (torch's legacy format, or anything): a 4 KB sparse file of 1.6 GB used to be read
    whole by torch.load; it is refused by its size, unread."""
    import pickle

    sparse = tmp_path / "sparse.pt"
    with sparse.open("wb") as f:
        f.write(pickle.dumps({"format": FORMAT}))
        f.truncate(1600 * 2**20)
    grown, error = peak_growth(
        "from hanamikoji_env.nn import load_checkpoint", f"load_checkpoint({str(sparse)!r})"
    )
    assert (
        error is not None and "is 1,600 MiB, more than a checkpoint may be (512 MiB): refused unread" in error
    )
    assert grown < 50, grown  # MiB


def test_a_crafted_model_config_is_refused_at_once_whatever_its_depth(ckpt) -> None:
    """A model_config of tuples nested 60 deep, each level twice the one below (a few hundred bytes
    in the file): its repr would walk 2**60 nodes; the message is built from a bounded look."""
    setup = (
        "import torch; from hanamikoji_env.nn import load_checkpoint\n"
        f"data = torch.load({str(ckpt)!r}, weights_only=True)\n"
        "x = ()\nfor _ in range(60): x = (x, x)\n"
        f"data['model_config'] = {{'hidden': x, 'layers': 2}}; torch.save(data, {str(ckpt)!r})"
    )
    timed = (  # the refusal's own time, carried in its message
        "import time\nstart = time.perf_counter()\ntry:\n"
        f"    load_checkpoint({str(ckpt)!r})\n"
        "except Exception as e:\n    raise type(e)(f'{e} [{time.perf_counter() - start:.3f} s]') from None"
    )
    grown, error = peak_growth(setup, timed)
    assert error is not None and re.search(BOMB_REFUSED, error) and len(error) < 400, error
    assert float(re.search(r"\[([\d.]+) s\]$", error).group(1)) < 2.0, error
    assert grown < 100, grown  # MiB


def test_refused_checkpoints_say_so_in_one_line(tmp_path) -> None:
    path = tmp_path / "evil.pt"
    torch.save({"format": FORMAT, "x": Evil()}, path)
    with pytest.raises(CheckpointError) as error:
        load_checkpoint(path)
    message = str(error.value)
    assert "\n" not in message and "need code to load, which is refused" in message
    assert "weights_only=False" not in message


def test_tensors_declared_bigger_than_the_bytes_in_the_file_are_refused(tmp_path) -> None:
    """Zero-stride views of one number make a few KB of file declare a network of any size; each
    tensor must be stored whole."""
    path = tmp_path / "hollow.pt"
    save_checkpoint(path, PolicyNet(hidden=64, layers=2))
    data = torch.load(path, weights_only=True)
    data["state_dict"] = {k: torch.zeros(1).expand(v.shape) for k, v in data["state_dict"].items()}
    torch.save(data, path)
    assert path.stat().st_size < 8192
    with pytest.raises(CheckpointError, match=r"tensor scale is not stored whole in the file"):
        load_checkpoint(path)


@pytest.mark.parametrize(("width", "depth"), HASH_BOMBS)
def test_a_dict_key_that_would_take_hours_to_hash_is_refused_before_torch_reads_it(
    ckpt, tmp_path, width, depth
) -> None:
    """A dict keyed by tuples of one shared child, nested: a few hundred bytes of pickle (written
    by hand: Python itself would hash the key for ever to build it) that ``torch.load`` would hash
    for ``width ** depth`` steps, in C code that no signal interrupts.  Under the depth cap too
    (3 wide, 23 deep; 40 by 8): the walk counts the work, shared children each time they are used."""
    import zipfile

    stream = hash_bomb_pickle(
        width, depth
    )  # (by hand: torch.load of the 2-by-60 was still hashing after 15 s)
    crafted = tmp_path / "crafted.pt"
    with zipfile.ZipFile(ckpt) as src, zipfile.ZipFile(crafted, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, stream if info.filename.endswith("/data.pkl") else src.read(info))
    assert crafted.stat().st_size < 16_384  # the tiny network's weights and the crafted pickle
    assert_refused_at_once(
        f"load_checkpoint({str(crafted)!r})", "from hanamikoji_env.nn import load_checkpoint"
    )


def assert_refused_at_once(call: str, setup: str) -> None:
    """``call`` in a process of its own refuses a hash bomb in under 2 s, growing under 100 MiB."""
    timed = (
        "import time\nstart = time.perf_counter()\ntry:\n"
        f"    {call}\n"
        "except Exception as e:\n    raise type(e)(f'{e} [{time.perf_counter() - start:.3f} s]') from None"
    )
    grown, error = peak_growth(setup, timed)
    assert error is not None and re.search(BOMB_REFUSED, error), error
    assert float(re.search(r"\[([\d.]+) s\]$", error).group(1)) < 2.0, error
    assert grown < 100, grown  # MiB


def test_an_archive_holding_its_pickle_twice_is_refused(ckpt, tmp_path) -> None:
    """A zip with two ``data.pkl`` entries under one name: the check read one, torch.load the
    other.  Any name twice, or a second data.pkl anywhere, is refused before either is read."""
    import warnings
    import zipfile

    with zipfile.ZipFile(ckpt) as src:
        entries = [(info.filename, src.read(info)) for info in src.infolist()]
    first = entries[0][0]
    for extra in (first, first.split("/")[0] + "/data.pkl", "other/data.pkl"):
        crafted = tmp_path / "twice.pt"
        with zipfile.ZipFile(crafted, "w") as dst, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile's own "Duplicate name" warning
            for name, data in entries:
                dst.writestr(name, data)
            dst.writestr(extra, hash_bomb_pickle(3, 23))
        with pytest.raises(
            CheckpointError, match=r"an entry name twice|holds 'other/data.pkl', outside the folder"
        ):
            load_checkpoint(crafted)


@pytest.mark.parametrize("extra", ["notes.txt", "archive2/data/0"])
def test_an_archive_entry_torch_would_never_read_is_refused(ckpt, tmp_path, extra) -> None:
    """torch reads only its first entry's folder; anything beside it could only be there to make
    the check and the load see different files."""
    import zipfile

    crafted = tmp_path / "extra.pt"
    with zipfile.ZipFile(ckpt) as src, zipfile.ZipFile(crafted, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        dst.writestr(extra, b"x")
        folder = src.namelist()[0].split("/")[0]
    with pytest.raises(
        CheckpointError, match=rf"holds '{extra}', outside the folder '{folder}'/ torch reads"
    ):
        load_checkpoint(crafted)


def test_a_legacy_format_checkpoint_is_walked_too_and_a_hash_bomb_in_it_refused(ckpt, tmp_path) -> None:
    """torch.save's non-zip format: 452 bytes of it once hung every loader (the walk skipped
    files that are not zips).  A real checkpoint in that format still loads."""
    legacy = tmp_path / "legacy.pt"
    torch.save(torch.load(ckpt, weights_only=True), legacy, _use_new_zipfile_serialization=False)
    assert load_checkpoint(legacy)["model_config"] == load_checkpoint(ckpt)["model_config"]
    bomb = tmp_path / "bomb.pt"
    legacy_with_object(bomb, hash_bomb_pickle(3, 23))  # under the depth cap
    assert bomb.stat().st_size < 1024
    assert_refused_at_once(f"load_checkpoint({str(bomb)!r})", "from hanamikoji_env.nn import load_checkpoint")


def test_error_excerpts_of_crafted_values_take_no_time() -> None:
    """What a loader's message shows of an untrusted value: a bounded look (a tuple nested 60 deep
    whose levels share one child has 2**60 leaves; its repr would never end)."""
    from hanamikoji_env.excerpt import short

    x: tuple = ()
    for _ in range(60):
        x = (x, x)
    start = time.perf_counter()
    shown = [
        short(x),
        short({"hidden": x, "layers": 2}),
        short([x] * 10**6),
        short({1, 2}),
        short("y" * 10**7),
    ]
    assert time.perf_counter() - start < 0.1
    assert all(len(text) <= 80 for text in shown), shown
    assert shown[1].startswith("{'hidden': ((") and shown[4].startswith("'yyy")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.fill_(float("nan")), r"tensor trunk.0.weight holds NaN or infinite values"),
        (lambda t: t.fill_(float("inf")), r"tensor trunk.0.weight holds NaN or infinite values"),
        (
            lambda t: t.to(torch.float16),
            r"tensor trunk.0.weight is torch.float16; a policy's weights are float32",
        ),
        (lambda t: t.to(torch.float64), r"tensor trunk.0.weight is torch.float64"),
        (lambda t: t.to(torch.int8), r"tensor trunk.0.weight is torch.int8"),
        (lambda t: t.to(torch.bool), r"tensor trunk.0.weight is torch.bool"),
        (lambda t: t.to(torch.complex64), r"tensor trunk.0.weight is torch.complex64"),
    ],
)
def test_weights_that_are_not_finite_float32_are_refused_naming_the_tensor(tmp_path, edit, message) -> None:
    """A NaN checkpoint once aborted a tournament and played the first legal move under ckpt:;
    other dtypes were cast silently."""
    path = tmp_path / "bad.pt"
    save_checkpoint(path, PolicyNet(hidden=16, layers=1))
    data = torch.load(path, weights_only=True)
    data["state_dict"]["trunk.0.weight"] = edit(data["state_dict"]["trunk.0.weight"].clone())
    torch.save(data, path)
    with pytest.raises(CheckpointError, match=message) as caught:
        load_checkpoint(path)
    assert "\n" not in str(caught.value)
