/**
 * The next-edit part of the LSP contract, as Copilot's language server speaks it:
 * `textDocument/copilotInlineEdit` (ask for the edits that likely follow the user's last one),
 * `textDocument/didShowInlineEdit` (one was shown), and the accept / reject commands.
 */
import type { WirePosition, WireRange } from './protocol';

export const INLINE_EDIT_REQUEST = 'textDocument/copilotInlineEdit';
export const DID_SHOW_INLINE_EDIT_NOTIFICATION = 'textDocument/didShowInlineEdit';
export const ACCEPT_INLINE_EDIT_COMMAND = 'codedraft.acceptInlineEdit';
export const REJECT_INLINE_EDIT_COMMAND = 'codedraft.rejectInlineEdit';

/** LSP 3.18's InlineCompletionTriggerKind.Automatic: asked for because the user typed. */
export const TRIGGER_AUTOMATIC = 2;

export interface InlineEditParams {
  textDocument: { uri: string; version: number };
  position: WirePosition;
  context: { triggerKind: number };
}

export interface InlineEditCommand {
  title: string;
  command: string;
  arguments: unknown[];
}

/**
 * One predicted edit: replace `range` of the named document version with `text`. The version is
 * null for a document the server read from disk (not open in the editor).
 */
export interface InlineEdit {
  text: string;
  range: WireRange;
  textDocument: { uri: string; version: number | null };
  command: InlineEditCommand;
}

export interface DidShowInlineEditParams {
  item: { command: InlineEditCommand };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isPosition(value: unknown): value is WirePosition {
  return (
    isRecord(value) &&
    Number.isInteger(value.line) &&
    Number.isInteger(value.character) &&
    (value.line as number) >= 0 &&
    (value.character as number) >= 0
  );
}

function comesBefore(a: WirePosition, b: WirePosition): boolean {
  return a.line < b.line || (a.line === b.line && a.character <= b.character);
}

function isInlineEdit(value: unknown): value is InlineEdit {
  if (!isRecord(value) || typeof value.text !== 'string') {
    return false;
  }
  const { range, textDocument, command } = value;
  return (
    isRecord(range) &&
    isPosition(range.start) &&
    isPosition(range.end) &&
    comesBefore(range.start, range.end) &&
    isRecord(textDocument) &&
    typeof textDocument.uri === 'string' &&
    (typeof textDocument.version === 'number' || textDocument.version === null) &&
    isRecord(command) &&
    typeof command.command === 'string' &&
    (command.arguments === undefined || Array.isArray(command.arguments))
  );
}

/**
 * The edits of a `copilotInlineEdit` result, in the server's order (the first is shown now). A
 * malformed edit is dropped with the ones after it, since they follow from it; a malformed result
 * is no edit at all.
 */
export function inlineEditsOf(result: unknown): InlineEdit[] {
  if (!isRecord(result) || !Array.isArray(result.edits)) {
    return [];
  }
  const edits: InlineEdit[] = [];
  for (const item of result.edits as unknown[]) {
    if (!isInlineEdit(item)) {
      break;
    }
    edits.push({
      text: item.text,
      range: {
        start: { line: item.range.start.line, character: item.range.start.character },
        end: { line: item.range.end.line, character: item.range.end.character },
      },
      textDocument: { uri: item.textDocument.uri, version: item.textDocument.version ?? null },
      command: {
        title: typeof item.command.title === 'string' ? item.command.title : '',
        command: item.command.command,
        arguments: item.command.arguments ?? [],
      },
    });
  }
  return edits;
}
