"""A `Tokenizer` rebuilt from a GGUF file's vocabulary, splitting text the way llama.cpp does.

A GGUF file has no `tokenizer.json`: it stores the tokens, their types, the merges (byte-level BPE,
`tokenizer.ggml.model = gpt2`) or the scores (SentencePiece, `llama`), and names the pre-tokenizer
(`tokenizer.ggml.pre`) whose splitting rules llama.cpp keeps in its source. The same rules, written
as `tokenizers` pre-tokenizers, give the ids the model was trained on.
"""

from __future__ import annotations

from typing import Any

from gguf import Keys, TokenType
from tokenizers import AddedToken, Regex, decoders, models, pre_tokenizers
from tokenizers import Tokenizer as HFTokenizer

from inference.loading.gguf_metadata import GGUFFile
from inference.loading.model_form import ModelLoadError
from inference.tokenizer import Tokenizer

_GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
_LLAMA3 = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2 = _LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}")

# llama.cpp's splitting rules by `tokenizer.ggml.pre` (src/llama-vocab.cpp): regular expressions
# applied in turn, each splitting the pieces of the one before, and whether a piece that is itself a
# token skips the merges (`ignore_merges`).
_SPLITS: dict[str, tuple[tuple[str, ...], bool]] = {
    "default": ((r"[\p{P}\$\+<=>\^~\|]+", _GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"), False),
    "gpt2": ((_GPT2,), False),
    "gpt-2": ((_GPT2,), False),
    "llama-bpe": ((_LLAMA3,), True),
    "llama3": ((_LLAMA3,), True),
    "llama-v3": ((_LLAMA3,), True),
    "smaug-bpe": ((_LLAMA3,), True),
    "dbrx": ((_LLAMA3,), True),
    "qwen2": ((_QWEN2,), False),
    "deepseek-r1-qwen": ((_QWEN2,), False),
    "smollm": ((r"\p{N}", _GPT2), False),
    "starcoder": ((r"\p{N}", _GPT2), False),
    "refact": ((r"\p{N}", _GPT2), False),
    "codeshell": ((r"\p{N}", _GPT2), False),
    "deepseek-coder": ((r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", r"[一-龥ࠀ-一가-퟿]+", r"\p{N}"), False),
}
SUPPORTED_MODELS = ("gpt2", "llama")


def _byte_level(file: GGUFFile, tokens: list[str]) -> HFTokenizer:
    pre = str(file.value(Keys.Tokenizer.PRE, "default"))
    if pre not in _SPLITS:
        known = ", ".join(sorted(_SPLITS))
        raise ModelLoadError(
            f"{file.path.name} names the pre-tokenizer {pre!r}, whose splitting rules codedraft does not "
            f"know (known: {known}); use the model's Hugging Face folder"
        )
    merges = file.value(Keys.Tokenizer.MERGES)
    if not merges:
        raise ModelLoadError(f"{file.path.name} has a byte-level BPE vocabulary without merges")
    patterns, ignore_merges = _SPLITS[pre]
    vocab = {token: index for index, token in enumerate(tokens)}
    pairs = [tuple(merge.split(" ", 1)) for merge in merges]
    tokenizer = HFTokenizer(models.BPE(vocab, pairs, ignore_merges=ignore_merges))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(pattern), behavior="isolated") for pattern in patterns]
        + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def _ranked_merges(tokens: list[str], scores: list[float], vocab: dict[str, int]) -> list[tuple[str, str]]:
    """Every split of a piece into two pieces of the vocabulary, as a merge, ranked by the score of the
    piece it makes (best first; ties by the two parts' ids). The parts are the vocabulary's own strings
    (no copy each), and a merge is ranked as three numbers until its strings are listed."""
    ranked: list[tuple[float, int, int]] = []
    index_of = vocab.get
    for piece, score in zip(tokens, scores, strict=True):
        for cut in range(1, len(piece)):
            left = index_of(piece[:cut])
            if left is not None:
                right = index_of(piece[cut:])
                if right is not None:
                    ranked.append((-score, left, right))
    ranked.sort()
    return [(tokens[left], tokens[right]) for _, left, right in ranked]


def _sentencepiece(file: GGUFFile, tokens: list[str], types: list[int]) -> HFTokenizer:
    """SentencePiece BPE: merges ranked by the score of the piece they make, bytes as <0xNN> tokens."""
    scores = file.required(Keys.Tokenizer.SCORES)
    vocab = {token: index for index, token in enumerate(tokens)}
    merges = _ranked_merges(tokens, scores, vocab)
    unknown = next((tokens[i] for i, t in enumerate(types) if t == TokenType.UNKNOWN), None)
    tokenizer = HFTokenizer(
        models.BPE(
            vocab,
            merges,
            unk_token=unknown,
            fuse_unk=True,
            byte_fallback=True,
        )
    )
    prepend = "first" if file.value(Keys.Tokenizer.ADD_PREFIX, True) else "never"
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme=prepend, split=False)
    steps = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    if prepend == "first":
        steps.append(decoders.Strip(content=" ", left=1, right=0))
    tokenizer.decoder = decoders.Sequence(steps)
    return tokenizer


def gguf_tokenizer(file: GGUFFile) -> Tokenizer:
    """The file's tokenizer with its special tokens, end-of-sequence ids and chat template."""
    kind = file.value(Keys.Tokenizer.MODEL)
    if kind not in SUPPORTED_MODELS:
        raise ModelLoadError(
            f"{file.path.name} has a {kind!r} tokenizer, which codedraft does not build from GGUF "
            f"(supported: {', '.join(SUPPORTED_MODELS)}); use the model's Hugging Face folder"
        )
    tokens = [str(t) for t in file.required(Keys.Tokenizer.LIST)]
    types = [int(t) for t in file.value(Keys.Tokenizer.TOKEN_TYPE, [TokenType.NORMAL] * len(tokens))]
    tokenizer = _byte_level(file, tokens) if kind == "gpt2" else _sentencepiece(file, tokens, types)
    # Control tokens (<|im_start|>, <s>) are special; user-defined ones are matched whole but are text.
    tokenizer.add_special_tokens(
        [
            AddedToken(token, special=True, normalized=False)
            for token, kind_of in zip(tokens, types, strict=True)
            if kind_of == TokenType.CONTROL
        ]
    )
    tokenizer.add_tokens(
        [
            AddedToken(token, special=False, normalized=False)
            for token, kind_of in zip(tokens, types, strict=True)
            if kind_of == TokenType.USER_DEFINED
        ]
    )

    def token_at(key: str) -> str | None:
        index = file.value(key)
        return tokens[int(index)] if index is not None and 0 <= int(index) < len(tokens) else None

    config: dict[str, Any] = {
        "bos_token": token_at(Keys.Tokenizer.BOS_ID),
        "eos_token": token_at(Keys.Tokenizer.EOS_ID),
        "add_bos_token": bool(file.value(Keys.Tokenizer.ADD_BOS, kind == "llama")),
    }
    template = file.value(Keys.Tokenizer.CHAT_TEMPLATE)
    if template:
        config["chat_template"] = str(template)
    # Chat models end a turn with a token of its own (<|eot_id|>, <|im_end|>) besides the EOS.
    extra_eos = [file.value(key) for key in (Keys.Tokenizer.EOT_ID, Keys.Tokenizer.EOM_ID)]
    return Tokenizer(tokenizer, config, extra_eos_ids=[int(i) for i in extra_eos if i is not None])
