/**
 * The single argument of `codedraft.refactor` and `codedraft.fix`, built from the editor when the
 * command comes from the palette or the context menu, or taken as given from a code action.
 */
import type { FixArguments, RefactorArguments, WirePosition, WireRange } from './protocol';
import { isRangeTarget } from './protocol';

/** The parts of `vscode.Position`, `Range`, `Selection` and `TextEditor` read here. */
export interface PositionLike {
  line: number;
  character: number;
}

export interface RangeLike {
  start: PositionLike;
  end: PositionLike;
}

export interface EditorLike {
  document: { uri: { toString(): string } };
  selection: RangeLike & { active: PositionLike; isEmpty: boolean };
}

function toWirePosition(position: PositionLike): WirePosition {
  return { line: position.line, character: position.character };
}

export function toWireRange(range: RangeLike): WireRange {
  return { start: toWirePosition(range.start), end: toWirePosition(range.end) };
}

function compare(a: PositionLike, b: PositionLike): number {
  return a.line === b.line ? a.character - b.character : a.line - b.line;
}

function contains(range: RangeLike, position: PositionLike): boolean {
  return compare(range.start, position) <= 0 && compare(position, range.end) <= 0;
}

/** The selection to refactor, or undefined when nothing is selected. */
export function refactorTarget(editor: EditorLike): { uri: string; range: WireRange } | undefined {
  if (editor.selection.isEmpty) {
    return undefined;
  }
  return { uri: editor.document.uri.toString(), range: toWireRange(editor.selection) };
}

export function refactorArguments(target: { uri: string; range: WireRange }, instruction: string): RefactorArguments {
  return { uri: target.uri, range: target.range, instruction: instruction.trim() };
}

function overlaps(a: RangeLike, b: RangeLike): boolean {
  return compare(a.start, b.end) <= 0 && compare(b.start, a.end) <= 0;
}

/**
 * What "the problems at the cursor" means: the selection if there is one; otherwise the span of
 * every diagnostic that touches the cursor; otherwise the empty range at the cursor, and the
 * server looks at the problems of that line. The messages of the problems in the range go along.
 */
export function fixArguments(
  editor: EditorLike,
  diagnostics: readonly { range: RangeLike; message: string }[],
): FixArguments {
  const uri = editor.document.uri.toString();
  if (!editor.selection.isEmpty) {
    const selection = editor.selection;
    const inside = diagnostics.filter((d) => overlaps(d.range, selection)).map((d) => d.message);
    return { uri, range: toWireRange(selection), diagnostics: inside };
  }
  const cursor = editor.selection.active;
  const touching = diagnostics.filter((d) => contains(d.range, cursor));
  if (touching.length === 0) {
    return { uri, range: { start: toWirePosition(cursor), end: toWirePosition(cursor) }, diagnostics: [] };
  }
  let start = touching[0].range.start;
  let end = touching[0].range.end;
  for (const { range } of touching.slice(1)) {
    start = compare(range.start, start) < 0 ? range.start : start;
    end = compare(range.end, end) > 0 ? range.end : end;
  }
  return {
    uri,
    range: { start: toWirePosition(start), end: toWirePosition(end) },
    diagnostics: touching.map((d) => d.message),
  };
}

/** A refactor argument that came with the command (from a code action), complete or not. */
export function givenRefactorArgument(
  args: readonly unknown[],
): { target: { uri: string; range: WireRange }; instruction: string | undefined } | undefined {
  const first = args[0];
  if (!isRangeTarget(first)) {
    return undefined;
  }
  const instruction = (first as { instruction?: unknown }).instruction;
  return {
    target: { uri: first.uri, range: first.range },
    instruction: typeof instruction === 'string' && instruction.trim().length > 0 ? instruction : undefined,
  };
}
