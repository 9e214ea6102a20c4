"""Files: writing one so that no reader ever finds half of it (:func:`replace_atomically`), the
first gate of every file read from outside (:func:`check_untrusted`, :func:`check_zip`), and
finding the folders that ship with the package (:func:`shipped_folder`).

Every output the package writes (checkpoints, game records, tournament results) goes through it:
the new content is written to a temporary file beside the target and renamed over it, so the
target is either as it was or whole.  A failure (a full disk) leaves the target as it was, takes
the temporary file away and is one line naming the target.

Every file a user or a stranger hands the package passes :func:`check_untrusted` before a byte of
it is read or hashed: it must be a regular file (a pipe would hang its reader, a device never end)
no larger than its kind may be, judged from its metadata.  A zip archive also passes
:func:`check_zip` before anything in it is unpacked: no entry name twice (the entry checked might
not be the one loaded), nothing its reader does not expect, and a bounded size unpacked.  Then each
kind has its own bounded reader:

==============================  ============================  =====================================
file                            size limit                    then
==============================  ============================  =====================================
checkpoint (``.pt``)            ``nn.MAX_CHECKPOINT_BYTES``   torch's layout, pickle walk
                                                              (``nn.read_torch_file``), schema
SB3 model (``.zip``)            ``sb3.MAX_UNPACKED_BYTES``    SB3's entries; each ``.pth`` as a
                                                              checkpoint; JSON ``data`` bounded
OpenSpiel policy (``.mlp``)     ``mlp.MAX_MLP_BYTES``         as a checkpoint, then its schema
game records (``.jsonl``)       none: read a line at a time   ``records.MAX_LINE_BYTES`` a line
config (``.yaml``, run's JSON)  ``config.MAX_CONFIG_BYTES``   YAML with bounded integers and keys
curve (``curve.csv``)           ``plot.MAX_CURVE_BYTES``      its columns checked
==============================  ============================  =====================================
"""

from __future__ import annotations

import errno
import glob
import os
import secrets
import shutil
import stat
import zipfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import IO

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


class RefusedFileError(ValueError):
    """A file from outside refused before it was read; its message is one line naming the file."""


def check_untrusted(
    path: str | os.PathLike[str],
    what: str,
    max_bytes: int | None,
    error: type[ValueError] = RefusedFileError,
) -> Path:
    """``path`` if it names a regular file of at most ``max_bytes`` (``None``: any size, for a file
    read a bounded line at a time); otherwise ``error`` in one line, ``what`` naming its kind
    (``"checkpoint"``).  Nothing is opened: the size is the file's apparent size (a sparse file's
    too), which is what its reader would read."""
    path = Path(path)
    try:
        info = path.stat()
    except OSError:
        info = None
    if info is None or not stat.S_ISREG(info.st_mode):  # missing, a folder, a pipe, a device
        raise error(f"{what} {path} does not exist or is not a file")
    if max_bytes is not None and info.st_size > max_bytes:
        raise error(
            f"{what} {path} is {_size(info.st_size)}, more than a {what} may be ({_size(max_bytes)}): "
            "refused unread"
        )
    return path


def check_zip(
    source: str | os.PathLike[str] | IO[bytes],
    name: str,
    what: str,
    max_unpacked: int,
    unexpected: Callable[[list[str]], str | None],
    error: type[ValueError] = RefusedFileError,
) -> list[str] | None:
    """The entry names of the zip archive ``source`` (a path, or a seekable stream left at its
    start) after checking, from its directory alone, that no name is there twice, that they
    unpack to at most ``max_unpacked`` bytes (the most a ``what`` may) and that
    ``unexpected(names)`` (the reader's layout: why these names are not it, or ``None``) finds
    nothing; ``error`` in one line otherwise.  ``None`` when ``source`` does not start as a zip
    archive (its reader decides what it is: torch's legacy format is a pickle) or is too damaged
    to list."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            head = f.read(4)
    else:
        head = source.read(4)
        source.seek(0)
    if head != b"PK\x03\x04":
        return None
    try:
        with zipfile.ZipFile(source) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    finally:
        if not isinstance(source, (str, os.PathLike)):
            source.seek(0)
    names = [info.filename for info in infos]
    if len(set(names)) != len(names):
        raise error(
            f"{name}: its archive holds an entry name twice (a crafted file: the entry checked might "
            "not be the one loaded)"
        )
    total = sum(info.file_size for info in infos)
    if total > max_unpacked:
        raise error(
            f"{name} unpacks to {_size(total)}, more than a {what} may ({_size(max_unpacked)}): "
            "refused unread"
        )
    why = unexpected(names)
    if why is not None:
        raise error(f"{name}: {why}")
    return names


def _size(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB" if n >= 2**20 else f"{n:,} bytes"


def shipped_folder(package: str, folder: str) -> Path:
    """A folder of data that ships as ``hanamikoji_env.<package>`` (the repository's ``folder``,
    mapped in by ``package-dir``: ``docs``, ``checkpoints``, ``configs``), or in a clone that is not
    installed, the repository's folder itself."""
    try:
        return Path(str(resources.files(f"hanamikoji_env.{package}")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[1] / folder
