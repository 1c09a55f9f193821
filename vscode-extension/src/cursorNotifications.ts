/**
 * Tells the language server where the cursor rests (`codedraft/cursor`), so that it can compute the
 * prompt there before the first suggestion is asked for (LSP has no cursor notification of its own).
 *
 * Selection changes are debounced: only where the cursor stops is sent, not every step of a drag or
 * of holding an arrow key. A newly active editor is sent at once. Documents the client does not
 * synchronise (output panels, git views) are skipped; the server ignores documents it has not opened.
 */
import { CURSOR_NOTIFICATION, type CursorParams, type WirePosition } from './protocol';

/** Milliseconds the cursor must stay before its place is sent. */
export const CURSOR_DEBOUNCE_MS = 100;

/** URI schemes of documents the language client synchronises (its document selector). */
const SYNCHRONISED_SCHEMES = ['file', 'untitled'];

export interface CursorTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export class CursorNotifier {
  private pending: unknown;
  private last: string | undefined;

  constructor(
    private readonly send: (method: string, params: CursorParams) => void,
    private readonly debounceMs: number = CURSOR_DEBOUNCE_MS,
    private readonly timers: CursorTimers = { setTimeout, clearTimeout },
  ) {}

  /** The selection of an editor changed: send where its cursor rests once it stays there. */
  selectionChanged(uri: string, scheme: string, position: WirePosition): void {
    this.cancel();
    if (!SYNCHRONISED_SCHEMES.includes(scheme)) {
      return;
    }
    this.pending = this.timers.setTimeout(() => {
      this.pending = undefined;
      this.emit(uri, position);
    }, this.debounceMs);
  }

  /** Another editor became active: send its cursor at once. */
  editorActivated(uri: string, scheme: string, position: WirePosition): void {
    this.cancel();
    if (SYNCHRONISED_SCHEMES.includes(scheme)) {
      this.emit(uri, position);
    }
  }

  /** Drops a place not sent yet (the server stopped, or the extension deactivates). */
  cancel(): void {
    if (this.pending !== undefined) {
      this.timers.clearTimeout(this.pending);
      this.pending = undefined;
    }
  }

  /** A new server knows no place yet: the next one is sent even if it is the last one sent. */
  forget(): void {
    this.cancel();
    this.last = undefined;
  }

  private emit(uri: string, position: WirePosition): void {
    const key = `${uri}:${position.line}:${position.character}`;
    if (key === this.last) {
      return; // the server already knows this place
    }
    this.last = key;
    this.send(CURSOR_NOTIFICATION, {
      textDocument: { uri },
      position: { line: position.line, character: position.character },
    });
  }
}
