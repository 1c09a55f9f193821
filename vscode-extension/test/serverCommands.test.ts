import * as assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import { ServerCommands, progressMessage, type RequestSender } from '../src/serverCommands';
import { StreamTexts } from '../src/streams';
import { type FakeCancellationToken, FakeOutputChannel, mock } from './support/vscodeMock';

/* eslint-disable @typescript-eslint/no-explicit-any */

interface SentRequest {
  method: string;
  params: any;
  token: unknown;
}

const uri = 'file:///work/app.py';

function editor(selection: { start: [number, number]; end: [number, number] }) {
  const [sl, sc] = selection.start;
  const [el, ec] = selection.end;
  return {
    document: { uri: { toString: () => uri } },
    selection: {
      start: { line: sl, character: sc },
      end: { line: el, character: ec },
      active: { line: el, character: ec },
      isEmpty: sl === el && sc === ec,
    },
  };
}

let streams: StreamTexts;
let output: FakeOutputChannel;
let sent: SentRequest[];

/** A server that streams `chunks` under `id` while the request runs, then answers `{id}`. */
function streamingServer(id: string, chunks: string[]): RequestSender {
  return {
    sendRequest: async (method, params, token) => {
      sent.push({ method, params, token });
      for (const [index, delta] of chunks.entries()) {
        await Promise.resolve();
        streams.accept({ id, delta, done: index === chunks.length - 1 });
      }
      return { id };
    },
  };
}

function commands(server: RequestSender): ServerCommands {
  return new ServerCommands(server, streams, output as any);
}

const noNext = () => {
  throw new Error('next must not be called');
};

beforeEach(() => {
  mock.reset();
  streams = new StreamTexts();
  output = new FakeOutputChannel('codedraft');
  sent = [];
});

describe('codedraft.refactor', () => {
  it('asks for an instruction and sends the selection with it, under a cancellable progress', async () => {
    mock.activeTextEditor = editor({ start: [2, 0], end: [4, 10] });
    mock.inputBoxAnswers.push('  use a list comprehension ');
    const result = await commands(streamingServer('r1', ['result = [', 'x * 2 for x in xs]\n', 'done\n'])).executeCommand(
      'codedraft.refactor',
      [],
      noNext,
    );
    assert.deepEqual(result, { id: 'r1' });
    assert.equal(sent.length, 1);
    assert.equal(sent[0].method, 'workspace/executeCommand');
    assert.deepEqual(sent[0].params, {
      command: 'codedraft.refactor',
      arguments: [
        {
          uri,
          range: { start: { line: 2, character: 0 }, end: { line: 4, character: 10 } },
          instruction: 'use a list comprehension',
        },
      ],
    });
    assert.equal(mock.progressRuns.length, 1);
    const run = mock.progressRuns[0];
    assert.equal(run.options.cancellable, true);
    assert.equal(sent[0].token, run.token);
    assert.deepEqual(
      run.reports.map((r) => r.message),
      ['result = [', 'result = [x * 2 for x in xs]', 'done'],
    );
    assert.equal(output.text, '── codedraft: refactoring ──\nresult = [x * 2 for x in xs]\ndone\n');
    assert.equal(output.shown, 1);
  });

  it('does nothing when the instruction is dismissed or empty', async () => {
    mock.activeTextEditor = editor({ start: [0, 0], end: [1, 0] });
    mock.inputBoxAnswers.push(undefined, '   ');
    const runner = commands(streamingServer('r', ['x']));
    assert.equal(await runner.executeCommand('codedraft.refactor', [], noNext), undefined);
    assert.equal(await runner.executeCommand('codedraft.refactor', [], noNext), undefined);
    assert.equal(sent.length, 0);
    assert.equal(mock.progressRuns.length, 0);
  });

  it('asks for a selection first', async () => {
    mock.activeTextEditor = editor({ start: [3, 4], end: [3, 4] });
    assert.equal(await commands(streamingServer('r', ['x'])).executeCommand('codedraft.refactor', [], noNext), undefined);
    assert.equal(mock.inputBoxes.length, 0);
    assert.deepEqual(mock.messages.map((m) => m.severity), ['warning']);
    assert.equal(sent.length, 0);
  });

  it('takes the target from a code action and only asks for the missing instruction', async () => {
    const range = { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } };
    mock.inputBoxAnswers.push('rename x to count');
    await commands(streamingServer('r', ['y'])).executeCommand('codedraft.refactor', [{ uri, range }], noNext);
    assert.deepEqual(sent[0].params.arguments, [{ uri, range, instruction: 'rename x to count' }]);
    await commands(streamingServer('r2', ['y'])).executeCommand(
      'codedraft.refactor',
      [{ uri, range, instruction: 'inline it' }],
      noNext,
    );
    assert.equal(mock.inputBoxes.length, 1);
    assert.deepEqual(sent[1].params.arguments, [{ uri, range, instruction: 'inline it' }]);
  });

  it('waits for the named stream to finish when the result comes first', async () => {
    mock.activeTextEditor = editor({ start: [0, 0], end: [0, 5] });
    mock.inputBoxAnswers.push('shorter');
    const server: RequestSender = {
      sendRequest: (method, params, token) => {
        sent.push({ method, params, token });
        setImmediate(() => {
          streams.accept({ id: 'late', delta: 'first ', done: false });
          setImmediate(() => streams.accept({ id: 'late', delta: 'second', done: true }));
        });
        return Promise.resolve({ id: 'late' });
      },
    };
    await commands(server).executeCommand('codedraft.refactor', [], noNext);
    assert.equal(streams.isDone('late'), true);
    assert.equal(output.text, '── codedraft: refactoring ──\nfirst second\n');
  });

  it('stops waiting when the user cancels, and shows no error for it', async () => {
    mock.activeTextEditor = editor({ start: [0, 0], end: [0, 5] });
    mock.inputBoxAnswers.push('anything');
    mock.onProgress = (run) => setImmediate(() => run.token.cancel());
    const server: RequestSender = {
      sendRequest: (method, params, token) => {
        sent.push({ method, params, token });
        return new Promise((_, reject) =>
          (token as unknown as FakeCancellationToken).onCancellationRequested(() =>
            reject(new Error('Request cancelled')),
          ),
        );
      },
    };
    assert.equal(await commands(server).executeCommand('codedraft.refactor', [], noNext), undefined);
    assert.deepEqual(mock.messages, []);
  });

  it('says why no edit came', async () => {
    mock.activeTextEditor = editor({ start: [0, 0], end: [0, 5] });
    mock.inputBoxAnswers.push('anything');
    const server: RequestSender = {
      sendRequest: () => Promise.resolve({ id: 'r', applied: false, reason: 'the model replied without code' }),
    };
    await commands(server).executeCommand('codedraft.refactor', [], noNext);
    assert.deepEqual(mock.messages, [
      { severity: 'info', text: 'codedraft: refactoring: no change made (the model replied without code).', actions: [] },
    ]);
  });

  it('reports a failed request', async () => {
    mock.activeTextEditor = editor({ start: [0, 0], end: [0, 5] });
    mock.inputBoxAnswers.push('anything');
    const server: RequestSender = { sendRequest: () => Promise.reject(new Error('daemon unavailable')) };
    assert.equal(await commands(server).executeCommand('codedraft.refactor', [], noNext), undefined);
    assert.deepEqual(mock.messages, [
      { severity: 'error', text: 'codedraft: refactoring failed: daemon unavailable', actions: [] },
    ]);
  });
});

describe('codedraft.fix', () => {
  it('sends the span of the problems under the cursor', async () => {
    mock.activeTextEditor = editor({ start: [5, 3], end: [5, 3] });
    const at = (sl: number, sc: number, el: number, ec: number, message: string) => ({
      range: { start: { line: sl, character: sc }, end: { line: el, character: ec } },
      message,
    });
    mock.diagnostics.set(uri, [
      at(5, 0, 5, 8, '"y" is not defined'),
      at(4, 2, 5, 4, 'unclosed bracket'),
      at(9, 0, 9, 1, 'unused import'),
    ]);
    await commands(streamingServer('f', ['step 1: ran pytest\n'])).executeCommand('codedraft.fix', [], noNext);
    assert.deepEqual(sent[0].params, {
      command: 'codedraft.fix',
      arguments: [
        {
          uri,
          range: { start: { line: 4, character: 2 }, end: { line: 5, character: 8 } },
          diagnostics: ['"y" is not defined', 'unclosed bracket'],
        },
      ],
    });
    assert.equal(mock.progressRuns[0].options.title, 'codedraft: fixing');
  });

  it('sends the cursor when no problem touches it, the selection when there is one', async () => {
    const problem = (line: number, message: string) => ({
      range: { start: { line, character: 0 }, end: { line, character: 3 } },
      message,
    });
    mock.diagnostics.set(uri, [problem(2, 'inside'), problem(5, 'outside')]);
    mock.activeTextEditor = editor({ start: [7, 1], end: [7, 1] });
    await commands(streamingServer('f', ['x'])).executeCommand('codedraft.fix', [], noNext);
    mock.activeTextEditor = editor({ start: [1, 0], end: [3, 0] });
    await commands(streamingServer('g', ['x'])).executeCommand('codedraft.fix', [], noNext);
    assert.deepEqual(
      sent.map((s) => s.params.arguments[0]),
      [
        { uri, range: { start: { line: 7, character: 1 }, end: { line: 7, character: 1 } }, diagnostics: [] },
        { uri, range: { start: { line: 1, character: 0 }, end: { line: 3, character: 0 } }, diagnostics: ['inside'] },
      ],
    );
  });

  it('passes a code action argument through as it is', async () => {
    const argument = { uri, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } } };
    await commands(streamingServer('f', ['x'])).executeCommand('codedraft.fix', [argument], noNext);
    assert.deepEqual(sent[0].params.arguments, [argument]);
  });

  it('needs an editor', async () => {
    assert.equal(await commands(streamingServer('f', ['x'])).executeCommand('codedraft.fix', [], noNext), undefined);
    assert.equal(sent.length, 0);
    assert.equal(mock.messages[0].severity, 'warning');
  });
});

describe('other server commands', () => {
  it('go to the server unchanged', async () => {
    const calls: unknown[] = [];
    const result = await commands(streamingServer('x', ['x'])).executeCommand('codedraft.reindex', [], (command, args) => {
      calls.push([command, args]);
      return 'reindexing';
    });
    assert.equal(result, 'reindexing');
    assert.deepEqual(calls, [['codedraft.reindex', []]]);
    assert.equal(sent.length, 0);
  });
});

describe('progressMessage', () => {
  it('shows the last non-empty line, shortened', () => {
    assert.equal(progressMessage('a\nb\n\n  '), 'b');
    assert.equal(progressMessage(''), '');
    assert.equal(progressMessage('x'.repeat(100)), `${'x'.repeat(79)}…`);
  });
});
