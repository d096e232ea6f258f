"""Grow a trained YOLO11 model into a wider one that computes the same function.

Why: the next size up (YOLO11n -> YOLO11s) has the same layers and depth with twice
the channels, and trained from scratch it needs tens of epochs before it is as good as
the small model it is meant to beat — ~10 hours on this machine's two cores.  Started
from the small model's weights instead (Net2WiderNet), it begins exactly where the small
model stands and every epoch goes into what the extra width can add.

How: every channel of the small model becomes two channels of the wide one, side by
side (channel ``c`` -> ``2c`` and ``2c + 1``), which commutes with the ``Concat`` and
``chunk``/``split`` the YOLO11 blocks are built from.  A layer reading a doubled input
splits each incoming weight between the two copies at a random ratio: the sum (the
function) is unchanged, and because the two copies' outgoing weights differ, their
gradients differ and they learn apart (equal halves would keep them twins for ever).
The attention block is the exception: its extra heads are copies of the small model's
heads of the same size, so its query/key/value channels are duplicated head by head.
Layers whose width the wide model keeps (the box branch of the head, the class and box
outputs, the classifier head's 1280 features, the image input) are copied as they are.
A trained classifier (YOLO11n-cls -> YOLO11s-cls) widens the same way: its backbone is the
detector's, and its head only reads a doubled input.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scoring.errors import NiuniuError

SPLIT_RANGE = (0.3, 0.7)  # share of an incoming weight the first copy of a doubled input gets


def widen(weights: Path, wide_yaml: str, dest: Path, seed: int = 0) -> Path:
    """Write ``dest``: a checkpoint of ``wide_yaml`` (e.g. ``yolo11s.yaml``, ``yolo11s-cls.yaml``)
    holding the trained ``weights`` (a YOLO11n detector or classifier), widened; fine-tune
    it with ``niuniu train``."""
    import torch

    from vision.train import trained_model

    ckpt, narrow = trained_model(weights, "weights to widen (a trained detector or classifier .pt)")
    narrow = narrow.float().eval()
    try:  # the narrow model's own class: a detector grows into a detector, a classifier into a classifier
        wide = type(narrow)(wide_yaml, nc=narrow.yaml["nc"], verbose=False).float().eval()
    except Exception as exc:
        raise NiuniuError(f"cannot build the wide model from {wide_yaml!r} ({exc}); give e.g. yolo11s.yaml "
                          "(a detector) or yolo11s-cls.yaml (a classifier)") from exc
    wide.load_state_dict(widened_state(narrow, wide, np.random.default_rng(seed)))
    wide.names, wide.args = narrow.names, getattr(narrow, "args", {})
    dest.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": wide.half(), "ema": None, "optimizer": None, "epoch": -1,
                "train_args": ckpt.get("train_args", {})}, dest)
    return dest


def widened_state(narrow, wide, rng: np.random.Generator) -> dict:
    """The wide model's state dict, every tensor mapped from the narrow model's."""
    import torch

    small, big = narrow.state_dict(), wide.state_dict()
    if small.keys() != big.keys():
        raise NiuniuError(f"{wide.yaml.get('yaml_file', 'the wide model')} has other layers than the model to widen "
                          "(the same family and task needed: yolo11n -> yolo11s, yolo11n-cls -> yolo11s-cls)")
    groups = {name: mod.groups for name, mod in wide.named_modules() if isinstance(mod, torch.nn.Conv2d)}
    heads = {name: (mod.key_dim, mod.head_dim) for name, mod in wide.named_modules()
             if hasattr(mod, "qkv") and hasattr(mod, "num_heads")}
    out = {}
    for key, target in big.items():
        source = small[key]
        if source.shape == target.shape and source.ndim < 4:
            out[key] = source.clone()  # counters, and vectors of a layer whose width is kept
            continue
        layer = key.rsplit(".", 1)[0]
        conv = layer if layer in groups else layer.rsplit(".", 1)[0] + ".conv"
        out_map = _channel_map(conv, source.shape[0], target.shape[0], heads, "out")
        if source.ndim < 4 or groups.get(layer, 1) > 1:  # vectors, and depthwise convs: nothing to split
            out[key] = source[out_map]
            continue
        in_map = _channel_map(conv, source.shape[1], target.shape[1], heads, "in")
        w = source[out_map][:, in_map]
        copies = np.bincount(in_map, minlength=source.shape[1])[in_map]
        first_copy = np.unique(in_map, return_index=True)[1][in_map]  # where each input's first copy sits
        share = rng.uniform(*SPLIT_RANGE, size=(len(out_map), len(in_map)))
        # The two copies of an input get share and 1 - share of its weight, per output channel.
        share = np.where(copies == 1, 1.0, np.where(first_copy == np.arange(len(in_map)), share,
                                                     1.0 - share[:, first_copy]))
        out[key] = w * torch.as_tensor(share, dtype=w.dtype)[:, :, None, None]
    return out


def _channel_map(conv: str, narrow: int, wide: int, heads: dict, side: str) -> np.ndarray:
    """For each wide channel of ``conv``'s input or output, the narrow channel it copies."""
    if wide == narrow:
        return np.arange(wide)
    if wide != 2 * narrow:
        raise NiuniuError(f"{conv}: {narrow} channels cannot be widened to {wide} (twice as many needed)")
    attention = conv.rsplit(".", 2)[0]
    if attention in heads:
        key_dim, head_dim = heads[attention]
        part = conv.rsplit(".", 2)[1]
        if part == "qkv" and side == "out":
            return _head_copies(np.arange(wide), 2 * key_dim + head_dim)
        if part == "pe" or (part == "proj" and side == "in"):
            return _head_copies(np.arange(wide), head_dim)
    return np.arange(wide) // 2


def _head_copies(wide_channels: np.ndarray, per_head: int) -> np.ndarray:
    """Wide head ``j`` is a copy of narrow head ``j // 2`` (same head size, twice the heads)."""
    head, offset = np.divmod(wide_channels, per_head)
    return (head // 2) * per_head + offset
