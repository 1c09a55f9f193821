import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { LastCompletion, StatusParams } from '../src/protocol';
import { describeAccepts, describeLastCompletion, presentStatus, statusDetails } from '../src/statusText';

const ready: StatusParams = {
  state: 'ready',
  message: 'ready',
  model: 'qwen2.5-coder-1.5b',
  device: 'cuda',
  lastCompletion: { latencyMs: 84.6, promptTokens: 1200, reusedTokens: 1104 },
};

describe('status bar text', () => {
  it('shows model, device, latency and cache reuse when ready', () => {
    const shown = presentStatus(ready, 'running', true);
    assert.equal(shown.text, '$(sparkle) qwen2.5-coder-1.5b · cuda · 85 ms · 92% reused');
    assert.equal(shown.severity, 'normal');
  });
  it('shows each backend state', () => {
    assert.equal(
      presentStatus({ state: 'loading', message: 'loading model', model: 'tiny', device: 'cpu' }, 'running', true).text,
      '$(loading~spin) codedraft: loading · tiny · cpu',
    );
    assert.equal(
      presentStatus({ state: 'indexing', message: '', index: { done: 40, total: 120 } }, 'running', true).text,
      '$(sync~spin) codedraft: indexing 40/120',
    );
    const down = presentStatus({ state: 'degraded', message: 'daemon unreachable' }, 'running', true);
    assert.equal(down.text, '$(warning) codedraft: daemon down');
    assert.equal(down.severity, 'warning');
    const error = presentStatus({ state: 'error', message: 'model not found' }, 'running', true);
    assert.equal(error.text, '$(error) codedraft: error');
    assert.equal(error.severity, 'error');
  });
  it('shows the client phase before the server speaks', () => {
    assert.equal(presentStatus(undefined, 'starting', true).text, '$(loading~spin) codedraft: starting');
    assert.equal(presentStatus(ready, 'stopped', true).text, '$(debug-disconnect) codedraft: stopped');
  });
  it('marks completions turned off', () => {
    assert.equal(presentStatus(ready, 'running', false).text, '$(circle-slash) qwen2.5-coder-1.5b · cuda · 85 ms · 92% reused (off)');
  });
});

describe('status details', () => {
  it('lists every known fact', () => {
    assert.deepEqual(statusDetails({ ...ready, index: { done: 3, total: 3 }, suppressed: 'repeats the next line' }, 'running', true), [
      'State: ready (ready)',
      'Model: qwen2.5-coder-1.5b',
      'Device: cuda',
      'Index: 3 of 3 files',
      'Last completion: 85 ms · 92% reused (1104 of 1200 prompt tokens from cache)',
      'Last suggestion suppressed: repeats the next line',
      'Completions: on',
    ]);
    assert.deepEqual(statusDetails(undefined, 'stopped', false), ['Language server: not running', 'Completions: off']);
  });
  it('puts the details in the tooltip', () => {
    assert.equal(presentStatus({ state: 'degraded', message: 'daemon unreachable' }, 'running', true).tooltip,
      'State: daemon down (daemon unreachable)\nCompletions: on\nClick for details');
  });
  it('copes with an empty prompt', () => {
    assert.equal(describeLastCompletion({ latencyMs: 12, promptTokens: 0, reusedTokens: 0 }), '12 ms');
    assert.equal(describeLastCompletion({ latencyMs: 12, promptTokens: 10, reusedTokens: 30 }), '12 ms · 100% reused');
  });
  it('says "no figures" when the daemon sent none, never a made-up 0', () => {
    // as the server sends it when the daemon's last chunk never came
    const last = JSON.parse(
      '{"latencyMs": 85.2, "promptTokens": null, "reusedTokens": null, "daemonMs": 80.1, "firstTokenMs": null, "localPrompt": false, "note": "no figures"}',
    ) as LastCompletion;
    assert.equal(describeLastCompletion(last), '85 ms · no figures');
    const status: StatusParams = { ...ready, lastCompletion: last };
    assert.equal(presentStatus(status, 'running', true).text, '$(sparkle) qwen2.5-coder-1.5b · cuda · 85 ms · no figures');
    assert.ok(statusDetails(status, 'running', true).includes('Last completion: 85 ms · no figures'));
    // a server that leaves the figures out altogether reads the same
    assert.equal(describeLastCompletion({ latencyMs: 12 } as LastCompletion), '12 ms · no figures');
  });
});

describe('accept rate', () => {
  const accepts = {
    shown: 40,
    accepted: 9,
    partial: 3,
    dismissed: 20,
    rate: 0.3,
    gate: { feature: 'min', threshold: -0.6, calibratedThreshold: -0.85 },
  };
  it('shows accepts (whole or in part) of those shown next to the rest', () => {
    assert.equal(
      presentStatus({ ...ready, accepts }, 'running', true).text,
      '$(sparkle) qwen2.5-coder-1.5b · cuda · 85 ms · 92% reused · accepts 12/40',
    );
    assert.equal(describeAccepts({ ...accepts, shown: 0, accepted: 0, partial: 0, dismissed: 0, rate: null }), undefined);
    assert.equal(presentStatus({ ...ready, accepts: { ...accepts, shown: 0 } }, 'running', true).text.includes('accepts'), false);
  });
  it('details the counts and the adapted gate', () => {
    const lines = statusDetails({ ...ready, accepts }, 'running', true);
    assert.deepEqual(lines.slice(-3), [
      'Suggestions: 12 of 40 accepted (3 in part), 20 dismissed',
      'Confidence gate: first line min log-probability ≥ -0.60 (calibrated -0.85)',
      'Completions: on',
    ]);
    const asCalibrated = { ...accepts, gate: { feature: 'min', threshold: -0.85, calibratedThreshold: -0.85 } };
    assert.equal(
      statusDetails({ ...ready, accepts: asCalibrated }, 'running', true).at(-2),
      'Confidence gate: first line min log-probability ≥ -0.85 (as calibrated)',
    );
    const named = { ...accepts, gate: { feature: 'sum', figure: 'first line total log-probability', threshold: -2.4, calibratedThreshold: -2.4 } };
    assert.equal(
      statusDetails({ ...ready, accepts: named }, 'running', true).at(-2),
      'Confidence gate: first line total log-probability ≥ -2.40 (as calibrated)',
    );
  });
});
