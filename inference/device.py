"""Device and dtype choice: CUDA when present, float32 on CPU, bfloat16 on CUDA."""

from __future__ import annotations

import torch

DEVICE_CHOICES = ("auto", "cpu", "cuda")


class DeviceError(ValueError):
    """The requested device cannot be used (unknown name, or CUDA asked for without one)."""


def resolve_device(name: str = "auto") -> torch.device:
    """Map `auto|cpu|cuda` (or `cuda:N`) to a torch device; auto picks CUDA when available."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or name.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise DeviceError(f"device {name!r} requested but no CUDA device is available (use --device cpu)")
        device = torch.device(name)
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise DeviceError(
                f"device {name!r} does not exist: {torch.cuda.device_count()} CUDA device(s) found"
            )
        return device
    raise DeviceError(f"unknown device {name!r}: expected one of {', '.join(DEVICE_CHOICES)}")


def default_dtype(device: torch.device) -> torch.dtype:
    """float32 on CPU (bfloat16 matmuls are far slower there), bfloat16 on CUDA."""
    return torch.bfloat16 if device.type == "cuda" else torch.float32


def available_memory_bytes(device: torch.device) -> int:
    """Free memory on `device`: free GPU memory, or MemAvailable of the host for the CPU."""
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(free)
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import os

    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))
