import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { VISIBLE_CONTEXT } from '../src/nextEditController';
import { NextEditCommand } from '../src/nextEditFeature';
import { ExtensionCommand, ServerCommand } from '../src/protocol';

interface Manifest {
  main: string;
  engines: { vscode: string };
  devDependencies: Record<string, string>;
  contributes: {
    commands: { command: string; title: string; enablement?: string }[];
    menus: Record<string, { command: string; when?: string }[]>;
    keybindings: { command: string; key: string; when: string }[];
  };
}

const root = path.join(__dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as Manifest;

describe('package.json', () => {
  const contributed = manifest.contributes.commands.map((c) => c.command);

  it('contributes the palette commands, and not the status query', () => {
    assert.deepEqual(contributed.sort(), [
      ExtensionCommand.showStatus,
      ExtensionCommand.toggle,
      NextEditCommand.accept,
      NextEditCommand.dismiss,
      ServerCommand.fix,
      ServerCommand.refactor,
      ServerCommand.reindex,
      ServerCommand.resetAcceptHistory,
    ].sort());
  });

  it('enables server commands only while the server runs, since the client registers them', () => {
    for (const command of manifest.contributes.commands) {
      const fromServer = (Object.values(ServerCommand) as string[]).includes(command.command);
      assert.equal(command.enablement === 'codedraft.serverRunning', fromServer, command.command);
    }
  });

  it('lists only contributed commands in menus', () => {
    for (const [menu, entries] of Object.entries(manifest.contributes.menus)) {
      for (const entry of entries) {
        assert.ok(contributed.includes(entry.command), `${menu}: ${entry.command}`);
      }
    }
    assert.deepEqual(
      manifest.contributes.menus['editor/context'].map((e) => e.command),
      [ServerCommand.refactor, ServerCommand.fix],
    );
  });

  it('points at the compiled entry point and an engine the API types allow', () => {
    assert.ok(fs.existsSync(path.join(root, manifest.main)), manifest.main);
    const engine = manifest.engines.vscode.replace(/^\^/, '');
    assert.equal(manifest.devDependencies['@types/vscode'], engine);
  });

  it('binds Tab and Esc to next edits only while one is shown, and never over ghost text', () => {
    const bindings = manifest.contributes.keybindings.map((binding) => [binding.command, binding.key]);
    assert.deepEqual(bindings, [
      [NextEditCommand.accept, 'tab'],
      [NextEditCommand.dismiss, 'escape'],
      [NextEditCommand.hideGhostText, 'escape'],
    ]);
    const [accept, dismiss, hideGhostText] = manifest.contributes.keybindings.map((binding) => binding.when.split(' && '));
    for (const when of [accept, dismiss]) {
      assert.ok(when.includes(VISIBLE_CONTEXT), when.join(' && '));
      assert.ok(when.includes('!inlineSuggestionVisible'), when.join(' && '));
    }
    // Every Esc that hides ghost text goes through the extension, so that an edit waiting behind it shows.
    assert.deepEqual(hideGhostText, ['editorTextFocus', 'inlineSuggestionVisible']);
  });
});
