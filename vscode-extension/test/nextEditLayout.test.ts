import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { editsAfterApplying, fileNameOf, hintText, partsOf, placeOf, previewOf } from '../src/nextEditLayout';
import type { InlineEdit } from '../src/nextEditProtocol';

function edit(text: string, start: [number, number], end: [number, number], uri = 'file:///w/a.py', version = 3): InlineEdit {
  return {
    text,
    range: { start: { line: start[0], character: start[1] }, end: { line: end[0], character: end[1] } },
    textDocument: { uri, version },
    command: { title: 'Accept', command: 'codedraft.acceptInlineEdit', arguments: [`${text}@${start.join(':')}`] },
  };
}

const pos = (line: number, character: number) => ({ line, character });

describe('partsOf: what is struck through and what is drawn beside it', () => {
  it('an insertion strikes nothing and draws the new text at its place', () => {
    assert.deepEqual(partsOf(edit(', factor', [4, 17], [4, 17]), ''), {
      deleted: undefined,
      insertAt: pos(4, 17),
      inserted: ', factor',
    });
  });

  it('a deletion strikes the removed text and draws nothing', () => {
    assert.deepEqual(partsOf(edit('', [2, 4], [2, 10]), 'debug('), {
      deleted: { start: pos(2, 4), end: pos(2, 10) },
      insertAt: pos(2, 10),
      inserted: '',
    });
  });

  it('a replacement strikes the old word and draws the new one after it', () => {
    assert.deepEqual(partsOf(edit('amount', [5, 14], [5, 19]), 'value'), {
      deleted: { start: pos(5, 14), end: pos(5, 19) },
      insertAt: pos(5, 19),
      inserted: 'amount',
    });
  });

  it('leaves out what the old and new text share at both ends', () => {
    // A whole-line rewrite that only renames `value` in the middle of the line.
    const line = '    return value * factor';
    assert.deepEqual(partsOf(edit('    return amount * factor', [7, 0], [7, line.length]), line), {
      deleted: { start: pos(7, 11), end: pos(7, 16) },
      insertAt: pos(7, 16),
      inserted: 'amount',
    });
  });

  it('follows line breaks in the old text, and keeps new lines in the inserted text', () => {
    const old = 'a = 1\nb = 2\n';
    assert.deepEqual(partsOf(edit('a = 1\nb = 2\nc = 3\n', [3, 0], [5, 0]), old), {
      deleted: undefined,
      insertAt: pos(5, 0),
      inserted: 'c = 3\n',
    });
    assert.deepEqual(partsOf(edit('x = 0\n', [3, 0], [5, 0]), old), {
      deleted: { start: pos(3, 0), end: pos(4, 5) },
      insertAt: pos(4, 5),
      inserted: 'x = 0',
    });
  });

  it('never cuts a surrogate pair in two', () => {
    // '😀' and '😃' share their high surrogate: the whole character is replaced.
    assert.deepEqual(partsOf(edit('s = "😃"', [0, 0], [0, 8]), 's = "😀"'), {
      deleted: { start: pos(0, 5), end: pos(0, 7) },
      insertAt: pos(0, 7),
      inserted: '😃',
    });
  });
});

describe('placeOf and hintText: when Tab applies and when it jumps', () => {
  const target = edit('amount', [10, 4], [10, 9]);
  const at = (line: number, uri = 'file:///w/a.py') => ({ uri, position: pos(line, 0) });

  it('applies an edit within three lines of the cursor, with no hint', () => {
    assert.equal(placeOf(target, at(10)), 'near');
    assert.equal(placeOf(target, at(7)), 'near');
    assert.equal(placeOf(target, at(13)), 'near');
    assert.equal(hintText(target, 'near'), undefined);
  });

  it('jumps to an edit further away in the file, and says which line', () => {
    assert.equal(placeOf(target, at(6)), 'elsewhere');
    assert.equal(placeOf(target, at(14)), 'elsewhere');
    assert.equal(hintText(target, 'elsewhere'), '⇥ Tab: next edit at line 11');
  });

  it('jumps to an edit in another file (or with no editor), and names the file', () => {
    const other = edit('amount', [2, 0], [2, 5], 'file:///w/pkg/my%20other.py');
    assert.equal(placeOf(other, at(2)), 'otherFile');
    assert.equal(placeOf(other, undefined), 'otherFile');
    assert.equal(hintText(other, 'otherFile'), '⇥ Tab: next edit in my other.py (line 3)');
    assert.equal(fileNameOf('untitled:Untitled-1'), 'untitled:Untitled-1');
  });

  it('measures the distance to a multi-line range from its nearer end', () => {
    const block = edit('', [20, 0], [30, 0]);
    assert.equal(placeOf(block, at(25)), 'near');
    assert.equal(placeOf(block, at(33)), 'near');
    assert.equal(placeOf(block, at(34)), 'elsewhere');
  });
});

describe('previewOf', () => {
  it('draws one line as it is, several as the first and a count', () => {
    assert.equal(previewOf('amount'), 'amount');
    assert.equal(previewOf('if x:\n    y()\n'), 'if x: ⏎ … (+2 lines)');
    assert.equal(previewOf('a\nb'), 'a ⏎ … (+1 line)');
    assert.equal(previewOf('x'.repeat(100)), `${'x'.repeat(80)}…`);
  });
});

describe('editsAfterApplying: the edits that follow an applied one', () => {
  it('moves later edits on the same line by the length change, and names the new version', () => {
    const applied = edit('amount', [4, 10], [4, 15]);
    const sameLine = edit('amount', [4, 18], [4, 23]);
    const [moved] = editsAfterApplying([sameLine], applied, 4);
    assert.deepEqual(moved.range, { start: pos(4, 19), end: pos(4, 24) });
    assert.deepEqual(moved.textDocument, { uri: 'file:///w/a.py', version: 4 });
    assert.deepEqual(moved.command, sameLine.command);
  });

  it('moves later lines by the lines added, and keeps earlier edits where they are', () => {
    const applied = edit('x = 1\ny = 2\n', [2, 0], [2, 0]);
    const earlier = edit('a', [1, 0], [1, 1]);
    const later = edit('b', [6, 3], [6, 4]);
    const [first, second] = editsAfterApplying([earlier, later], applied, 9);
    assert.deepEqual(first.range, earlier.range);
    assert.equal(first.textDocument.version, 9);
    assert.deepEqual(second.range, { start: pos(8, 3), end: pos(8, 4) });
  });

  it('drops edits that overlap the applied one and leaves other documents alone', () => {
    const applied = edit('amount', [4, 10], [4, 15]);
    const overlapping = edit('amounts', [4, 12], [4, 16]);
    const elsewhere = edit('amount', [4, 10], [4, 15], 'file:///w/b.py', 7);
    const kept = editsAfterApplying([overlapping, elsewhere], applied, 4);
    assert.deepEqual(kept, [elsewhere]);
    assert.equal(kept[0], elsewhere);
  });
});
