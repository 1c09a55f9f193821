import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';

import { describeCommand, findExecutable, resolveServerCommand } from '../src/serverCommand';

describe('resolveServerCommand', () => {
  it('uses server.command by default', () => {
    assert.deepEqual(resolveServerCommand({ serverCommand: ['codedraft', 'lsp'], pythonPath: '', trace: 'off' }), {
      command: 'codedraft',
      args: ['lsp'],
    });
  });
  it('prefers the Python interpreter when one is set', () => {
    assert.deepEqual(
      resolveServerCommand({ serverCommand: ['codedraft', 'lsp'], pythonPath: '/venv/bin/python', trace: 'off' }),
      { command: '/venv/bin/python', args: ['-m', 'codedraft', 'lsp'] },
    );
  });
  it('has nothing to run for an empty command', () => {
    assert.equal(resolveServerCommand({ serverCommand: [], pythonPath: '', trace: 'off' }), undefined);
  });
  it('describes a command line as a shell would read it', () => {
    assert.equal(describeCommand({ command: '/my tools/python', args: ['-m', 'codedraft', 'lsp'] }), '"/my tools/python" -m codedraft lsp');
  });
});

describe('findExecutable', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'codedraft-find-'));
  const bin = path.join(root, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'codedraft'), '#!/bin/sh\n', { mode: 0o755 });
  fs.writeFileSync(path.join(bin, 'notes.txt'), 'not a program', { mode: 0o644 });
  fs.mkdirSync(path.join(bin, 'folder'));
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('finds a bare name on PATH', () => {
    assert.equal(findExecutable('codedraft', { PATH: `/nonexistent${path.delimiter}${bin}` }), path.join(bin, 'codedraft'));
  });
  it('skips files that are not executable, folders, and missing names', () => {
    assert.equal(findExecutable('notes.txt', { PATH: bin }), undefined);
    assert.equal(findExecutable('folder', { PATH: bin }), undefined);
    assert.equal(findExecutable('missing', { PATH: bin }), undefined);
    assert.equal(findExecutable('codedraft', {}), undefined);
  });
  it('takes a path as written, relative to the workspace', () => {
    assert.equal(findExecutable(path.join(bin, 'codedraft'), { PATH: '' }), path.join(bin, 'codedraft'));
    assert.equal(findExecutable('bin/codedraft', { PATH: '' }, root), path.join(bin, 'codedraft'));
    assert.equal(findExecutable('bin/missing', { PATH: '' }, root), undefined);
  });
});
