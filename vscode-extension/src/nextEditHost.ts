/**
 * What the next-edit controller needs from its host: the editor (documents, cursor, edits,
 * decorations, context keys), the language server, and timers. VS Code provides it in
 * `nextEditEditor.ts`; the tests provide a fake.
 */
import type { Cursor, EditParts } from './nextEditLayout';
import type { DidShowInlineEditParams, InlineEdit, InlineEditParams } from './nextEditProtocol';
import type { WirePosition } from './protocol';

/** One request in flight; `cancel` tells the server it is no longer wanted. */
export interface PendingRequest {
  result: Promise<unknown>;
  cancel(): void;
}

/** What the controller draws: the edit's parts in its document, and the hint at the cursor. */
export interface NextEditDisplay {
  uri: string;
  parts: EditParts | undefined;
  hint: { uri: string; line: number; text: string } | undefined;
}

/** The editor and the language server, as the controller sees them. */
export interface NextEditEditor {
  enabled(): boolean;
  cursor(): (Cursor & { version: number }) | undefined;
  /** The open document's version, or undefined when it is not open. */
  versionOf(uri: string): number | undefined;
  /** The text of a range of an open document, or undefined when it is not open. */
  textIn(uri: string, edit: InlineEdit): string | undefined;
  /** Applies the edit; resolves to the document's new version, or undefined when it failed. */
  apply(edit: InlineEdit): Promise<number | undefined>;
  /** Opens the document if need be and puts the cursor at `position`, revealed. */
  moveCursor(uri: string, position: WirePosition): Promise<void>;
  draw(display: NextEditDisplay | undefined): void;
  setContext(key: string, value: boolean): void;
  request(params: InlineEditParams): PendingRequest;
  notifyShown(params: DidShowInlineEditParams): void;
  executeCommand(command: string, args: unknown[]): Promise<unknown>;
}

export interface ControllerTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}
