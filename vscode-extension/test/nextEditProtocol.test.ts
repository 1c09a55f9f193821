import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { inlineEditsOf } from '../src/nextEditProtocol';

const edit = (line: number, extra: Record<string, unknown> = {}) => ({
  text: 'amount',
  range: { start: { line, character: 4 }, end: { line, character: 9 } },
  textDocument: { uri: 'file:///w/a.py', version: 7 },
  command: { title: 'Accept next edit', command: 'codedraft.acceptInlineEdit', arguments: [`e${line}`] },
  ...extra,
});

describe('inlineEditsOf', () => {
  it('reads the edits of a copilotInlineEdit result in order', () => {
    const edits = inlineEditsOf({ edits: [edit(1), edit(2)] });
    assert.deepEqual(edits, [edit(1), edit(2)]);
  });

  it('takes a null version (a document the server read from disk) and fills in missing arguments', () => {
    const [fromDisk] = inlineEditsOf({
      edits: [edit(1, { textDocument: { uri: 'file:///w/b.py', version: null }, command: { command: 'codedraft.acceptInlineEdit' } })],
    });
    assert.deepEqual(fromDisk.textDocument, { uri: 'file:///w/b.py', version: null });
    assert.deepEqual(fromDisk.command, { title: '', command: 'codedraft.acceptInlineEdit', arguments: [] });
  });

  it('stops at a malformed edit, since the ones after it follow from it', () => {
    const backwards = edit(3, { range: { start: { line: 3, character: 9 }, end: { line: 3, character: 4 } } });
    const noCommand = edit(2, { command: undefined });
    const negative = edit(2, { range: { start: { line: -1, character: 0 }, end: { line: 0, character: 0 } } });
    assert.deepEqual(inlineEditsOf({ edits: [edit(1), backwards, edit(4)] }), [edit(1)]);
    assert.deepEqual(inlineEditsOf({ edits: [noCommand, edit(4)] }), []);
    assert.deepEqual(inlineEditsOf({ edits: [negative] }), []);
  });

  it('reads no edits from a malformed result', () => {
    assert.deepEqual(inlineEditsOf(null), []);
    assert.deepEqual(inlineEditsOf({ edits: 'none' }), []);
    assert.deepEqual(inlineEditsOf({}), []);
  });
});
