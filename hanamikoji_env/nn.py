"""The policy network and its checkpoint format, shared by PolicyBot and training.

A checkpoint is a ``torch.save`` dict, read back with ``torch.load(...,
weights_only=True)`` (no code runs on load) and checked before use:

| key | content |
|---|---|
| ``format`` | ``"hanamikoji-policy/1"`` |
| ``env_version`` | the hanamikoji-env version that wrote it (for information: any version loads) |
| ``observation_version`` | the observation version the network reads (absent in files written
  before versions were recorded: version 1) |
| ``layout_hash`` | that version's layout hash; must match, so a changed layout never loads |
| ``variant`` | the game the network was trained on (:data:`hanamikoji_env.rules.VARIANTS`; absent in
  files written before variants: ``"full"``) |
| ``model_config`` | ``{"hidden": 1..4096, "layers": 1..16}`` (ints) |
| ``state_dict`` | the network's weights: its keys and shapes must be those of ``model_config``'s network |
| anything else | what training adds (optimizer and RNG states, config, step counts) |

Everything is checked before a network is built, and the file's size before
it is read, by the gate of every file from outside (:mod:`hanamikoji_env.files`):
a checkpoint is a zip archive whose entries all sit in one folder with one
``data.pkl``, no name twice, and the sum of their uncompressed sizes (what
``torch.load`` would allocate) within :data:`MAX_CHECKPOINT_BYTES`, so a small
file that inflates to gigabytes is refused unread; its pickle is then walked
without building anything.  Every bad file is a one-line :class:`CheckpointError`.
Files are written atomically (a temporary file, then a rename), so an
interrupted save never leaves a truncated checkpoint behind
(:func:`~hanamikoji_env.files.remove_stale_temporaries` cleans up after one that was killed).
"""

from __future__ import annotations

import io
import pickletools
import re
import warnings
import zipfile
from pathlib import Path
from typing import IO, Any

import numpy as np
import torch
from torch import nn

from hanamikoji_env._version import __version__
from hanamikoji_env.actions import NUM_ACTIONS
from hanamikoji_env.excerpt import short
from hanamikoji_env.files import check_untrusted, check_zip, replace_atomically
from hanamikoji_env.observation import DEFAULT_VERSION, VERSIONS, get_version
from hanamikoji_env.pretrained import resolve_checkpoint
from hanamikoji_env.rules import FULL, VARIANTS, check_variant

FORMAT = "hanamikoji-policy/1"


MAX_CHECKPOINT_BYTES = 512 * 2**20
"""The most a checkpoint may unpack to (512 MiB): the widest network, its optimizer state and a
training run's extras fit several times over."""
MAX_HIDDEN = 4096
"""Widest network a checkpoint may ask for (4096 units: about 70 MB of float32 weights at 4 layers)."""
MAX_LAYERS = 16


class CheckpointError(ValueError):
    """A file that is not a usable hanamikoji-env policy checkpoint."""


def tanh_layers(width: int, hidden: int, layers: int) -> list[nn.Module]:
    """``layers`` x (Linear to ``hidden``, Tanh), the first from ``width`` inputs."""
    blocks: list[nn.Module] = []
    for _ in range(layers):
        blocks += [nn.Linear(width, hidden), nn.Tanh()]
        width = hidden
    return blocks


class PolicyNet(nn.Module):
    """An MLP with a policy head (23 logits) and a value head, on scaled observations of
    ``observation_version``."""

    def __init__(
        self,
        hidden: int = 256,
        layers: int = 2,
        observation_version: int = DEFAULT_VERSION,
        variant: str = FULL.name,
    ) -> None:
        super().__init__()
        self.variant = check_variant(variant).name
        """The game the network plays (a checkpoint records it; a tool for another refuses it)."""
        if not _network_size_ok(hidden, layers):
            raise ValueError(
                f"hidden and layers must be ints in [1, {MAX_HIDDEN}] and [1, {MAX_LAYERS}], "
                f"got {short(hidden)}, {short(layers)}"
            )
        version = get_version(observation_version)
        self.config = {"hidden": int(hidden), "layers": int(layers)}
        self.observation_version = version.number
        self.register_buffer("scale", torch.as_tensor(1.0 / version.high, dtype=torch.float32))
        self.trunk = nn.Sequential(*tanh_layers(version.size, hidden, layers))
        self.policy = nn.Linear(hidden, NUM_ACTIONS)
        self.value = nn.Linear(hidden, 1)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits ``[B, 23]`` (illegal actions at -1e9) and values ``[B]``."""
        h = self.trunk(obs * self.scale)
        return masked(self.policy(h), mask), self.value(h).squeeze(-1)

    def linears(self) -> list[nn.Linear]:
        """The layers from observation to logits: the trunk's (each followed by tanh), then the
        policy head."""
        return [*(m for m in self.trunk if isinstance(m, nn.Linear)), self.policy]


def masked(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with the actions ``mask`` rules out (0) at -1e9."""
    return logits.masked_fill(mask == 0, -1e9)


class PolicyStack:
    """Frozen policies of one shape played as one network: each layer's weights stacked, one
    batched matrix product a layer for rows that each name their policy (training's snapshot
    opponents, many policies a few rows each).  Row i's logits are ``nets[which[i]]``'s."""

    def __init__(self, nets: list[PolicyNet]) -> None:
        self.scale = nets[0].scale
        self.layers = [
            (torch.stack([lin.weight.T for lin in same]), torch.stack([lin.bias[None] for lin in same]))
            for same in zip(*(net.linears() for net in nets), strict=True)
        ]
        """Per layer: weights ``[K, in, out]`` and biases ``[K, 1, out]`` of the K policies."""

    @torch.no_grad()
    def logits(self, which: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> torch.Tensor:
        """Masked logits ``[n, 23]`` on the CPU, row i by policy ``which[i]`` at ``obs[i]``."""
        device, count = self.scale.device, len(self.layers[0][0])
        rows = np.bincount(which, minlength=count)
        order = np.argsort(which, kind="stable")
        rank = np.empty(len(which), np.int64)  # each row's place among its policy's rows
        rank[order] = np.arange(len(which)) - np.repeat(np.cumsum(rows) - rows, rows)
        net, place = torch.as_tensor(which, device=device), torch.as_tensor(rank, device=device)
        x = torch.zeros(count, int(rows.max()), obs.shape[1], device=device)
        x[net, place] = torch.as_tensor(obs, device=device) * self.scale
        for i, (weight, bias) in enumerate(self.layers):
            x = torch.baddbmm(bias, x, weight)
            if i < len(self.layers) - 1:
                x = torch.tanh(x)
        return masked(x[net, place], torch.as_tensor(mask, device=device)).cpu()


@torch.no_grad()
def widen(model: PolicyNet, hidden: int) -> PolicyNet:
    """A ``hidden``-wide copy of ``model`` that computes exactly the same logits and values.

    The old units keep their weights; each new unit gets fresh incoming weights (the
    default initialisation, from torch's global generator) and zero outgoing weights, so
    it changes nothing until training moves those (Net2Net's function-preserving widening).
    """
    old = model.config["hidden"]
    if hidden < old:
        raise ValueError(f"cannot widen a {old}-unit network to {hidden} units")
    wide = PolicyNet(hidden, model.config["layers"], model.observation_version, model.variant)
    for i, (src, dst) in enumerate(zip(model.trunk[::2], wide.trunk[::2], strict=True)):
        if i:
            dst.weight[:old, old:] = 0.0  # old units do not hear the new ones
        dst.weight[:old, : src.in_features] = src.weight
        dst.bias[:old] = src.bias
    for src, dst in ((model.policy, wide.policy), (model.value, wide.value)):
        dst.weight.zero_()
        dst.weight[:, :old] = src.weight
        dst.bias.copy_(src.bias)
    return wide


DEVICE_PATTERN = r"auto|cpu|cuda(:[0-9]{1,2})?"
"""The device names a config, PolicyBot or the tournament accepts."""


def resolve_device(name: str) -> torch.device:
    """``auto`` (CUDA when available, else the CPU), ``cpu``, ``cuda`` or ``cuda:N`` as a
    ``torch.device``; ``ValueError`` for a malformed name or a GPU this machine lacks."""
    if not isinstance(name, str) or not re.fullmatch(DEVICE_PATTERN, name):
        raise ValueError(f"device must be auto, cpu, cuda or cuda:N, got {short(name)}")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {short(name)}: CUDA is not available on this machine (use auto or cpu)")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise ValueError(
                f"device {short(name)}: this machine has {torch.cuda.device_count()} CUDA device(s)"
            )
    return device


def save_checkpoint(path: str | Path, model: PolicyNet, **extra: Any) -> None:
    """Write ``model`` (and training ``extra``) to ``path`` atomically."""
    version = get_version(model.observation_version)
    payload = {
        "format": FORMAT,
        "env_version": __version__,
        "observation_version": version.number,
        "layout_hash": version.layout_hash,
        "variant": model.variant,
        "model_config": dict(model.config),
        "state_dict": model.state_dict(),
        **extra,
    }
    write_torch_file(path, payload)


def write_torch_file(path: str | Path, payload: Any) -> None:
    """``torch.save(payload)`` to ``path`` atomically: the one writer of our checkpoint-like files
    (:func:`read_torch_file` reads them)."""
    # torch reports a full disk as a RuntimeError ("enforce fail ... unexpected pos")
    replace_atomically(path, lambda tmp: torch.save(payload, tmp), errors=(OSError, RuntimeError))


def read_torch_file(path: Path) -> Any:
    """The one gate for our checkpoint-like files (a policy, a belief model): its kind and
    unpacked size checked and its pickle stream walked before ``torch.load(...,
    weights_only=True)``; :class:`CheckpointError` says what is wrong."""
    check_untrusted(path, "checkpoint", MAX_CHECKPOINT_BYTES, CheckpointError)
    _check_file_kind(path)
    _check_pickle(path)
    try:
        with warnings.catch_warnings():  # torch's notes on old pickle protocols: the load below decides
            warnings.simplefilter("ignore", UserWarning)
            data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # truncated, corrupt, or a pickle that needs code to load
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        if "weights_only" in str(e) or "Unsupported global" in str(e):
            first = "it holds objects that need code to load, which is refused"
        raise CheckpointError(
            f"{path} is not a readable checkpoint ({type(e).__name__}: {short(first)})"
        ) from None
    return data


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read and check a checkpoint (``pretrained``: the shipped agent's); :class:`CheckpointError`
    says what is wrong."""
    path = resolve_checkpoint(path)
    data = read_torch_file(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a hanamikoji-env policy checkpoint (no format {FORMAT!r})")
    number = data.get("observation_version", 1)  # files from before versions were recorded: 1
    if type(number) is not int or number not in VERSIONS:
        raise CheckpointError(
            f"{path} reads observation version {short(number)}; this hanamikoji-env {__version__} "
            f"knows versions {sorted(VERSIONS)} (a newer release may)"
        )
    if data.get("layout_hash") != VERSIONS[number].layout_hash:
        raise CheckpointError(
            f"{path} was made for another layout of observation version {number} or another action set"
        )
    variant = data.get("variant", FULL.name)  # files from before variants: the full game
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise CheckpointError(
            f"{path} was trained on variant {short(variant)}; this hanamikoji-env {__version__} "
            f"knows {', '.join(VARIANTS)}"
        )
    config = data.get("model_config")
    if (
        not isinstance(config, dict)
        or set(config) != {"hidden", "layers"}
        or not _network_size_ok(config["hidden"], config["layers"])
    ):
        raise CheckpointError(
            f"{path} has a bad model_config {short(config)}: hidden and layers must be ints "
            f"in [1, {MAX_HIDDEN}] and [1, {MAX_LAYERS}]"
        )
    state = data.get("state_dict")
    if not isinstance(state, dict):
        raise CheckpointError(f"{path} has no state_dict")
    odd = next((k for k in state if not isinstance(k, str)), None)
    if odd is not None:  # named by its type only: its value is untrusted and may be huge
        raise CheckpointError(f"{path}: state_dict keys must be parameter names, got a {type(odd).__name__}")
    expected = state_dict_shapes(config["hidden"], config["layers"], number)
    found = {k: tuple(v.shape) if isinstance(v, torch.Tensor) else type(v).__name__ for k, v in state.items()}
    if found != expected:  # checked before any network is built
        wrong = sorted(k for k in expected.keys() | found.keys() if found.get(k) != expected.get(k))
        raise CheckpointError(
            f"{path}: state_dict does not fit a network of {config}: "
            + ", ".join(
                f"{k} {found.get(k, 'missing')} (expected {expected.get(k, 'none')})" for k in wrong[:5]
            )
        )
    hollow = next(
        (k for k, v in state.items() if not v.is_contiguous() or v.untyped_storage().nbytes() < v.nbytes),
        None,
    )
    if hollow is not None:  # e.g. a zero-stride view of one number: a few KB of file, GBs once copied
        raise CheckpointError(f"{path}: tensor {hollow} is not stored whole in the file (a crafted view)")
    for name, tensor in state.items():  # loading would cast another dtype silently; NaN plays nonsense
        if tensor.dtype != torch.float32:
            raise CheckpointError(f"{path}: tensor {name} is {tensor.dtype}; a policy's weights are float32")
        if not torch.isfinite(tensor).all():
            raise CheckpointError(f"{path}: tensor {name} holds NaN or infinite values")
    return data


MAX_PICKLE_DEPTH = 24
"""The deepest nesting of containers a checkpoint's pickle may build (the shipped ones: 6).  Deeper,
tuples that share their children make hashing one dict key cost 2**depth steps inside
``torch.load``, which nothing can interrupt."""
MAX_PICKLE_OPS = 2_000_000
"""The most pickle instructions a checkpoint's object tree may take (the shipped one: 1,400)."""
MAX_PICKLE_OBJECTS = 1_000_000
"""The most objects a walk through one of a checkpoint's objects may visit, a shared one counted
each time it is used (the shipped agent: about 100).  Past it, hashing or comparing that object
inside ``torch.load`` would take minutes to hours (3-wide tuples 23 deep: 3**23 steps)."""

_BUILDS = {"TUPLE", "LIST", "DICT", "FROZENSET", "OBJ", "INST"}  # pop to the MARK, push one
_ADDS = {"APPENDS", "SETITEMS", "ADDITEMS"}  # pop to the MARK into the object below it
_PAIRS = {"TUPLE1": 1, "TUPLE2": 2, "TUPLE3": 3, "REDUCE": 2, "NEWOBJ": 2, "BUILD": 2, "APPEND": 2,
          "SETITEM": 3, "NEWOBJ_EX": 3, "STACK_GLOBAL": 2}  # fmt: skip
_STACK_ONLY = {"MARK", "POP", "POP_MARK", "DUP", "PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE", "GET", "BINGET",
               "LONG_BINGET", "STOP", "PROTO", "FRAME", "PERSID", "BINPERSID"}  # fmt: skip


def _check_file_kind(path: Path) -> None:
    """:class:`CheckpointError` unless ``path`` starts as ``torch.save`` writes: a zip archive, or
    (the legacy format) a pickle.  Anything else would fail inside the unpickler with a message
    about its bytes, not about the file."""
    with open(path, "rb") as f:
        head = f.read(4)
    if not head.startswith((b"PK\x03\x04", b"\x80")):
        raise CheckpointError(
            f"{path} is not a PyTorch checkpoint: torch.save writes a zip archive (or a pickle), "
            f"and this file starts with {short(head)}"
        )


def _check_pickle(path: Path) -> None:
    """:class:`CheckpointError` when the pickle of the checkpoint's object tree nests containers deeper
    than :data:`MAX_PICKLE_DEPTH` or takes more than :data:`MAX_PICKLE_OPS` instructions: read
    with ``pickletools`` (nothing is built), before ``torch.load`` could spend hours hashing it."""
    with open(path, "rb") as f:
        check_torch_stream(f, str(path))


LEGACY_PICKLES = 5
"""torch.save's legacy (non-zip) format: five pickles (magic number, protocol, system info, the
object, its storages' keys), then the storages' raw bytes."""


def check_torch_stream(f: IO[bytes], name: str) -> None:
    """The pickles of a ``torch.save`` stream walked before anything loads it (see
    :func:`_check_pickle`): a zip archive's ``data.pkl`` once the archive's layout passed
    :func:`files.check_zip`, or the legacy format's leading pickles.  The checks of every file
    ``torch.load`` will read: our checkpoints, ``.mlp`` files and each ``.pth`` inside an SB3 zip.
    A stream too malformed to walk is left to ``torch.load``, which refuses it."""
    names = check_zip(f, name, "checkpoint", MAX_CHECKPOINT_BYTES, _not_torch_layout, CheckpointError)
    if names is None:
        _walk_pickles(f, name, LEGACY_PICKLES)
        return
    with zipfile.ZipFile(f) as archive:
        stream = io.BytesIO(archive.read(f"{_folder(names)}/data.pkl"))  # its size was checked unpacked
    f.seek(0)
    _walk_pickles(stream, name, 1)


def _folder(names: list[str]) -> str:
    """The folder torch reads an archive from: its first entry's."""
    return names[0].split("/")[0] if names else ""


def _not_torch_layout(names: list[str]) -> str | None:
    """Why entry names are not what ``torch.save`` writes (every entry in the first one's folder,
    one ``data.pkl`` there), or ``None``.  torch reads only that folder: another entry could only
    be there to make what is checked differ from what is loaded."""
    folder = _folder(names)
    outside = next((n for n in names if not n.startswith(f"{folder}/")), None)
    if outside is not None:
        return f"its archive holds {short(outside)}, outside the folder {short(folder)}/ torch reads (a crafted file)"
    if f"{folder}/data.pkl" not in names:
        return "its archive holds no data.pkl: torch.save did not write it"
    return None


def _walk_pickles(stream: IO[bytes], name: str, count: int) -> None:
    """Walk ``count`` consecutive pickles of ``stream`` with :data:`MAX_PICKLE_OPS` steps in all and
    no container deeper than :data:`MAX_PICKLE_DEPTH`."""
    steps = 0
    for _ in range(count):
        steps = _walk_pickle(stream, name, steps)
        if steps < 0:
            return


def _walk_pickle(stream: IO[bytes], path: str, steps: int) -> int:
    """One pickle of ``stream`` walked (:func:`_walk_pickles`); the steps taken so far, or -1 where
    the stream is malformed (torch.load will say how).  Each object on the pickle's stack is
    followed as (its nesting depth, its expanded size: the objects a walk through it visits, a
    shared child counted each time it is used), so a small file of shared tuples is refused by the
    work hashing it would take, not only by its depth."""
    stack: list[list[int] | None] = []  # [depth, size] of each object (None: a MARK)
    memo: dict[object, list[int]] = {}  # the same lists: a list or dict memoized empty grows in place
    try:
        for op, arg, _ in pickletools.genops(stream):
            steps += 1
            if steps > MAX_PICKLE_OPS:
                raise CheckpointError(f"{path}: its object tree takes over {MAX_PICKLE_OPS:,} pickle steps")
            kind = op.name
            if kind == "MARK":
                stack.append(None)
            elif kind in _BUILDS or kind in _ADDS:
                mark = len(stack) - 1 - stack[::-1].index(None)
                items = [x for x in stack[mark + 1 :] if x is not None]
                del stack[mark:]
                depth = max((x[0] for x in items), default=0) + 1
                size = min(sum(x[1] for x in items), MAX_PICKLE_OBJECTS + 1)
                if kind in _ADDS:
                    below = stack[-1]
                    assert below is not None
                    below[0], below[1] = max(below[0], depth), below[1] + size
                else:
                    stack.append([depth, size + 1])
            elif kind in _PAIRS:
                taken = [x for x in (stack.pop() for _ in range(_PAIRS[kind])) if x is not None]
                depth = max(x[0] for x in taken) + (kind != "STACK_GLOBAL")
                size = min(sum(x[1] for x in taken), MAX_PICKLE_OBJECTS + 1)
                if kind in ("APPEND", "SETITEM", "BUILD"):  # into the object below: it grows in place
                    target = taken[-1]
                    target[0], target[1] = max(target[0], depth), size
                    stack.append(target)
                else:
                    stack.append([depth, size + 1])
            elif kind in ("PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"):
                top = stack[-1]
                assert top is not None
                memo[arg if kind != "MEMOIZE" else len(memo)] = top
            elif kind in ("GET", "BINGET", "LONG_BINGET"):
                stack.append(memo[arg])
            elif kind in ("POP", "BINPERSID"):
                stack.pop()
                if kind == "BINPERSID":
                    stack.append([0, 1])
            elif kind == "POP_MARK":
                del stack[len(stack) - 1 - stack[::-1].index(None) :]
            elif kind == "DUP":
                stack.append(stack[-1])
            elif kind not in _STACK_ONLY:
                stack.append([0, 1])  # a number, string, None, bool, global, empty container
            top = stack[-1] if stack else None
            if top is not None and top[0] > MAX_PICKLE_DEPTH:
                raise CheckpointError(
                    f"{path}: its object tree nests deeper than {MAX_PICKLE_DEPTH} levels (a crafted file)"
                )
            if top is not None and top[1] > MAX_PICKLE_OBJECTS:
                raise CheckpointError(
                    f"{path}: its object tree expands to over {MAX_PICKLE_OBJECTS:,} objects, shared "
                    "ones counted each time they are used (a crafted file)"
                )
    except (
        ValueError,
        IndexError,
        KeyError,
        TypeError,
        AssertionError,
    ) as e:  # malformed: torch.load says how
        if isinstance(e, CheckpointError):
            raise
        return -1
    return steps


def state_dict_shapes(
    hidden: int, layers: int, observation_version: int = DEFAULT_VERSION
) -> dict[str, tuple[int, ...]]:
    """The key and tensor shape of every entry of a :class:`PolicyNet`'s state dict."""
    width = get_version(observation_version).size
    shapes: dict[str, tuple[int, ...]] = {"scale": (width,)}
    for i in range(layers):
        shapes[f"trunk.{2 * i}.weight"] = (hidden, width)
        shapes[f"trunk.{2 * i}.bias"] = (hidden,)
        width = hidden
    shapes |= {"policy.weight": (NUM_ACTIONS, hidden), "policy.bias": (NUM_ACTIONS,)}
    return shapes | {"value.weight": (1, hidden), "value.bias": (1,)}


def _network_size_ok(hidden: object, layers: object) -> bool:
    return all(
        type(v) is int and 1 <= v <= top  # type() is: bool is an int subclass
        for v, top in ((hidden, MAX_HIDDEN), (layers, MAX_LAYERS))
    )


def load_policy(path: str | Path) -> PolicyNet:
    """The network of a checkpoint, in eval mode."""
    return policy_from(load_checkpoint(path), path)


def policy_from(data: dict[str, Any], path: str | Path) -> PolicyNet:
    """The network of checkpoint ``data`` already read (and checked) from ``path``, in eval mode."""
    model = PolicyNet(
        **data["model_config"],
        observation_version=data.get("observation_version", 1),
        variant=data.get("variant", FULL.name),
    )
    try:
        model.load_state_dict(data["state_dict"])
    except RuntimeError as e:
        raise CheckpointError(f"{path}: weights do not fit the network ({e})") from None
    return model.eval()


def masked_probs(logits: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of masked logits (numpy, for bots)."""
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


@torch.no_grad()
def policy_probs(model: PolicyNet, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``model``'s move probabilities per row (0 where illegal), float64: a policy bot's
    distribution, the search's prior and its playouts' moves."""
    logits, _ = model(torch.as_tensor(obs, dtype=torch.float32), torch.as_tensor(mask))
    return masked_probs(logits.numpy().astype(np.float64))


@torch.no_grad()
def policy_values(model: PolicyNet, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``model``'s value head per row (each row's own player's view), float64."""
    _, values = model(torch.as_tensor(obs, dtype=torch.float32), torch.as_tensor(mask))
    return values.numpy().astype(np.float64)


def sample_actions(probs: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Per row of ``probs`` ``[B, A]``, the action at ``uniforms[i]`` in [0, 1) by inverse CDF
    (action ``a`` owns ``[cdf[a-1], cdf[a])``); only actions of probability > 0 are ever picked,
    at ``u = 0`` and where a row sums to 1 - eps too."""
    cdf = probs.cumsum(axis=1)
    return (cdf <= uniforms[:, None] * cdf[:, -1:]).sum(axis=1)
