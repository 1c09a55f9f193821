import * as assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import { NextEditController, VISIBLE_CONTEXT } from '../src/nextEditController';
import type { InlineEdit } from '../src/nextEditProtocol';
import { FakeEditor, ManualTimers } from './support/fakeNextEditEditor';

const A = 'file:///w/a.py';
const B = 'file:///w/b.py';

const SOURCE = ['def scale(value, factor):', '    doubled = value * 2', '    return value * factor', '', '', '', '', '', 'print(value)', ''].join('\n');

function rename(line: number, character: number, version: number, id: string, uri = A): InlineEdit {
  return {
    text: 'amount',
    range: { start: { line, character }, end: { line, character: character + 5 } },
    textDocument: { uri, version },
    command: { title: 'Accept', command: 'codedraft.acceptInlineEdit', arguments: [id] },
  };
}

let editor: FakeEditor;
let timers: ManualTimers;
let controller: NextEditController;
/** The id of the edit shown now (a call, so that TypeScript does not narrow it between steps). */
const shownId = (): unknown => controller.current?.command.arguments[0];
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** The user renames `value` to `amount` at the definition (version 1 → 2), cursor after it. */
function userRenamesParameter(): void {
  editor.type(A, { line: 0, character: 10 }, { line: 0, character: 15 }, 'amount');
  editor.at = { uri: A, position: { line: 0, character: 16 } };
}

async function answerWith(edits: InlineEdit[]): Promise<void> {
  timers.fire();
  assert.equal(editor.requests.length > 0, true, 'a request was sent');
  editor.requests.at(-1)!.answer({ edits });
  await settle();
}

beforeEach(() => {
  editor = new FakeEditor();
  editor.documents.set(A, { text: SOURCE, version: 1 });
  editor.at = { uri: A, position: { line: 0, character: 0 } };
  timers = new ManualTimers();
  controller = new NextEditController(editor, 150, timers);
  editor.controller = controller;
});

describe('NextEditController: asking', () => {
  it('asks once the typing stops, with the document version and cursor', () => {
    userRenamesParameter();
    editor.type(A, { line: 0, character: 16 }, { line: 0, character: 16 }, '');
    assert.equal(editor.requests.length, 0);
    timers.fire();
    assert.deepEqual(editor.requests.map((r) => r.params), [
      { textDocument: { uri: A, version: 3 }, position: { line: 0, character: 16 }, context: { triggerKind: 2 } },
    ]);
  });

  it('shows the first edit at its place, says so to the server and sets the context key', async () => {
    userRenamesParameter();
    const first = rename(1, 14, 2, 'r1');
    await answerWith([first, rename(2, 11, 2, 'r2')]);
    assert.deepEqual(controller.current, first);
    assert.deepEqual(editor.last, {
      uri: A,
      parts: { deleted: { start: { line: 1, character: 14 }, end: { line: 1, character: 19 } }, insertAt: { line: 1, character: 19 }, inserted: 'amount' },
      hint: undefined,
    });
    assert.deepEqual(editor.shownNotifications, [{ item: { command: first.command } }]);
    assert.equal(editor.context.get(VISIBLE_CONTEXT), true);
  });

  it('drops an answer that comes after the document changed again, and cancels its request', async () => {
    userRenamesParameter();
    timers.fire();
    const stale = editor.requests[0];
    editor.type(A, { line: 3, character: 0 }, { line: 3, character: 0 }, '#');
    assert.equal(stale.cancelled, true);
    stale.answer({ edits: [rename(1, 14, 2, 'old')] });
    await settle();
    assert.equal(controller.current, undefined);
    assert.deepEqual(editor.shownNotifications, []);
  });

  it('skips edits that name another version of an open document', async () => {
    userRenamesParameter();
    await answerWith([rename(1, 14, 1, 'stale'), rename(2, 11, 2, 'fresh')]);
    assert.equal(shownId(), 'fresh');
  });

  it('asks nothing and shows nothing when the setting is off', async () => {
    editor.on = false;
    userRenamesParameter();
    timers.fire();
    assert.equal(editor.requests.length, 0);
    editor.on = true;
    userRenamesParameter();
    timers.fire();
    editor.on = false;
    editor.requests[0].answer({ edits: [rename(1, 14, 3, 'r1')] });
    await settle();
    assert.equal(controller.current, undefined);
  });
});

describe('NextEditController: Tab', () => {
  it('applies a near edit, tells the server, and shows the next one moved to the new text', async () => {
    userRenamesParameter();
    const first = rename(1, 14, 2, 'r1');
    await answerWith([first, rename(2, 11, 2, 'r2')]);
    await controller.accept();
    assert.equal(editor.documents.get(A)!.text.split('\n')[1], '    doubled = amount * 2');
    assert.deepEqual(editor.commands, [{ command: 'codedraft.acceptInlineEdit', args: ['r1'] }]);
    assert.deepEqual(editor.moves.at(-1), { uri: A, position: { line: 1, character: 20 } });
    assert.equal(shownId(), 'r2');
    assert.deepEqual(controller.current?.textDocument, { uri: A, version: 3 });
    assert.equal(editor.requests.length, 1, 'our own edit does not ask again while edits follow');
    await controller.accept();
    assert.equal(editor.documents.get(A)!.text.split('\n')[2], '    return amount * factor');
    assert.equal(controller.current, undefined);
    assert.equal(editor.context.get(VISIBLE_CONTEXT), false);
    timers.fire();
    assert.equal(editor.requests.length, 2, 'the last applied edit asks for more');
  });

  it('jumps to a far edit first, with a hint at the cursor, and applies it on the second Tab', async () => {
    userRenamesParameter();
    await answerWith([rename(8, 6, 2, 'far')]);
    assert.deepEqual(editor.last?.hint, { uri: A, line: 0, text: '⇥ Tab: next edit at line 9' });
    await controller.accept();
    assert.deepEqual(editor.moves, [{ uri: A, position: { line: 8, character: 6 } }]);
    assert.equal(editor.documents.get(A)!.version, 2, 'the jump changes nothing');
    assert.equal(editor.last?.hint, undefined);
    await controller.accept();
    assert.equal(editor.documents.get(A)!.text.split('\n')[8], 'print(amount)');
  });

  it('opens another file for an edit there, then applies it', async () => {
    editor.documents.set(B, { text: 'from a import scale\nscale(value=1, factor=2)\n', version: 5 });
    userRenamesParameter();
    await answerWith([rename(1, 6, 5, 'other', B)]);
    assert.deepEqual(editor.last?.hint, { uri: A, line: 0, text: '⇥ Tab: next edit in b.py (line 2)' });
    await controller.accept();
    assert.deepEqual(editor.moves, [{ uri: B, position: { line: 1, character: 6 } }]);
    await controller.accept();
    assert.equal(editor.documents.get(B)!.text, 'from a import scale\nscale(amount=1, factor=2)\n');
  });

  it('opens a file that was not open (the server names no version) and applies the edit there', async () => {
    editor.disk.set(B, 'total = scale(value=1, factor=2)\n');
    userRenamesParameter();
    const unopened = { ...rename(0, 14, 0, 'disk', B), textDocument: { uri: B, version: null } };
    await answerWith([unopened]);
    assert.equal(shownId(), 'disk');
    assert.equal(editor.last?.parts, undefined, 'nothing to draw in a document that is not open');
    assert.deepEqual(editor.last?.hint, { uri: A, line: 0, text: '⇥ Tab: next edit in b.py (line 1)' });
    await controller.accept();
    assert.deepEqual(editor.drawn.at(-1)?.parts?.deleted, { start: { line: 0, character: 14 }, end: { line: 0, character: 19 } });
    await controller.accept();
    assert.equal(editor.documents.get(B)!.text, 'total = scale(amount=1, factor=2)\n');
    assert.deepEqual(editor.commands, [{ command: 'codedraft.acceptInlineEdit', args: ['disk'] }]);
  });

  it('skips an edit whose document changed since the server looked, and asks again', async () => {
    editor.documents.set(B, { text: 'scale(value=1)\n', version: 5 });
    userRenamesParameter();
    await answerWith([rename(0, 6, 5, 'other', B)]);
    await controller.accept(); // the jump
    editor.documents.get(B)!.version = 6; // changed on disk and reloaded, say
    await controller.accept();
    assert.equal(editor.documents.get(B)!.text, 'scale(value=1)\n');
    assert.deepEqual(editor.commands, []);
    assert.equal(controller.current, undefined);
    timers.fire();
    assert.equal(editor.requests.length, 2);
  });
});

describe('NextEditController: Esc, typing and ghost text', () => {
  it('Esc hides the edit and the ones after it, and tells the server', async () => {
    userRenamesParameter();
    await answerWith([rename(1, 14, 2, 'r1'), rename(2, 11, 2, 'r2')]);
    controller.dismiss();
    assert.equal(controller.current, undefined);
    assert.equal(editor.last, undefined);
    assert.equal(editor.context.get(VISIBLE_CONTEXT), false);
    assert.deepEqual(editor.commands, [{ command: 'codedraft.rejectInlineEdit', args: ['r1'] }]);
  });

  it('typing hides the edit without rejecting it', async () => {
    userRenamesParameter();
    await answerWith([rename(1, 14, 2, 'r1')]);
    editor.type(A, { line: 0, character: 16 }, { line: 0, character: 16 }, 's');
    assert.equal(controller.current, undefined);
    assert.deepEqual(editor.commands, []);
  });

  it('does not ask while ghost text stands at the cursor, and asks once it is hidden', async () => {
    userRenamesParameter();
    controller.ghostTextOffered(A, 2, { line: 0, character: 16 });
    timers.fire();
    assert.equal(editor.requests.length, 0);
    controller.ghostTextHidden();
    await answerWith([rename(1, 14, 2, 'r1')]);
    assert.equal(shownId(), 'r1');
  });

  it('an edit shown before ghost text arrives steps back until the ghost text is hidden', async () => {
    userRenamesParameter();
    await answerWith([rename(1, 14, 2, 'r1'), rename(2, 11, 2, 'r2')]);
    controller.ghostTextOffered(A, 2, { line: 0, character: 16 });
    assert.equal(controller.current, undefined);
    assert.equal(editor.last, undefined);
    assert.equal(editor.context.get(VISIBLE_CONTEXT), false);
    controller.ghostTextHidden();
    assert.equal(shownId(), 'r1');
    await controller.accept();
    assert.equal(shownId(), 'r2');
  });

  it('ghost text at an older version or another place does not hold an edit back', async () => {
    userRenamesParameter();
    controller.ghostTextOffered(A, 1, { line: 0, character: 16 });
    controller.ghostTextOffered(A, 2, { line: 0, character: 3 });
    await answerWith([rename(1, 14, 2, 'r1')]);
    assert.equal(shownId(), 'r1');
  });

  it('stop() drops the shown edit and the pending request', async () => {
    userRenamesParameter();
    await answerWith([rename(1, 14, 2, 'r1')]);
    editor.type(A, { line: 3, character: 0 }, { line: 3, character: 0 }, '#');
    controller.stop();
    timers.fire();
    assert.equal(editor.requests.length, 1);
    assert.equal(controller.current, undefined);
  });
});
