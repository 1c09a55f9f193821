"""The gated feed-forward block: down(act(gate(x)) * up(x)), SwiGLU (silu) or GeGLU (tanh GELU)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from inference.layers.linear import concat_linears


class SwiGLU(nn.Module):
    """The Llama-family MLP; parameter names match the checkpoints (`gate_proj`, `up_proj`, `down_proj`).

    activation: silu (SwiGLU) or gelu_pytorch_tanh (Gemma's GeGLU, GELU's tanh approximation).
    """

    def __init__(
        self, hidden_size: int, intermediate_size: int, bias: bool = False, activation: str = "silu"
    ) -> None:
        super().__init__()
        if activation not in ("silu", "gelu_pytorch_tanh"):
            raise ValueError(f"unsupported activation {activation!r}")
        self.gelu = activation == "gelu_pytorch_tanh"
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=bias)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=bias)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=bias)
        self.intermediate_size = intermediate_size
        # Set by fuse_projections: gate|up from one matrix product (gate/up_proj are then dropped).
        self.gate_up_proj: nn.Module | None = None

    def fuse_projections(self) -> None:
        """Compute gate and up with one matrix product of their stacked weights from now on."""
        self.gate_up_proj = concat_linears(self.gate_proj, self.up_proj)
        del self.gate_proj, self.up_proj

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (T, hidden) -> (T, hidden)."""
        if self.gate_up_proj is not None:
            gate, up = self.gate_up_proj(x).split(self.intermediate_size, dim=-1)  # (T, I) each
        else:
            gate, up = self.gate_proj(x), self.up_proj(x)
        if gate.requires_grad:  # training keeps gate for the backward pass
            activated = F.gelu(gate, approximate="tanh") if self.gelu else F.silu(gate)
            return self.down_proj(activated * up)
        # In place: gate is this call's own, and a prompt's fresh (T, I) costs more than the operation.
        if self.gelu:
            activated = torch.ops.aten.gelu_(gate, approximate="tanh")
        else:
            activated = F.silu(gate, inplace=True)
        if getattr(self.down_proj, "reads_row_views", False):  # the product into gate's columns too
            return self.down_proj(activated.mul_(up))
        return self.down_proj(activated * up)
