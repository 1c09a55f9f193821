import * as assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';

import { type ServerHandle, showStatus, toggleCompletions } from '../src/extensionCommands';
import { StatusBar } from '../src/statusBar';
import { type FakeStatusBarItem, mock } from './support/vscodeMock';

const colorOf = (item: FakeStatusBarItem): string | undefined => item.backgroundColor?.id;

beforeEach(() => mock.reset());

describe('codedraft.toggle', () => {
  it('flips completion.enabled in the user settings', async () => {
    assert.equal(await toggleCompletions(), false);
    assert.equal(await toggleCompletions(), true);
    assert.deepEqual(mock.updates, [
      { key: 'codedraft.completion.enabled', value: false, target: 1 },
      { key: 'codedraft.completion.enabled', value: true, target: 1 },
    ]);
  });

  it('flips it in the workspace when the workspace sets it', async () => {
    mock.workspaceSettings['codedraft.completion.enabled'] = false;
    assert.equal(await toggleCompletions(), true);
    assert.deepEqual(mock.updates, [{ key: 'codedraft.completion.enabled', value: true, target: 2 }]);
  });
});

function server(running: boolean, answer: unknown, requested: string[]): ServerHandle {
  return {
    isRunning: running,
    request: (command) => {
      requested.push(command);
      return Promise.resolve(answer);
    },
    restart: () => Promise.resolve(),
  };
}

describe('codedraft.showStatus', () => {
  it('asks the server for a fresh status and lists it with actions', async () => {
    const bar = new StatusBar();
    bar.setPhase('running');
    bar.setStatus({ state: 'loading', message: 'loading' });
    const requested: string[] = [];
    await showStatus(bar, server(true, { state: 'ready', message: 'ok', model: 'tiny', device: 'cpu' }, requested));
    assert.deepEqual(requested, ['codedraft.status']);
    assert.deepEqual(
      mock.quickPicks[0].items.map((item) => item.label),
      [
        'State: ready (ok)',
        'Model: tiny',
        'Device: cpu',
        'Completions: on',
        '',
        '$(circle-slash) Disable completions',
        '$(refresh) Reindex the workspace',
        '$(debug-restart) Restart the language server',
        '$(settings-gear) Open settings',
      ],
    );
  });

  it('runs the chosen action', async () => {
    const bar = new StatusBar();
    const requested: string[] = [];
    mock.quickPickChooser = (items) => items.find((item) => item.label.includes('Reindex'));
    await showStatus(bar, server(true, 'not a status', requested));
    assert.deepEqual(requested, ['codedraft.status', 'codedraft.reindex']);
    assert.equal(mock.quickPicks[0].items[0].label, 'Language server: starting');
  });

  it('does not ask a stopped server', async () => {
    const bar = new StatusBar();
    bar.setPhase('stopped');
    const requested: string[] = [];
    mock.settings['codedraft.completion.enabled'] = false;
    mock.quickPickChooser = (items) => items.find((item) => item.label.includes('Enable completions'));
    mock.registeredCommands.set('codedraft.toggle', () => toggleCompletions());
    await showStatus(bar, server(false, undefined, requested));
    assert.deepEqual(requested, []);
    assert.deepEqual(mock.updates, [{ key: 'codedraft.completion.enabled', value: true, target: 1 }]);
  });
});

describe('StatusBar', () => {
  it('shows the status item, reflects notifications, and opens the details on click', () => {
    const bar = new StatusBar();
    const item = mock.statusBarItems[0];
    assert.equal(item.visible, true);
    assert.equal(item.command, 'codedraft.showStatus');
    assert.equal(item.text, '$(loading~spin) codedraft: starting');
    bar.setPhase('running');
    bar.setStatus({ state: 'ready', message: '', model: 'tiny', device: 'cpu', lastCompletion: { latencyMs: 40, promptTokens: 100, reusedTokens: 50 } });
    assert.equal(item.text, '$(sparkle) tiny · cpu · 40 ms · 50% reused');
    assert.equal(item.backgroundColor, undefined);
    bar.setStatus({ state: 'degraded', message: 'daemon unreachable' });
    assert.equal(colorOf(item), 'statusBarItem.warningBackground');
    bar.setPhase('stopped');
    assert.equal(item.text, '$(debug-disconnect) codedraft: stopped');
    assert.equal(colorOf(item), 'statusBarItem.errorBackground');
    bar.setPhase('running');
    assert.equal(bar.lastStatus, undefined);
  });
});
