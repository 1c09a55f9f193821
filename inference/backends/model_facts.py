"""Facts of the served model that ``GetModelInfo`` reports for clients to size their prompts with:
the reply limits (owned by ``inference/reply_limits.py``) and the tokenizer's characters per token."""

from __future__ import annotations

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.reply_limits import RequestLimits
from inference.tokenizer import Tokenizer

# A fixed sample of ordinary source code (Python, then TypeScript): the rate the language server
# estimates tokens with is measured on it, once at load.
CODE_SAMPLE = '''import os
from dataclasses import dataclass


@dataclass
class Account:
    """A customer's balance, in cents."""

    owner: str
    balance: int = 0

    def deposit(self, amount: int) -> None:
        if amount <= 0:
            raise ValueError(f"cannot deposit {amount}")
        self.balance += amount


def load_accounts(path: str) -> list[Account]:
    accounts = []
    with open(os.path.join(path, "accounts.csv"), encoding="utf-8") as handle:
        for line in handle:
            owner, balance = line.rstrip("\\n").split(",")
            accounts.append(Account(owner, int(balance)))
    return accounts


export function totalBalance(accounts: Array<{ balance: number }>): number {
  let total = 0;
  for (const account of accounts) {
    total += account.balance;
  }
  return total;
}
'''


def measured_chars_per_token(tokenizer: Tokenizer) -> float:
    """Characters of :data:`CODE_SAMPLE` per token of ``tokenizer`` (ModelInfo.chars_per_token)."""
    return len(CODE_SAMPLE) / max(1, len(tokenizer.encode(CODE_SAMPLE)))


def report_limits(info: pb.ModelInfo, limits: RequestLimits) -> pb.ModelInfo:
    """``info`` with the fields that report ``limits`` set."""
    info.max_new_tokens = limits.max_new_tokens
    info.default_completion_tokens = limits.default_completion_tokens
    info.reply_reserve_limit = limits.reply_reserve_limit
    return info
