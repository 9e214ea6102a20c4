"""SB3Bot refuses SB3 zips whose pickled entries could run code."""

from __future__ import annotations

import json
import zipfile

import pytest

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
