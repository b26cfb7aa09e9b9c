"""The one place that turns a ``--device`` value into a torch device.

Every grader that loads a model resolves its device here first, so that a wrong device is
reported as such (not as a model that cannot load) before any weights are read. A name that is
no device is refused without importing torch.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from exampp.errors import ExamppError

if TYPE_CHECKING:
    import torch

_DEVICE = re.compile(r"auto|cpu|cuda(?::(\d+))?")
_KINDS = "auto, cpu, cuda or cuda:N"


class DeviceError(ExamppError, ValueError):
    """A ``--device`` value that names no device, or a CUDA device torch cannot use."""


def resolve_device(device: str) -> "torch.device":
    """``auto`` -> CUDA when torch sees a GPU, else the CPU; ``cpu``; ``cuda`` or ``cuda:N`` when
    torch sees that GPU. :class:`DeviceError` otherwise, saying what is wrong and what is valid here."""
    match = _DEVICE.fullmatch(device)
    if match is None:
        raise DeviceError(f"--device {device!r} is not a device: use {_KINDS}")
    import torch

    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device != "cpu":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if torch.version.cuda is None:
            raise _unusable(device, "this torch is a CPU-only build, without CUDA", count)
        if count == 0:
            raise _unusable(device, f"torch (CUDA {torch.version.cuda}) sees no CUDA GPU", count)
        if int(match.group(1) or 0) >= count:
            raise _unusable(device, f"torch sees {count} CUDA GPU{'s' if count > 1 else ''}", count)
    return torch.device(device)


def _unusable(device: str, problem: str, count: int) -> DeviceError:
    valid = ["auto", "cpu"] + (["cuda"] + [f"cuda:{i}" for i in range(count)] if count else [])
    return DeviceError(f"--device {device!r}: {problem}; use {', '.join(valid[:-1])} or {valid[-1]}")
