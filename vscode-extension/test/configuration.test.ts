import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
  completionWanted,
  configurationItem,
  DEFAULTS,
  readClientSettings,
  readServerSettings,
  type SettingsReader,
} from '../src/configuration';

function reader(values: Record<string, unknown>): SettingsReader {
  return { get: <T>(key: string) => values[key] as T | undefined };
}

const packageJson = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, { default: unknown; description?: string; markdownDescription?: string }> } };
};

describe('server settings', () => {
  it('maps defaults to the nested camelCase initializationOptions', () => {
    assert.deepEqual(readServerSettings(reader({})), {
      daemon: { address: '', model: '', draftModel: '', device: 'auto', tlsCa: '' },
      completion: { enabled: true, enabledLanguages: ['*'], maxTokens: 64, contextBudgetTokens: 1024, debounceMs: 75, timeoutMs: 5000, prefill: true, confidence: 'auto' },
      nextEdit: { enabled: true },
      agent: { checkCommand: '', stepLimit: 4 },
    });
  });

  it('passes user values through, trimmed', () => {
    const settings = readServerSettings(
      reader({
        'daemon.address': ' unix:///tmp/codedraft.sock ',
        'daemon.model': '/models/qwen2.5-coder-1.5b',
        'daemon.draftModel': '/models/qwen2.5-coder-0.5b',
        'daemon.device': 'cuda',
        'daemon.tlsCa': ' /etc/codedraft/team-ca.pem ',
        'completion.enabled': false,
        'completion.enabledLanguages': ['python', 'rust'],
        'completion.maxTokens': 128,
        'completion.contextBudgetTokens': 2048,
        'completion.debounceMs': 10,
        'completion.timeoutMs': 60000,
        'completion.prefill': false,
        'completion.confidence': ' 0.6 ',
        'nextEdit.enabled': false,
        'agent.checkCommand': 'pytest -x -q',
        'agent.stepLimit': 6,
        'server.command': ['ignored'],
      }),
    );
    assert.deepEqual(settings, {
      daemon: {
        address: 'unix:///tmp/codedraft.sock',
        model: '/models/qwen2.5-coder-1.5b',
        draftModel: '/models/qwen2.5-coder-0.5b',
        device: 'cuda',
        tlsCa: '/etc/codedraft/team-ca.pem',
      },
      completion: {
        enabled: false,
        enabledLanguages: ['python', 'rust'],
        maxTokens: 128,
        contextBudgetTokens: 2048,
        debounceMs: 10,
        timeoutMs: 60000,
        prefill: false,
        confidence: '0.6',
      },
      nextEdit: { enabled: false },
      agent: { checkCommand: 'pytest -x -q', stepLimit: 6 },
    });
  });

  it('falls back to the default for a value of the wrong type', () => {
    const settings = readServerSettings(
      reader({
        'completion.maxTokens': '128',
        'completion.debounceMs': -5,
        'completion.timeoutMs': 0,
        'completion.contextBudgetTokens': 1.5,
        'agent.stepLimit': 0,
        'completion.enabled': 'yes',
        'completion.prefill': 'no',
        'nextEdit.enabled': 'off',
        'completion.confidence': '1.5',
        'completion.enabledLanguages': ['python', 3],
        'daemon.device': '',
      }),
    );
    assert.equal(settings.completion.maxTokens, 64);
    assert.equal(settings.completion.debounceMs, 75);
    assert.equal(settings.completion.timeoutMs, 5000);
    assert.equal(settings.completion.contextBudgetTokens, 1024);
    assert.equal(settings.agent.stepLimit, 4);
    assert.equal(settings.completion.enabled, true);
    assert.equal(settings.completion.prefill, true);
    assert.equal(settings.nextEdit.enabled, true);
    assert.equal(settings.completion.confidence, 'auto');
    assert.deepEqual(settings.completion.enabledLanguages, ['*']);
    assert.equal(settings.daemon.device, 'auto');
  });
});

describe('client settings', () => {
  it('reads the server command, python path and trace level', () => {
    assert.deepEqual(readClientSettings(reader({})), { serverCommand: ['codedraft', 'lsp'], pythonPath: '', trace: 'off' });
    assert.deepEqual(
      readClientSettings(reader({ 'server.command': ['uv', '', 'run', 'codedraft', 'lsp'], 'server.pythonPath': '/venv/bin/python', 'trace.server': 'verbose' })),
      { serverCommand: ['uv', 'run', 'codedraft', 'lsp'], pythonPath: '/venv/bin/python', trace: 'verbose' },
    );
    assert.equal(readClientSettings(reader({ 'trace.server': 'loud' })).trace, 'off');
  });
});

describe('completionWanted', () => {
  const base = readServerSettings(reader({})).completion;
  it('follows the switch and the language list', () => {
    assert.equal(completionWanted(base, 'python'), true);
    assert.equal(completionWanted({ ...base, enabled: false }, 'python'), false);
    assert.equal(completionWanted({ ...base, enabledLanguages: ['python'] }, 'python'), true);
    assert.equal(completionWanted({ ...base, enabledLanguages: ['python'] }, 'markdown'), false);
    assert.equal(completionWanted({ ...base, enabledLanguages: [] }, 'python'), false);
  });
});

describe('configurationItem (workspace/configuration)', () => {
  const settings = readServerSettings(reader({ 'agent.stepLimit': 2 }));
  it('answers the section, a nested part, or one value', () => {
    assert.deepEqual(configurationItem(settings, 'codedraft'), settings);
    assert.deepEqual(configurationItem(settings, 'codedraft.agent'), { checkCommand: '', stepLimit: 2 });
    assert.equal(configurationItem(settings, 'codedraft.completion.maxTokens'), 64);
  });
  it('answers null for an unknown key and undefined for another section', () => {
    assert.equal(configurationItem(settings, 'codedraft.nothing'), null);
    assert.equal(configurationItem(settings, 'codedraft.agent.stepLimit.deeper'), null);
    assert.equal(configurationItem(settings, 'python'), undefined);
    assert.equal(configurationItem(settings, undefined), undefined);
  });
});

describe('package.json', () => {
  const properties = packageJson.contributes.configuration.properties;
  it('declares every setting, with the same default, and a description', () => {
    const declared = Object.keys(properties).sort();
    const expected = Object.keys(DEFAULTS)
      .map((key) => `codedraft.${key}`)
      .sort();
    assert.deepEqual(declared, expected);
    for (const [key, value] of Object.entries(DEFAULTS)) {
      const property = properties[`codedraft.${key}`];
      assert.deepEqual(property.default, value, key);
      const description = property.markdownDescription ?? property.description ?? '';
      assert.ok(description.length > 20, `${key} needs a description`);
    }
  });
});
