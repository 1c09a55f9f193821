/**
 * A stand-in for the next-edit controller's host: documents as text, a cursor, requests answered
 * by hand, and every call the controller makes, recorded.
 */
import type { NextEditController } from '../../src/nextEditController';
import type { ControllerTimers, NextEditDisplay, NextEditEditor, PendingRequest } from '../../src/nextEditHost';
import type { InlineEdit, InlineEditParams } from '../../src/nextEditProtocol';
import type { WirePosition } from '../../src/protocol';

export class ManualTimers implements ControllerTimers {
  private next = 0;
  readonly pending = new Map<number, () => void>();
  setTimeout(callback: () => void): unknown {
    this.next += 1;
    this.pending.set(this.next, callback);
    return this.next;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  fire(): void {
    const callbacks = [...this.pending.values()];
    this.pending.clear();
    callbacks.forEach((callback) => callback());
  }
}

function offsetOf(text: string, position: WirePosition): number {
  const lines = text.split('\n');
  return lines.slice(0, position.line).reduce((sum, line) => sum + line.length + 1, 0) + position.character;
}

/** Documents as text, a cursor, and every call the controller makes, recorded. */
export class FakeEditor implements NextEditEditor {
  on = true;
  documents = new Map<string, { text: string; version: number }>();
  /** Files not open in the editor; moveCursor opens them at version 1. */
  disk = new Map<string, string>();
  at: { uri: string; position: WirePosition } | undefined = undefined;
  drawn: (NextEditDisplay | undefined)[] = [];
  context = new Map<string, boolean>();
  requests: { params: InlineEditParams; answer: (result: unknown) => void; cancelled: boolean }[] = [];
  shownNotifications: unknown[] = [];
  commands: { command: string; args: unknown[] }[] = [];
  moves: { uri: string; position: WirePosition }[] = [];
  controller!: NextEditController;

  enabled(): boolean {
    return this.on;
  }
  cursor() {
    if (this.at === undefined) {
      return undefined;
    }
    const document = this.documents.get(this.at.uri);
    return document === undefined ? undefined : { ...this.at, version: document.version };
  }
  versionOf(uri: string): number | undefined {
    return this.documents.get(uri)?.version;
  }
  textIn(uri: string, edit: InlineEdit): string | undefined {
    const text = this.documents.get(uri)?.text;
    return text?.slice(offsetOf(text, edit.range.start), offsetOf(text, edit.range.end));
  }
  /** Applies like VS Code: the change event comes before the promise resolves. */
  apply(edit: InlineEdit): Promise<number | undefined> {
    const uri = edit.textDocument.uri;
    this.type(uri, edit.range.start, edit.range.end, edit.text);
    return Promise.resolve(this.documents.get(uri)!.version);
  }
  moveCursor(uri: string, position: WirePosition): Promise<void> {
    this.moves.push({ uri, position });
    if (!this.documents.has(uri) && this.disk.has(uri)) {
      this.documents.set(uri, { text: this.disk.get(uri)!, version: 1 });
    }
    this.at = { uri, position };
    this.controller.cursorMoved();
    return Promise.resolve();
  }
  draw(display: NextEditDisplay | undefined): void {
    this.drawn.push(display);
  }
  setContext(key: string, value: boolean): void {
    this.context.set(key, value);
  }
  request(params: InlineEditParams): PendingRequest {
    let answer!: (result: unknown) => void;
    let fail!: (error: Error) => void;
    const result = new Promise<unknown>((resolve, reject) => {
      answer = resolve;
      fail = reject;
    });
    const entry = { params, answer, cancelled: false };
    this.requests.push(entry);
    return {
      result,
      cancel: () => {
        entry.cancelled = true;
        fail(new Error('cancelled'));
      },
    };
  }
  notifyShown(params: unknown): void {
    this.shownNotifications.push(params);
  }
  executeCommand(command: string, args: unknown[]): Promise<unknown> {
    this.commands.push({ command, args });
    return Promise.resolve(null);
  }

  /** A change to a document, reported to the controller as VS Code would. */
  type(uri: string, start: WirePosition, end: WirePosition, text: string): void {
    const document = this.documents.get(uri)!;
    document.text = document.text.slice(0, offsetOf(document.text, start)) + text + document.text.slice(offsetOf(document.text, end));
    document.version += 1;
    this.controller.documentChanged(uri);
  }
  get last(): NextEditDisplay | undefined {
    return this.drawn.at(-1);
  }
}
