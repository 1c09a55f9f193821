import * as assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import { reportStartFailure } from '../src/startFailure';
import { FakeOutputChannel, mock } from './support/vscodeMock';

/* eslint-disable @typescript-eslint/no-explicit-any */

beforeEach(() => mock.reset());

describe('reportStartFailure', () => {
  it('names the problem and opens the server settings on request', async () => {
    mock.messageAnswers.push('Open settings');
    await reportStartFailure('"codedraft" was not found', undefined);
    assert.equal(mock.messages.length, 1);
    assert.equal(mock.messages[0].severity, 'error');
    assert.match(mock.messages[0].text, /^codedraft: the language server could not start: "codedraft" was not found\./);
    assert.match(mock.messages[0].text, /codedraft\.server\.command or codedraft\.server\.pythonPath/);
    assert.deepEqual(mock.messages[0].actions, ['Open settings']);
    assert.deepEqual(mock.executedCommands, [{ command: 'workbench.action.openSettings', args: ['codedraft.server'] }]);
  });

  it('offers the log when there is one, and does nothing when dismissed', async () => {
    const log = new FakeOutputChannel('codedraft language server');
    mock.messageAnswers.push('Show log', undefined);
    await reportStartFailure('Launching server failed', log as any);
    assert.deepEqual(mock.messages[0].actions, ['Open settings', 'Show log']);
    assert.equal(log.shown, 1);
    await reportStartFailure('Launching server failed', log as any);
    assert.equal(log.shown, 1);
    assert.deepEqual(mock.executedCommands, []);
  });
});
