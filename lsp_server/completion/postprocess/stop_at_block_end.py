"""Stop a multi-line suggestion where it leaves the block the cursor is in (by indentation)."""

from __future__ import annotations

from lsp_server.completion.postprocess.context import CursorContext, indent_width

_BLOCK_OPENERS = (":", "{", "(", "[", "=>", "->", " do", " then")


def opens_block(line: str) -> bool:
    """Whether ``line`` ends by opening a block (``def f():``, ``if (x) {``, ``call(``): the lines
    after it are that block's body."""
    return line.rstrip().endswith(_BLOCK_OPENERS)


def stop_at_block_end(context: CursorContext, text: str) -> str | None:
    """Cuts the suggestion where it leaves the cursor's block.

    Lines indented less than the cursor line leave the block: the suggestion stops before them. When
    the cursor line (with the suggestion's first line) opens a block, such as ``def f():`` or
    ``if (x) {``, the suggestion is that block's body: it stops before the first line back at the
    cursor line's level, keeping it only if it is a closing bracket (``}``), which ends the block.
    """
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    base = context.line_indent
    opener = opens_block(context.line_prefix + lines[0])
    kept = [lines[0]]
    for line in lines[1:]:
        stripped = line.strip()
        if not stripped:
            kept.append(line)
            continue
        indent = indent_width(line)
        if indent < base:
            break
        if opener and indent == base:
            if stripped[0] in "}])":
                kept.append(line)
            break
        kept.append(line)
    return "\n".join(kept)
