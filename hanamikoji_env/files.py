"""Files: writing one so that no reader ever finds half of it (:func:`replace_atomically`), and
finding the folders that ship with the package (:func:`shipped_folder`).

Every output the package writes (checkpoints, game records, tournament results) goes through it:
the new content is written to a temporary file beside the target and renamed over it, so the
target is either as it was or whole.  A failure (a full disk) leaves the target as it was, takes
the temporary file away and is one line naming the target.
"""

from __future__ import annotations

import errno
import glob
import os
import secrets
import shutil
from collections.abc import Callable
from importlib import resources
from pathlib import Path

_FULL = 2 * 2**20
"""Free bytes under which a failed write is put down to a full disk."""


def replace_atomically(
    path: str | os.PathLike[str],
    write: Callable[[Path], object],
    errors: tuple[type[BaseException], ...] = (OSError,),
) -> None:
    """``write(tmp)`` fills a temporary file beside ``path``, which then replaces ``path``.  An
    exception of ``errors`` (``OSError``; a library may report a full disk otherwise, as torch's
    ``RuntimeError``) becomes ``OSError("cannot write PATH: WHY; it is left as it was")`` with the
    cause's ``errno`` (``ENOSPC`` when the disk is full)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")  # see remove_stale_temporaries
    try:
        write(tmp)
        os.replace(tmp, path)
    except errors as e:
        tmp.unlink(missing_ok=True)
        why, code = _why(e, path.parent)
        error = OSError(f"cannot write {path}: {why}; it is left as it was")
        error.errno = code  # one line when printed, the cause still testable
        raise error from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _why(e: BaseException, folder: Path) -> tuple[str, int | None]:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror, e.errno
    if shutil.disk_usage(folder).free < _FULL:
        return "no space left on the device", errno.ENOSPC
    text = str(e).strip().splitlines()
    return (text[0][:200] if text else type(e).__name__), None


def remove_stale_temporaries(path: str | os.PathLike[str]) -> list[Path]:
    """Delete the temporary files :func:`replace_atomically` of ``path`` left behind when its
    process was killed midway (``.NAME.*.tmp`` beside it); returns what was removed.  Call it only
    where no other process is writing the same path."""
    path = Path(path)
    if not path.parent.is_dir():
        return []
    stale = [p for p in path.parent.glob(f".{glob.escape(path.name)}.*.tmp") if p.is_file()]
    for p in stale:
        p.unlink(missing_ok=True)
    return stale


def shipped_folder(package: str, folder: str) -> Path:
    """A folder of data that ships as ``hanamikoji_env.<package>`` (the repository's ``folder``,
    mapped in by ``package-dir``: ``docs``, ``checkpoints``, ``configs``), or in a clone that is not
    installed, the repository's folder itself."""
    try:
        return Path(str(resources.files(f"hanamikoji_env.{package}")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[1] / folder
