"""SB3Bot refuses SB3 zips whose pickled entries could run code."""

from __future__ import annotations

import json
import re
import zipfile

import pytest
from helpers import BOMB_REFUSED, hash_bomb_pickle, legacy_with_object, peak_growth

from hanamikoji_env.bots.sb3 import SB3Bot


def test_unknown_pickled_entries_are_refused(tmp_path) -> None:
    path = tmp_path / "evil.zip"
    data = {
        "policy_class": {":serialized:": "gAR9lC4="},
        "payload": {":type:": "x", ":serialized:": "gAR9lC4="},
    }
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps(data))
    with pytest.raises(ValueError, match=r"pickled entries \['payload'\] that could run code"):
        SB3Bot(path)


@pytest.mark.parametrize("content", [b"not a zip", None])
def test_not_an_sb3_zip(tmp_path, content) -> None:
    path = tmp_path / "x.zip"
    if content is None:
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("other", "x")
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match="not a Stable-Baselines3 zip"):
        SB3Bot(path)
    with pytest.raises(ValueError, match="does not exist"):
        SB3Bot(tmp_path / "missing.zip")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("net_arch", "message"),
    [
        ([25000, 25000], r"1,256,150,024 weights .* refused before building it"),
        ({"pi": [64], "vf": [10**6, 10**6]}, "want at most 16 layers of 1..65536 units"),
        ([64] * 40, "want at most 16 layers"),
        ("wide", "want at most 16 layers"),
    ],
)
def test_a_declared_network_too_large_is_refused_before_it_is_built(tmp_path, net_arch, message) -> None:
    """A 13 KB zip whose policy_kwargs ask for two 25,000-unit layers used to grow past 7 GB."""
    path = tmp_path / "wide.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps({"policy_kwargs": {"net_arch": net_arch}}))
    with pytest.raises(ValueError, match=message):
        SB3Bot(path)
    grown, error = peak_growth("from hanamikoji_env.bots.sb3 import SB3Bot", f"SB3Bot({str(path)!r})")
    assert error is not None and re.search(message, error), error
    assert grown < 100, grown  # MiB, in a process of its own


@pytest.mark.parametrize(
    ("sizes", "message"),
    [
        ({"n_steps": 10_000_000}, r"n_steps=10000000: want an int in \[1, 262,144\]"),
        (
            {"n_steps": 2048, "n_envs": 1000},
            r"rollout buffer of 2,048,000 rows .* refused before building it",
        ),
        ({"batch_size": -1}, r"batch_size=-1"),
        ({"n_envs": [2] * 10}, r"n_envs=list"),
        ({"n_epochs": 2.5}, r"n_epochs=float"),
    ],
)
def test_buffer_sizes_are_bounded_before_sb3_allocates_them(tmp_path, sizes, message) -> None:
    """``n_steps=10,000,000`` in a few bytes of JSON used to allocate 1.35 GB at load."""
    path = tmp_path / "long.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps({"policy_kwargs": {"net_arch": [64]}, **sizes}))
    with pytest.raises(ValueError, match=message):
        SB3Bot(path)


@pytest.mark.slow
def test_a_zip_that_would_unpack_to_gigabytes_is_refused_unread(tmp_path) -> None:
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("data", json.dumps({}))
        with z.open("policy.pth", "w", force_zip64=True) as big:
            for _ in range(20):
                big.write(bytes(2**24))  # 320 MiB of zeros, a few hundred KB on disk
    with pytest.raises(
        ValueError,
        match=r"unpacks to 320 MiB, more than a Stable-Baselines3 model may \(256 MiB\): refused unread",
    ):
        SB3Bot(path)


@pytest.mark.parametrize("form", ["zip", "legacy"])
def test_a_hash_bomb_in_the_policy_pth_inside_the_zip_is_refused(tmp_path, form) -> None:
    """The SB3 zip's own ``.pth`` files go through the checkpoints' gate: SB3Bot checked the
    archive's ``data`` but torch.load of ``policy.pth`` hashed for ever."""
    inner = tmp_path / "policy.pth"
    if form == "legacy":
        legacy_with_object(inner, hash_bomb_pickle())
    else:  # 40 wide, 8 deep: under the depth cap
        with zipfile.ZipFile(inner, "w") as z:
            z.writestr("policy/data.pkl", hash_bomb_pickle(40, 8))
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps({}))
        z.writestr("policy.pth", inner.read_bytes())
    grown, error = peak_growth("from hanamikoji_env.bots.sb3 import SB3Bot", f"SB3Bot({str(path)!r})")
    assert error is not None and re.search("policy.pth: its object tree " + BOMB_REFUSED, error), error
    assert grown < 100, grown


def test_a_zip_trained_on_version_2_plays_as_version_2_beside_version_1_bots(tmp_path) -> None:
    """The zip's declared observation shape says its version; the tournament hands it that one."""
    from sb3_contrib import MaskablePPO

    from hanamikoji_env.bots.heuristic import HeuristicBot
    from hanamikoji_env.games import play_game
    from hanamikoji_env.wrappers import SingleAgentEnv

    env = SingleAgentEnv(opponent="heuristic", observation_version=2)
    assert env.observation_space.shape == (669,)
    MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, seed=0).save(tmp_path / "v2.zip")
    bot = SB3Bot(tmp_path / "v2.zip")
    assert bot.observation_version == 2
    reward, rounds = play_game((bot, HeuristicBot()), deal_seed=1, round_limit=None)
    assert reward in (-1.0, 0.0, 1.0) and rounds >= 1


def test_a_zip_of_an_unknown_observation_shape_is_refused(tmp_path) -> None:
    path = tmp_path / "odd.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps({"observation_space": {":type:": "Box", "_shape": [110]}}))
    with pytest.raises(
        ValueError, match=r"shape \[110\]; known are version 1: \(109,\), version 2: \(669,\)"
    ):
        SB3Bot(path)


def test_an_sb3_zip_holding_an_entry_twice_is_refused(tmp_path) -> None:
    """Two ``policy.pth`` entries: the check would read one, SB3's loader the other."""
    import warnings

    path = tmp_path / "twice.zip"
    with zipfile.ZipFile(path, "w") as z, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z.writestr("data", json.dumps({}))
        z.writestr("policy.pth", b"benign")
        z.writestr("policy.pth", hash_bomb_pickle(3, 23))
    with pytest.raises(ValueError, match="holds an entry name twice"):
        SB3Bot(path)


def test_an_sb3_zip_with_an_entry_sb3_never_writes_is_refused(tmp_path) -> None:
    """SB3 writes ``data``, its version, system info and ``.pth`` files: any other entry is a
    crafted file's, refused before anything in the archive is read."""
    path = tmp_path / "odd.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps({}))
        z.writestr("policy/data.pkl", hash_bomb_pickle(3, 23))
    with pytest.raises(ValueError, match=r"holds 'policy/data.pkl', which Stable-Baselines3 does not write"):
        SB3Bot(path)


def test_an_sb3_zip_with_nan_weights_is_refused_in_one_line(tmp_path) -> None:
    """It loaded, then failed at its first move with a torch message (and took the server down
    in its warm-up)."""
    import torch
    from sb3_contrib import MaskablePPO

    from hanamikoji_env.wrappers import SingleAgentEnv

    model = MaskablePPO("MlpPolicy", SingleAgentEnv(opponent="random"), n_steps=32, batch_size=32, seed=0)
    with torch.no_grad():
        next(model.policy.parameters())[0, 0] = float("nan")
    model.save(tmp_path / "nan.zip")
    with pytest.raises(ValueError, match=r"nan.zip: the policy's \S+ holds NaN or infinite values$"):
        SB3Bot(tmp_path / "nan.zip")


def test_a_zip_gives_its_move_probabilities_as_it_plays_and_names_its_game(tmp_path) -> None:
    """What exact and local best responses read: the policy's distribution over the legal moves
    (0 on the others), 1 on the move ``predict`` makes when deterministic; ``sampled:`` samples
    it; a zip names the game it learned (``hanamikoji_variant``, absent: the full game), and a
    best response of the other game refuses it."""
    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO

    from hanamikoji_env import exact
    from hanamikoji_env.bots.spec import parse_player
    from hanamikoji_env.wrappers import SingleAgentEnv

    env = SingleAgentEnv(opponent="random", variant="mini")
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, seed=0)
    with torch.no_grad():  # a policy far from uniform, so that greedy and sampled differ
        model.policy.action_net.weight.normal_(0.0, 1.0)
    model.hanamikoji_variant = "mini"
    model.save(tmp_path / "mini.zip")
    MaskablePPO("MlpPolicy", SingleAgentEnv(opponent="random"), n_steps=32, batch_size=32, seed=0).save(
        tmp_path / "full.zip"
    )
    greedy, sampled = (
        SB3Bot(tmp_path / "mini.zip"),
        parse_player(f"sampled:ckpt={tmp_path / 'mini.zip'}").make(0),
    )
    assert isinstance(sampled, SB3Bot) and not sampled.deterministic and greedy.variant == "mini"
    assert SB3Bot(tmp_path / "full.zip").variant == "full"

    tree = exact.game_tree("mini")
    obs, masks = tree.infostates[:200, :109], tree.masks[:200]
    probs = sampled.play_probabilities(obs, masks)
    assert np.allclose(probs.sum(axis=1), 1.0) and not (probs[masks == 0] > 0).any()
    predicted = [int(greedy.model.predict(o, action_masks=m.astype(bool), deterministic=True)[0])
                 for o, m in zip(obs, masks, strict=True)]  # fmt: skip
    assert (greedy.play_probabilities(obs, masks).argmax(axis=1) == predicted).all()
    assert (greedy.act_batch(obs, masks) == predicted).all()  # one network call plays as predict does
    rngs = lambda: [np.random.default_rng(k) for k in range(len(obs))]  # noqa: E731
    drawn = sampled.act_batch(obs, masks, rngs())
    assert (drawn == sampled.act_batch(obs, masks, rngs())).all() and masks[np.arange(len(obs)), drawn].all()
    assert (probs.max(axis=1) < 1.0).any()  # sampled is not greedy
    assert exact.exploitability(sampled).nash_conv > 0  # measured over its whole strategy
    with pytest.raises(
        ValueError, match=r"mini.zip reads \[N, 109\] observations \(version 1\) and \[N, 23\] masks"
    ):
        greedy.play_probabilities(obs[:, :100], masks)  # another layout's width
    with pytest.raises(ValueError, match="masks with a legal move"):
        greedy.act_batch(obs[:1], np.zeros((1, 23), dtype=np.int8))
    with pytest.raises(ValueError, match="trained on the mini game, not the full variant"):
        greedy.check_modelled("full")
    with pytest.raises(ValueError, match="trained on the full game, not the mini variant"):
        exact.exploitability(SB3Bot(tmp_path / "full.zip"))


def test_a_zip_naming_an_unknown_game_is_refused(tmp_path) -> None:
    path = tmp_path / "odd.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps({"hanamikoji_variant": "huge"}))
    with pytest.raises(ValueError, match=r"names the variant 'huge'; known are \['full', 'mini'\]"):
        SB3Bot(path)
