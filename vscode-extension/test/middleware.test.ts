import * as assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import { readServerSettings, type ServerSettings } from '../src/configuration';
import { createMiddleware } from '../src/middleware';

// The middleware's parameter types come from vscode; these tests pass plain stand-ins.
/* eslint-disable @typescript-eslint/no-explicit-any */

let values: Record<string, unknown>;
let notified: unknown[];
let executed: { command: string; args: unknown[] }[];

function settings(): ServerSettings {
  return readServerSettings({ get: <T>(key: string) => values[key] as T | undefined });
}

function middleware() {
  return createMiddleware({
    serverSettings: settings,
    notifyConfiguration: (value) => {
      notified.push(value);
      return Promise.resolve();
    },
    executeCommand: (command, args) => {
      executed.push({ command, args });
      return 'ran';
    },
  });
}

beforeEach(() => {
  values = {};
  notified = [];
  executed = [];
});

describe('inline completion', () => {
  const document = { languageId: 'python' } as any;
  const position = { line: 3, character: 7 } as any;
  const context = { triggerKind: 1 } as any;

  it('passes the editor cancellation token on to the request', async () => {
    const token = { isCancellationRequested: false } as any;
    const received: unknown[][] = [];
    const result = await middleware().provideInlineCompletionItems!(document, position, context, token, (...args: any[]) => {
      received.push(args);
      return { items: [] };
    });
    assert.deepEqual(result, { items: [] });
    assert.equal(received.length, 1);
    assert.equal(received[0][0], document);
    assert.equal(received[0][1], position);
    assert.equal(received[0][2], context);
    assert.equal(received[0][3], token);
  });

  it('sends nothing when completions are off or the language is not enabled', async () => {
    let requests = 0;
    const next = () => {
      requests++;
      return null;
    };
    values['completion.enabled'] = false;
    assert.equal(await middleware().provideInlineCompletionItems!(document, position, context, {} as any, next), undefined);
    values['completion.enabled'] = true;
    values['completion.enabledLanguages'] = ['rust'];
    assert.equal(await middleware().provideInlineCompletionItems!(document, position, context, {} as any, next), undefined);
    assert.equal(requests, 0);
    values['completion.enabledLanguages'] = ['rust', 'python'];
    await middleware().provideInlineCompletionItems!(document, position, context, {} as any, next);
    assert.equal(requests, 1);
  });

  it('tells next-edit suggestions where ghost text was offered, at the version it was asked for', async () => {
    const offered: unknown[][] = [];
    const withHook = createMiddleware({
      serverSettings: settings,
      notifyConfiguration: () => Promise.resolve(),
      executeCommand: () => undefined,
      ghostTextOffered: (...args) => offered.push(args),
    });
    const doc = { languageId: 'python', version: 4, uri: { toString: () => 'file:///w/a.py' } } as any;
    await withHook.provideInlineCompletionItems!(doc, position, context, {} as any, () => {
      doc.version = 5; // the user typed while the model worked
      return { items: [{ insertText: 'x' }] };
    });
    await withHook.provideInlineCompletionItems!(doc, position, context, {} as any, () => ({ items: [] }));
    await withHook.provideInlineCompletionItems!(doc, position, context, {} as any, () => null);
    await withHook.provideInlineCompletionItems!(doc, position, context, {} as any, () => [{ insertText: 'y' }]);
    assert.deepEqual(offered, [
      ['file:///w/a.py', 4, position],
      ['file:///w/a.py', 5, position],
    ]);
  });

  it('tells the completion feedback every answer that was not cancelled, and the accept command it runs', async () => {
    const offered: unknown[][] = [];
    const accepted: unknown[][] = [];
    const withFeedback = createMiddleware({
      serverSettings: settings,
      notifyConfiguration: () => Promise.resolve(),
      executeCommand: (command, args) => {
        executed.push({ command, args });
        return 'ran';
      },
      completionsOffered: (doc, items) => offered.push([doc, items]),
      completionAccepted: (args) => accepted.push(args),
    });
    const doc = { languageId: 'python', version: 1, uri: { toString: () => 'file:///w/a.py' } } as any;
    const item = { insertText: 'x', command: { title: 'Accept', command: 'codedraft.didAcceptCompletionItem', arguments: ['id1'] } };
    await withFeedback.provideInlineCompletionItems!(doc, position, context, {} as any, () => ({ items: [item] }));
    await withFeedback.provideInlineCompletionItems!(doc, position, context, {} as any, () => null);
    await withFeedback.provideInlineCompletionItems!(doc, position, context, { isCancellationRequested: true } as any, () => null);
    assert.deepEqual(offered, [
      [doc, [item]],
      [doc, []],
    ]);
    assert.equal(await withFeedback.executeCommand!('codedraft.didAcceptCompletionItem', ['id1'], () => undefined), 'ran');
    await withFeedback.executeCommand!('codedraft.reindex', [], () => undefined);
    assert.deepEqual(accepted, [['id1']]);
    assert.deepEqual(executed, [
      { command: 'codedraft.didAcceptCompletionItem', args: ['id1'] },
      { command: 'codedraft.reindex', args: [] },
    ]);
  });

  it('keeps completion-list items out of VS Code', () => {
    let requests = 0;
    const result = middleware().provideCompletionItem!(document, position, {} as any, {} as any, () => {
      requests++;
      return [];
    });
    assert.equal(result, undefined);
    assert.equal(requests, 0);
  });
});

describe('workspace/configuration', () => {
  it('answers codedraft sections without asking VS Code', async () => {
    values['agent.stepLimit'] = 9;
    const answer = await middleware().workspace!.configuration!(
      { items: [{ section: 'codedraft' }, { section: 'codedraft.agent.stepLimit' }] },
      {} as any,
      () => {
        throw new Error('should not be asked');
      },
    );
    assert.deepEqual(answer, [settings(), 9]);
  });

  it('asks VS Code for other sections and merges the answers in order', async () => {
    const answer = await middleware().workspace!.configuration!(
      { items: [{ section: 'python' }, { section: 'codedraft.completion.maxTokens' }] },
      {} as any,
      () => [{ pythonPath: 'py' }, 'vscode would say this'],
    );
    assert.deepEqual(answer, [{ pythonPath: 'py' }, 64]);
  });
});

describe('workspace/didChangeConfiguration', () => {
  it('sends the same shape as initializationOptions', async () => {
    values['completion.enabled'] = false;
    await middleware().workspace!.didChangeConfiguration!(['codedraft'], () =>
      Promise.reject(new Error('the raw settings are not sent')),
    );
    assert.deepEqual(notified, [{ codedraft: settings() }]);
    assert.deepEqual(notified, [{ codedraft: { ...settings(), completion: { ...settings().completion, enabled: false } } }]);
  });
});

describe('executeCommand', () => {
  it('hands server commands to the command runner', async () => {
    const result = await middleware().executeCommand!('codedraft.reindex', [1], () => 'next');
    assert.equal(result, 'ran');
    assert.deepEqual(executed, [{ command: 'codedraft.reindex', args: [1] }]);
  });
});
