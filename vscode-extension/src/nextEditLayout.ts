/**
 * Where and how a predicted edit is drawn, with no editor in sight: the part of its range that
 * really changes (struck through), the new text beside it, whether Tab applies it at once or first
 * jumps to it, the hint shown at the cursor when it is elsewhere, and how the edits that follow
 * move once one is applied.
 */
import type { InlineEdit } from './nextEditProtocol';
import type { WirePosition, WireRange } from './protocol';

/** An edit at most this many lines above or below the cursor is applied by Tab without a jump. */
export const NEAR_LINES = 3;

/** Longest preview of the new text drawn in the line; the whole text is in the hover. */
const PREVIEW_CHARS = 80;

/** The cursor: a place in a document. */
export interface Cursor {
  uri: string;
  position: WirePosition;
}

/** `near`: Tab applies it; `elsewhere`: same file, far from the cursor; `otherFile`: Tab opens it. */
export type Place = 'near' | 'elsewhere' | 'otherFile';

/**
 * What an edit changes once the text its range covers and its new text are stripped of what they
 * share at both ends: `deleted` (absent for a pure insertion) is struck through and `inserted`
 * (empty for a pure deletion) is drawn at `insertAt`, the end of `deleted`.
 */
export interface EditParts {
  deleted: WireRange | undefined;
  insertAt: WirePosition;
  inserted: string;
}

/** The position reached from `start` by walking over `text`. */
export function advance(start: WirePosition, text: string): WirePosition {
  const lines = text.split('\n');
  if (lines.length === 1) {
    return { line: start.line, character: start.character + text.length };
  }
  return { line: start.line + lines.length - 1, character: lines[lines.length - 1].length };
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/** Splits an edit into what it deletes and what it inserts; `oldText` is the text of its range. */
export function partsOf(edit: InlineEdit, oldText: string): EditParts {
  const newText = edit.text;
  const most = Math.min(oldText.length, newText.length);
  let prefix = 0;
  while (prefix < most && oldText[prefix] === newText[prefix]) {
    prefix += 1;
  }
  // Never cut a surrogate pair: columns count UTF-16 units and a half character draws as garbage.
  if (prefix > 0 && isHighSurrogate(oldText.charCodeAt(prefix - 1))) {
    prefix -= 1;
  }
  let suffix = 0;
  while (suffix < most - prefix && oldText[oldText.length - 1 - suffix] === newText[newText.length - 1 - suffix]) {
    suffix += 1;
  }
  if (suffix > 0 && isLowSurrogate(oldText.charCodeAt(oldText.length - suffix))) {
    suffix -= 1;
  }
  const start = advance(edit.range.start, oldText.slice(0, prefix));
  const removed = oldText.slice(prefix, oldText.length - suffix);
  const end = advance(start, removed);
  return {
    deleted: removed.length > 0 ? { start, end } : undefined,
    insertAt: end,
    inserted: newText.slice(prefix, newText.length - suffix),
  };
}

/** Whether Tab applies the edit where the cursor is, or first jumps to it. */
export function placeOf(edit: InlineEdit, cursor: Cursor | undefined): Place {
  if (cursor === undefined || cursor.uri !== edit.textDocument.uri) {
    return 'otherFile';
  }
  const line = cursor.position.line;
  const { start, end } = edit.range;
  const distance = line < start.line ? start.line - line : line > end.line ? line - end.line : 0;
  return distance <= NEAR_LINES ? 'near' : 'elsewhere';
}

/** The last part of a URI's path, as the hint names another file. */
export function fileNameOf(uri: string): string {
  const path = uri.replace(/[?#].*$/, '');
  const name = path.slice(path.lastIndexOf('/') + 1);
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** The hint drawn at the end of the cursor's line for an edit Tab first jumps to. */
export function hintText(edit: InlineEdit, place: Place): string | undefined {
  const line = edit.range.start.line + 1;
  switch (place) {
    case 'near':
      return undefined;
    case 'elsewhere':
      return `⇥ Tab: next edit at line ${line}`;
    case 'otherFile':
      return `⇥ Tab: next edit in ${fileNameOf(edit.textDocument.uri)} (line ${line})`;
  }
}

/** The new text as one drawn line: multi-line text shows its first line and how many follow. */
export function previewOf(inserted: string): string {
  const lines = inserted.split('\n');
  const more = lines.length - 1;
  let first = lines[0];
  if (first.length > PREVIEW_CHARS) {
    first = `${first.slice(0, PREVIEW_CHARS)}…`;
  }
  return more === 0 ? first : `${first} ⏎ … (+${more} line${more === 1 ? '' : 's'})`;
}

function before(a: WirePosition, b: WirePosition): boolean {
  return a.line < b.line || (a.line === b.line && a.character < b.character);
}

/** Moves a position that lies at or after the end of an applied edit by what the edit changed. */
function shiftPosition(position: WirePosition, applied: InlineEdit): WirePosition {
  const { end } = applied.range;
  const newEnd = advance(applied.range.start, applied.text);
  if (position.line !== end.line) {
    return { line: position.line + newEnd.line - end.line, character: position.character };
  }
  return { line: newEnd.line, character: newEnd.character + position.character - end.character };
}

/**
 * The edits that followed `applied`, made valid against the document it produced (`newVersion`):
 * those in the same document after it move with the text, those overlapping it are dropped (they
 * were about text that is gone), those before it or in other documents stay as they are.
 */
export function editsAfterApplying(rest: InlineEdit[], applied: InlineEdit, newVersion: number): InlineEdit[] {
  const uri = applied.textDocument.uri;
  const kept: InlineEdit[] = [];
  for (const edit of rest) {
    if (edit.textDocument.uri !== uri) {
      kept.push(edit);
      continue;
    }
    const { start, end } = edit.range;
    const isAfter = !before(start, applied.range.end);
    const isBefore = !before(applied.range.start, end);
    if (!isAfter && !isBefore) {
      continue;
    }
    const range = isAfter ? { start: shiftPosition(start, applied), end: shiftPosition(end, applied) } : edit.range;
    kept.push({ ...edit, range, textDocument: { uri, version: newVersion } });
  }
  return kept;
}
