import * as assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import {
  CompletionFeedback,
  DID_DISMISS_COMPLETION,
  DID_PARTIALLY_ACCEPT_COMPLETION,
  DID_SHOW_COMPLETION,
  hookProvider,
  itemId,
} from '../src/completionFeedback';
import { ServerCommand } from '../src/protocol';

const A = 'file:///w/a.py';
const B = 'file:///w/b.py';

/** An item as the language client converts it: insert text and the server's accept command. */
function item(id: string, insertText = 'return total') {
  return { insertText, range: {}, command: { title: 'Accept the suggestion', command: ServerCommand.acceptCompletion, arguments: [id] } };
}

function wire(id: string, insertText = 'return total') {
  return { insertText, command: { title: 'Accept the suggestion', command: ServerCommand.acceptCompletion, arguments: [id] } };
}

let sent: [string, unknown][];
let feedback: CompletionFeedback;

beforeEach(() => {
  sent = [];
  feedback = new CompletionFeedback((method, params) => sent.push([method, params]));
});

describe('completion feedback', () => {
  it('reports an offered item as shown once, however often it is offered again while typed through', () => {
    feedback.offered(A, [item('one')]);
    feedback.offered(A, [item('one', 'urn total')]);
    assert.deepEqual(sent, [[DID_SHOW_COMPLETION, { item: wire('one') }]]);
    assert.equal(feedback.visibleId, 'one');
  });

  it('closes an item its accept command ran for, so nothing more is said of it', () => {
    feedback.offered(A, [item('one')]);
    feedback.accepted(['one']);
    assert.equal(feedback.visibleId, undefined);
    feedback.offered(A, []); // the next place has no suggestion: nothing was passed over
    feedback.shown(A, item('one')); // a late show of the accepted item
    feedback.partiallyAccepted(item('one'), 3);
    assert.deepEqual(sent, [[DID_SHOW_COMPLETION, { item: wire('one') }]]);
  });

  it('reports an item replaced by another, or by nothing where the user typed on, as dismissed', () => {
    feedback.offered(A, [item('one')]);
    feedback.offered(A, [item('two', 'pass')]);
    feedback.offered(A, [{ insertText: 'not ours' }]);
    assert.deepEqual(sent, [
      [DID_SHOW_COMPLETION, { item: wire('one') }],
      [DID_DISMISS_COMPLETION, { item: wire('one') }],
      [DID_SHOW_COMPLETION, { item: wire('two', 'pass') }],
      [DID_DISMISS_COMPLETION, { item: wire('two', 'pass') }],
    ]);
  });

  it('reports Esc and leaving the editor as dismissed, once', () => {
    feedback.offered(A, [item('one')]);
    feedback.editorChanged(A); // the same editor again: still shown
    feedback.dismissed();
    feedback.dismissed();
    feedback.offered(A, [item('two')]);
    feedback.editorChanged(B);
    feedback.editorChanged(undefined);
    assert.deepEqual(
      sent.map(([method, params]) => [method, itemId((params as { item: unknown }).item)]),
      [
        [DID_SHOW_COMPLETION, 'one'],
        [DID_DISMISS_COMPLETION, 'one'],
        [DID_SHOW_COMPLETION, 'two'],
        [DID_DISMISS_COMPLETION, 'two'],
      ],
    );
  });

  it('reports a partial accept with its length, from the proposed provider hook', () => {
    const provider: Record<string, unknown> = {};
    hookProvider(provider, feedback, () => A);
    const hooks = provider as {
      handleDidShowCompletionItem(item: unknown, text: string): void;
      handleDidPartiallyAcceptCompletionItem(item: unknown, length: number): void;
    };
    hooks.handleDidShowCompletionItem({ ...item('one'), insertText: { value: 'return total' } }, 'return total');
    hooks.handleDidPartiallyAcceptCompletionItem(item('one'), 0); // nothing taken: not reported
    hooks.handleDidPartiallyAcceptCompletionItem(item('one'), 7);
    hooks.handleDidPartiallyAcceptCompletionItem(item('one'), 12); // settled already
    feedback.dismissed(); // nothing shown any more
    assert.deepEqual(sent, [
      [DID_SHOW_COMPLETION, { item: wire('one') }],
      [DID_PARTIALLY_ACCEPT_COMPLETION, { item: wire('one'), acceptedLength: 7 }],
    ]);
    const before = provider.handleDidShowCompletionItem;
    hookProvider(provider, new CompletionFeedback(() => undefined), () => A);
    assert.equal(provider.handleDidShowCompletionItem, before); // hooked once
  });

  it('reads the id only from the server accept command', () => {
    assert.equal(itemId(item('abc')), 'abc');
    assert.equal(itemId({ command: { command: 'other.command', arguments: ['abc'] } }), undefined);
    assert.equal(itemId({ command: { command: ServerCommand.acceptCompletion, arguments: [] } }), undefined);
    assert.equal(itemId({ command: { command: ServerCommand.acceptCompletion, arguments: [3] } }), undefined);
    assert.equal(itemId(undefined), undefined);
  });

  it('forgets what it knew when a new server starts', () => {
    feedback.offered(A, [item('one')]);
    feedback.forget();
    feedback.dismissed();
    assert.equal(sent.length, 1);
  });
});
