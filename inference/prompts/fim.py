"""Fill-in-the-middle prompt templates, one per model family, detected from the tokenizer.

Each template lays the prompt out from the most stable part to the least: context snippets (as
files of the same repository), the current file's path, then the cursor's surroundings. In SPM
order the suffix comes before the prefix, so typing at the cursor only appends tokens and the KV
prefix cache keeps everything before it.

The layouts follow each family's own documentation:
* Qwen2.5-Coder: PSM only; repository context `<|repo_name|>{repo}\n<|file_sep|>{path}\n{code}\n`...,
  then `<|file_sep|>{path}\n<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>`.
* StarCoder2: PSM and SPM; `<repo_name>{repo}<file_sep>{path}\n{code}`..., then the file itself as
  `<file_sep><fim_prefix>{path}\n{prefix}<fim_suffix>{suffix}<fim_middle>` (the path opens the prefix).
* DeepSeek-Coder: PSM only, BOS first; repository files go into the prefix headed by `# {path}`.
* CodeLlama: PSM and SPM (`▁<PRE>▁<SUF>{suffix}▁<MID>{prefix}`), BOS first; no repository format.
* Codestral (Mistral): SPM only, `[SUFFIX]{suffix}[PREFIX]{prefix}`, BOS first; no repository format.
* prefix-only (no FIM tokens): the model's document start, then the prefix (`prefix_only.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inference.prompts.prefix_only import document_start
from inference.tokenizer import Tokenizer

Snippet = tuple[str, str]  # (path, text) of a context snippet


@dataclass(frozen=True)
class FimTemplate:
    """The FIM format of one model family.

    `family` is one of FAMILIES; `prefix`, `suffix`, `middle` are that family's special-token texts
    and `file_sep` its file separator ("" when the family has none: snippets then go in as comments
    at the top of the prefix). `stop_tokens` end a completion; `stop_token_ids` are their ids in the
    tokenizer the template was detected from.
    """

    family: str
    prefix: str
    suffix: str
    middle: str
    file_sep: str = ""
    repo_name: str = ""
    bos: str = ""
    supports_spm: bool = False
    stop_tokens: tuple[str, ...] = ()
    stop_token_ids: frozenset[int] = frozenset()

    def context(self, snippets: Sequence[Snippet], path: str | None, repo: str = "") -> str:
        """The text in front of the cursor's surroundings: the snippets as files, then the file's path
        (StarCoder2 puts the path at the start of the prefix instead; see build)."""
        if self.file_sep:
            if not snippets and not path:
                return ""
            files = "".join(f"{self.file_sep}{p}\n{text}\n" for p, text in snippets)
            if self.repo_name and snippets:
                files = f"{self.repo_name}{repo}{'' if self.family == 'starcoder2' else chr(10)}{files}"
            if self.family == "starcoder2":  # the file's path opens its prefix, after <fim_prefix>
                return f"{files}{self.file_sep}"
            return f"{files}{self.file_sep}{path or 'untitled'}\n"
        # No file separator token: repository context as comment-headed files, then the file itself.
        files = "".join(f"# {p}\n{text}\n" for p, text in snippets)
        return files + (f"# {path}\n" if path and snippets else "")

    def build(
        self,
        prefix: str,
        suffix: str,
        snippets: Sequence[Snippet] = (),
        path: str | None = None,
        spm: bool | None = None,
        *,
        line_after_middle: bool = False,
        repo: str = "",
    ) -> str:
        """The prompt text (with special tokens) for a completion between `prefix` and `suffix`.

        spm: None picks the family's preferred order (SPM where supported); True on a PSM-only
        family is a ValueError.
        line_after_middle: PSM only, llama.cpp's layout for PSM-only models: the text of the cursor's
        line goes after the middle token (as the start of the middle), so typing on a line appends
        tokens instead of changing the prefix in front of the suffix.
        repo: the repository's name, for the families whose repository format names it.
        """
        if self.family == "codestral":
            if spm is False or line_after_middle:
                raise ValueError("the codestral FIM format has only the suffix-prefix order")
            files = "".join(f"# {p}\n{text}\n" for p, text in snippets)
            header = f"# {path}\n" if path and snippets else ""
            return f"{self.bos}{self.suffix}{suffix}{self.prefix}{files}{header}{prefix}"
        if spm and not self.supports_spm:
            raise ValueError(f"the {self.family} FIM format has no suffix-prefix-middle order")
        use_spm = self.supports_spm if spm is None else spm
        if line_after_middle and use_spm:
            raise ValueError("line_after_middle is a prefix-suffix-middle layout; pass spm=False")
        context = self.context(snippets, path, repo)
        if self.family == "starcoder2" and context:
            prefix = f"{path or 'untitled'}\n{prefix}"
        if self.family == "prefix-only":
            return f"{self.bos}{context}{prefix}"
        tail = ""
        if line_after_middle:
            cut = prefix.rfind("\n") + 1
            prefix, tail = prefix[:cut], prefix[cut:]
        if self.family in ("deepseek", "codellama"):
            # These formats carry the repository context inside the prefix part.
            if use_spm:
                return f"{self.bos}{self.prefix}{self.suffix}{suffix}{self.middle}{context}{prefix}"
            return f"{self.bos}{self.prefix}{context}{prefix}{self.suffix}{suffix}{self.middle}{tail}"
        if use_spm and self.family == "starcoder2":
            return f"{context}{self.prefix}{self.suffix}{suffix}{self.middle}{prefix}"
        if use_spm:
            return f"{context}{self.suffix}{suffix}{self.prefix}{prefix}{self.middle}"
        return f"{context}{self.prefix}{prefix}{self.suffix}{suffix}{self.middle}{tail}"


_QWEN_TOKENS = ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|file_sep|>")
_QWEN_STOPS = (
    "<|endoftext|>",
    "<|fim_pad|>",
    "<|file_sep|>",
    "<|im_end|>",
    "<|repo_name|>",
    *_QWEN_TOKENS[:3],
)
_STARCODER_TOKENS = ("<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<file_sep>")
_STARCODER_STOPS = ("<|endoftext|>", "<fim_pad>", "<file_sep>", "<repo_name>", *_STARCODER_TOKENS[:3])
_DEEPSEEK_TOKENS = ("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>")
_DEEPSEEK_STOPS = ("<｜end▁of▁sentence｜>", "<|EOT|>", *_DEEPSEEK_TOKENS)
_CODESTRAL_TOKENS = ("[PREFIX]", "[SUFFIX]", "[MIDDLE]")
_CODESTRAL_STOPS = ("</s>", *_CODESTRAL_TOKENS)
_REPO_NAME = {"qwen": "<|repo_name|>", "starcoder2": "<repo_name>"}
FAMILIES = ("codedraft", "qwen", "starcoder2", "deepseek", "codellama", "codestral", "prefix-only")


def _codellama_tokens(tokenizer: Tokenizer) -> tuple[str, str, str, str] | None:
    for marker in ("▁", ""):
        names = tuple(f"{marker}<{t}>" for t in ("PRE", "SUF", "MID", "EOT"))
        if all(tokenizer.token_id(n) is not None for n in names[:3]):
            return names[0], names[1], names[2], names[3]
    return None


def _layout(
    family: str, tokenizer: Tokenizer | None
) -> tuple[tuple[str, str, str, str], bool, tuple[str, ...]]:
    """((prefix, suffix, middle, file_sep) token texts, supports SPM, stop tokens) of a family."""
    if family in ("codedraft", "qwen"):
        return _QWEN_TOKENS, family == "codedraft", _QWEN_STOPS
    if family == "starcoder2":
        return _STARCODER_TOKENS, True, _STARCODER_STOPS
    if family == "deepseek":
        return (*_DEEPSEEK_TOKENS, ""), False, _DEEPSEEK_STOPS
    if family == "codellama":
        found = _codellama_tokens(tokenizer) if tokenizer is not None else None
        pre, suf, mid, eot = found or ("▁<PRE>", "▁<SUF>", "▁<MID>", "▁<EOT>")
        return (pre, suf, mid, ""), True, (eot,)
    if family == "codestral":
        return (*_CODESTRAL_TOKENS, ""), True, _CODESTRAL_STOPS
    if family == "prefix-only":
        return ("", "", "", ""), False, ()
    raise ValueError(f"unknown FIM template {family!r}: expected one of {', '.join(FAMILIES)}")


def fim_layout(family: str) -> FimTemplate:
    """A family's prompt layout with no tokenizer at hand: no stop tokens, and no BOS (which only the
    families without a file separator put first). Training writes its examples with it, so they are
    laid out as the engine lays out its prompts."""
    (prefix, suffix, middle, file_sep), supports_spm, _ = _layout(family, None)
    return FimTemplate(family, prefix, suffix, middle, file_sep=file_sep, supports_spm=supports_spm)


def _template(family: str, tokenizer: Tokenizer) -> FimTemplate:
    (prefix, suffix, middle, file_sep), supports_spm, stops = _layout(family, tokenizer)
    # Families without a file separator expect BOS first (their tokenizers add it to every text); a
    # model without FIM tokens gets its real document start, never a chat-turn opener.
    bos = (tokenizer.bos_token or "") if not file_sep else ""
    if family == "prefix-only":
        bos = document_start(tokenizer)
    repo_name = _REPO_NAME.get(family, "")
    if tokenizer.token_id(repo_name) is None:
        repo_name = ""
    candidates = tuple(dict.fromkeys((*stops, *((tokenizer.eos_token,) if tokenizer.eos_token else ()))))
    present = tuple(t for t in candidates if tokenizer.token_id(t) is not None)
    stop_ids = {tokenizer.token_id(t) for t in present} | set(tokenizer.eos_token_ids)
    return FimTemplate(
        family=family,
        prefix=prefix,
        suffix=suffix,
        middle=middle,
        file_sep=file_sep,
        repo_name=repo_name,
        bos=bos,
        supports_spm=supports_spm,
        stop_tokens=present,
        stop_token_ids=frozenset(i for i in stop_ids if i is not None),
    )


def detect_fim_family(tokenizer: Tokenizer) -> str:
    """The FIM family of a tokenizer: `fim_template` in tokenizer_config.json, else its special tokens."""
    named = tokenizer.config.get("fim_template")
    if isinstance(named, str):
        return named

    def has(*tokens: str) -> bool:
        return all(tokenizer.token_id(t) is not None for t in tokens)

    if has(*_QWEN_TOKENS[:3]):
        return "qwen"
    if has(*_STARCODER_TOKENS[:3]):
        return "starcoder2"
    if has(*_DEEPSEEK_TOKENS):
        return "deepseek"
    if _codellama_tokens(tokenizer) is not None:
        return "codellama"
    if has(*_CODESTRAL_TOKENS[:2]):
        return "codestral"
    return "prefix-only"


def fim_template_for(tokenizer: Tokenizer) -> FimTemplate:
    """The FIM template of the model the tokenizer belongs to (ValueError on an unknown `fim_template`)."""
    return _template(detect_fim_family(tokenizer), tokenizer)
