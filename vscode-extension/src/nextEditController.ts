/**
 * Next-edit suggestions in the editor: after the user changes a document (debounced) it asks the
 * server for the edits that likely follow, shows the first, and steps through them with Tab (apply
 * when near the cursor, else jump there first) until Esc or a keystroke of the user's own.
 *
 * Invariants: at most one edit is shown, and only while no ghost text stands at the cursor (ghost
 * text first: an edit that arrives or stands while there is some waits until it is hidden); an
 * edit is applied only to the document version the server named; a result that arrives after the
 * document or cursor's document changed is dropped. Everything the editor does goes through
 * `NextEditEditor`, so this logic runs in tests without VS Code.
 */
import type { ControllerTimers, NextEditEditor, PendingRequest } from './nextEditHost';
import { advance, editsAfterApplying, hintText, partsOf, placeOf } from './nextEditLayout';
import {
  ACCEPT_INLINE_EDIT_COMMAND,
  type InlineEdit,
  inlineEditsOf,
  REJECT_INLINE_EDIT_COMMAND,
  TRIGGER_AUTOMATIC,
} from './nextEditProtocol';
import type { WirePosition } from './protocol';

/** Milliseconds after the last change before the server is asked. */
export const NEXT_EDIT_DEBOUNCE_MS = 150;

/** Context key: an edit is shown, so Tab and Esc are ours. */
export const VISIBLE_CONTEXT = 'codedraft.nextEditVisible';

/**
 * An edit with whether its version is to be checked: it names one and its document was open when
 * it arrived (a document opened later, by the jump, starts at a version of the editor's own).
 */
interface Offered {
  edit: InlineEdit;
  checkVersion: boolean;
}

export class NextEditController {
  private shown: Offered | undefined;
  private following: Offered[] = [];
  private waiting: Offered[] = [];
  private ghostText: string | undefined;
  private timer: unknown;
  private inFlight: PendingRequest | undefined;
  private generation = 0;
  private applyingIn: string | undefined;
  private requestAfterGhostText = false;

  constructor(
    private readonly editor: NextEditEditor,
    private readonly debounceMs: number = NEXT_EDIT_DEBOUNCE_MS,
    private readonly timers: ControllerTimers = { setTimeout, clearTimeout },
  ) {}

  /** The edit shown now, if any. */
  get current(): InlineEdit | undefined {
    return this.shown?.edit;
  }

  /** A document changed: the user's own change drops what is shown and asks again. */
  documentChanged(uri: string): void {
    if (uri === this.applyingIn) {
      return; // our own applied edit: accept() goes on from it
    }
    const cursor = this.editor.cursor();
    const concernsUs = uri === cursor?.uri || uri === this.shown?.edit.textDocument.uri;
    if (!concernsUs) {
      return;
    }
    this.reset();
    this.schedule();
  }

  /** The cursor moved or another editor became active: the hint follows it. */
  cursorMoved(): void {
    this.draw();
  }

  /** The inline completion provider offered ghost text here: it comes first. */
  ghostTextOffered(uri: string, version: number, position: WirePosition): void {
    this.ghostText = `${uri}#${version}@${position.line}:${position.character}`;
    if (this.shown !== undefined && this.ghostTextAtCursor()) {
      this.waiting = [this.shown, ...this.following];
      this.following = [];
      this.hide();
    }
  }

  /** The user hid the ghost text (Esc): an edit that waited behind it shows now. */
  ghostTextHidden(): void {
    this.ghostText = undefined;
    const waiting = this.waiting;
    this.waiting = [];
    if (waiting.length > 0) {
      this.offer(waiting);
    } else if (this.requestAfterGhostText) {
      this.requestAfterGhostText = false;
      this.schedule();
    }
  }

  /**
   * Tab: applies the shown edit when it is near the cursor, then shows the one after it (or asks
   * again); jumps to it first when it is further away or in another file.
   */
  async accept(): Promise<void> {
    const shown = this.shown;
    if (shown === undefined) {
      return;
    }
    const { edit } = shown;
    const uri = edit.textDocument.uri;
    if (placeOf(edit, this.editor.cursor()) !== 'near') {
      await this.editor.moveCursor(uri, edit.range.start);
      this.draw();
      return;
    }
    if (shown.checkVersion && this.editor.versionOf(uri) !== edit.textDocument.version) {
      this.reset(); // the document moved on since the server looked: the edit no longer fits
      this.schedule();
      return;
    }
    const following = this.following;
    this.reset();
    this.applyingIn = uri;
    let version: number | undefined;
    try {
      version = await this.editor.apply(edit);
    } finally {
      this.applyingIn = undefined;
    }
    if (version === undefined) {
      this.schedule();
      return;
    }
    await this.editor.moveCursor(uri, advance(edit.range.start, edit.text));
    void this.editor.executeCommand(ACCEPT_INLINE_EDIT_COMMAND, edit.command.arguments).catch(() => undefined);
    const moved = editsAfterApplying(
      following.map((offered) => offered.edit),
      edit,
      version,
    );
    // Edits in the applied document now name its new version; the others are the objects they were.
    const next = moved.map((item) => ({
      edit: item,
      checkVersion: item.textDocument.uri === uri || (following.find((offered) => offered.edit === item)?.checkVersion ?? true),
    }));
    if (next.length > 0) {
      this.offer(next);
    } else {
      this.schedule();
    }
  }

  /** Esc: drops the shown edit and the ones after it, and tells the server. */
  dismiss(): void {
    const shown = this.shown;
    this.reset();
    if (shown !== undefined) {
      void this.editor.executeCommand(REJECT_INLINE_EDIT_COMMAND, shown.edit.command.arguments).catch(() => undefined);
    }
  }

  /** The setting or the server went away: nothing is shown or asked until the next change. */
  stop(): void {
    this.reset();
  }

  dispose(): void {
    this.reset();
  }

  private reset(): void {
    this.generation += 1;
    this.inFlight?.cancel();
    this.inFlight = undefined;
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.following = [];
    this.requestAfterGhostText = false;
    this.waiting = [];
    this.hide();
  }

  private hide(): void {
    if (this.shown !== undefined) {
      this.shown = undefined;
      this.editor.draw(undefined);
      this.editor.setContext(VISIBLE_CONTEXT, false);
    }
  }

  private ghostTextAtCursor(): boolean {
    const cursor = this.editor.cursor();
    return (
      cursor !== undefined &&
      this.ghostText === `${cursor.uri}#${cursor.version}@${cursor.position.line}:${cursor.position.character}`
    );
  }

  private schedule(): void {
    if (!this.editor.enabled()) {
      return;
    }
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
    }
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      void this.requestNow();
    }, this.debounceMs);
  }

  private async requestNow(): Promise<void> {
    const cursor = this.editor.cursor();
    if (cursor === undefined || !this.editor.enabled()) {
      return;
    }
    if (this.ghostTextAtCursor()) {
      this.requestAfterGhostText = true;
      return;
    }
    this.inFlight?.cancel();
    const generation = ++this.generation;
    const request = this.editor.request({
      textDocument: { uri: cursor.uri, version: cursor.version },
      position: cursor.position,
      context: { triggerKind: TRIGGER_AUTOMATIC },
    });
    this.inFlight = request;
    let result: unknown;
    try {
      result = await request.result;
    } catch {
      return; // cancelled, or the server is gone: nothing to show
    } finally {
      if (this.inFlight === request) {
        this.inFlight = undefined;
      }
    }
    const now = this.editor.cursor();
    if (generation !== this.generation || now?.uri !== cursor.uri || now.version !== cursor.version || !this.editor.enabled()) {
      return;
    }
    this.offer(
      inlineEditsOf(result).map((edit) => ({
        edit,
        checkVersion: edit.textDocument.version !== null && this.editor.versionOf(edit.textDocument.uri) !== undefined,
      })),
    );
  }

  /** Shows the first edit that still fits its document, or waits behind ghost text. */
  private offer(edits: Offered[]): void {
    const fitting = edits.filter(
      (offered) => !offered.checkVersion || this.editor.versionOf(offered.edit.textDocument.uri) === offered.edit.textDocument.version,
    );
    if (fitting.length === 0) {
      return;
    }
    if (this.ghostTextAtCursor()) {
      this.waiting = fitting;
      return;
    }
    this.shown = fitting[0];
    this.following = fitting.slice(1);
    this.draw();
    this.editor.setContext(VISIBLE_CONTEXT, true);
    this.editor.notifyShown({ item: { command: fitting[0].edit.command } });
  }

  private draw(): void {
    if (this.shown === undefined) {
      return;
    }
    const { edit } = this.shown;
    const uri = edit.textDocument.uri;
    const cursor = this.editor.cursor();
    const oldText = this.editor.textIn(uri, edit);
    const hint = hintText(edit, placeOf(edit, cursor));
    this.editor.draw({
      uri,
      parts: oldText === undefined ? undefined : partsOf(edit, oldText),
      hint: hint === undefined || cursor === undefined ? undefined : { uri: cursor.uri, line: cursor.position.line, text: hint },
    });
  }
}
