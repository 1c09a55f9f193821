import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { CursorNotifier, type CursorTimers } from '../src/cursorNotifications';
import { CURSOR_NOTIFICATION, type CursorParams } from '../src/protocol';

/** Timers run by hand: `fire()` runs the callbacks still pending. */
class ManualTimers implements CursorTimers {
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

function recorder() {
  const sent: [string, CursorParams][] = [];
  const timers = new ManualTimers();
  const notifier = new CursorNotifier((method, params) => sent.push([method, params]), 100, timers);
  const places = () => sent.map(([, p]) => `${p.textDocument.uri}@${p.position.line}:${p.position.character}`);
  return { sent, timers, notifier, places };
}

describe('CursorNotifier', () => {
  it('sends only the place where the cursor rests, as codedraft/cursor', () => {
    const { sent, timers, notifier, places } = recorder();
    notifier.selectionChanged('file:///a.py', 'file', { line: 1, character: 0 });
    notifier.selectionChanged('file:///a.py', 'file', { line: 2, character: 0 });
    notifier.selectionChanged('file:///a.py', 'file', { line: 3, character: 4 });
    assert.equal(sent.length, 0);
    timers.fire();
    assert.deepEqual(places(), ['file:///a.py@3:4']);
    assert.deepEqual(sent[0], [
      CURSOR_NOTIFICATION,
      { textDocument: { uri: 'file:///a.py' }, position: { line: 3, character: 4 } },
    ]);
  });

  it('sends a newly active editor at once and never the same place twice in a row', () => {
    const { timers, notifier, places } = recorder();
    notifier.editorActivated('file:///b.py', 'file', { line: 7, character: 1 });
    notifier.selectionChanged('file:///b.py', 'file', { line: 7, character: 1 });
    timers.fire();
    notifier.editorActivated('untitled:Untitled-1', 'untitled', { line: 0, character: 0 });
    assert.deepEqual(places(), ['file:///b.py@7:1', 'untitled:Untitled-1@0:0']);
  });

  it('skips documents the client does not synchronise, and drops a pending place on cancel', () => {
    const { timers, notifier, places } = recorder();
    notifier.selectionChanged('output:extension-output', 'output', { line: 1, character: 0 });
    notifier.editorActivated('git:/a.py', 'git', { line: 1, character: 0 });
    notifier.selectionChanged('file:///a.py', 'file', { line: 5, character: 0 });
    notifier.cancel();
    timers.fire();
    assert.deepEqual(places(), []);
  });

  it('sends the last place again to a new server after forget', () => {
    const { notifier, places } = recorder();
    notifier.editorActivated('file:///a.py', 'file', { line: 2, character: 2 });
    notifier.forget();
    notifier.editorActivated('file:///a.py', 'file', { line: 2, character: 2 });
    assert.deepEqual(places(), ['file:///a.py@2:2', 'file:///a.py@2:2']);
  });
});
