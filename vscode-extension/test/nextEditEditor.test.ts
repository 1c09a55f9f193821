import * as assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import { VscodeNextEditEditor } from '../src/nextEditEditor';
import type { NextEditDisplay } from '../src/nextEditHost';
import { type FakeDecorationType, mock, Position, Range } from './support/vscodeMock';

const A = 'file:///w/a.py';
const B = 'file:///w/b.py';

/** A visible editor that records the decorations set on it, by decoration type. */
function textEditor(uri: string, lines: string[]) {
  const decorations = new Map<FakeDecorationType, unknown[]>();
  return {
    decorations,
    document: {
      uri: { toString: () => uri, scheme: 'file' },
      languageId: 'python',
      lineCount: lines.length,
      lineAt: (line: number) => ({ range: { end: new Position(line, lines[line].length) } }),
    },
    setDecorations(type: FakeDecorationType, ranges: unknown[]) {
      decorations.set(type, ranges);
    },
  };
}

let view: VscodeNextEditEditor;
let deleted: FakeDecorationType;
let inserted: FakeDecorationType;
let hint: FakeDecorationType;

const range = (l1: number, c1: number, l2: number, c2: number) => new Range(new Position(l1, c1), new Position(l2, c2));

beforeEach(() => {
  mock.reset();
  view = new VscodeNextEditEditor(() => undefined, () => true);
  [deleted, inserted, hint] = mock.decorationTypes;
});

describe('VscodeNextEditEditor decorations', () => {
  it('declares a struck-through type, a type for the new text after it, and one for the hint', () => {
    assert.equal(deleted.options.textDecoration, 'line-through');
    assert.ok('after' in inserted.options);
    assert.equal((hint.options.after as { fontStyle: string }).fontStyle, 'italic');
  });

  it('strikes the deleted range, draws the new text after it, and the hint at the end of the cursor line', () => {
    const a = textEditor(A, ['def scale(amount):', '    return value * 2']);
    const b = textEditor(B, ['x = 1']);
    mock.visibleTextEditors = [a, b];
    const display: NextEditDisplay = {
      uri: A,
      parts: { deleted: { start: { line: 1, character: 11 }, end: { line: 1, character: 16 } }, insertAt: { line: 1, character: 16 }, inserted: 'amount' },
      hint: { uri: A, line: 0, text: '⇥ Tab: next edit at line 2' },
    };
    view.draw(display);
    assert.deepEqual(a.decorations.get(deleted), [range(1, 11, 1, 16)]);
    const [newText] = a.decorations.get(inserted) as { range: Range; renderOptions: unknown; hoverMessage: { value: string } }[];
    assert.deepEqual(newText.range, range(1, 16, 1, 16));
    assert.deepEqual(newText.renderOptions, { after: { contentText: 'amount' } });
    assert.equal(newText.hoverMessage.value, '\n```python\namount\n```\n');
    assert.deepEqual(a.decorations.get(hint), [
      { range: range(0, 18, 0, 18), renderOptions: { after: { contentText: '⇥ Tab: next edit at line 2' } } },
    ]);
    for (const type of [deleted, inserted, hint]) {
      assert.deepEqual(b.decorations.get(type), [], 'nothing in another document');
    }
  });

  it('draws an insertion without a struck range, a deletion without new text, multi-line text as a preview', () => {
    const a = textEditor(A, ['a = 1', 'b = 2']);
    mock.visibleTextEditors = [a];
    view.draw({ uri: A, parts: { deleted: undefined, insertAt: { line: 0, character: 5 }, inserted: '\nc = 3' }, hint: undefined });
    assert.deepEqual(a.decorations.get(deleted), []);
    const [preview] = a.decorations.get(inserted) as { renderOptions: { after: { contentText: string } } }[];
    assert.equal(preview.renderOptions.after.contentText, ' ⏎ … (+1 line)');
    view.draw({ uri: A, parts: { deleted: range(1, 0, 1, 5), insertAt: { line: 1, character: 5 }, inserted: '' }, hint: undefined });
    assert.deepEqual(a.decorations.get(deleted), [range(1, 0, 1, 5)]);
    assert.deepEqual(a.decorations.get(inserted), []);
    assert.deepEqual(a.decorations.get(hint), []);
  });

  it('clears everything when nothing is shown, and draws the last display again in newly visible editors', () => {
    const a = textEditor(A, ['print(value)']);
    mock.visibleTextEditors = [a];
    const display: NextEditDisplay = {
      uri: A,
      parts: { deleted: range(0, 6, 0, 11), insertAt: { line: 0, character: 11 }, inserted: 'amount' },
      hint: undefined,
    };
    view.draw(display);
    view.draw(undefined);
    for (const type of [deleted, inserted, hint]) {
      assert.deepEqual(a.decorations.get(type), []);
    }
    view.draw(display);
    const reopened = textEditor(A, ['print(value)']);
    mock.visibleTextEditors = [reopened];
    view.redraw();
    assert.deepEqual(reopened.decorations.get(deleted), [range(0, 6, 0, 11)]);
  });
});
