"""RMSNorm as the Llama family computes it (in float32, weight applied after casting back)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    """y = weight * x / sqrt(mean(x^2) + eps) over the last dimension."""

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps
        # Set with the q4_1 weights form (CPU, float32): one call of the kernels' rms_norm,
        # the same arithmetic in one pass instead of ATen's six small operations.
        self.kernel = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalise the last dimension of x; returns x's dtype."""
        if self.kernel:
            return torch.ops.codedraft_cpu.rms_norm(x, self.weight, self.eps)
        if x.dtype == torch.float32 and self.weight.dtype == torch.float32:
            # One fused call, the same arithmetic as the lines below (a decode step runs 2 per layer).
            return F.rms_norm(x, self.weight.shape, self.weight, self.eps)
        dtype = x.dtype
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * xf.to(dtype)
