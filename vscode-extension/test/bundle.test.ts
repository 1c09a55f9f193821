import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import * as path from 'node:path';
import { describe, it } from 'node:test';

const root = path.join(__dirname, '..', '..');
const main = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { main: string }).main;

describe('the bundle (esbuild.mjs)', () => {
  it('is the entry point package.json names', () => {
    assert.equal(main, './dist/extension.js');
  });

  it('needs nothing at run time but vscode and Node itself: the .vsix carries no node_modules', () => {
    const text = fs.readFileSync(path.join(root, main), 'utf8');
    const required = new Set([...text.matchAll(/\brequire\(["']([^"']+)["']\)/g)].map((match) => match[1]));
    const outside = [...required].filter(
      (name) => name !== 'vscode' && !builtinModules.includes(name.replace(/^node:/, '')),
    );
    assert.deepEqual(outside, []);
    assert.ok(required.has('vscode'));
  });

  it('loads with vscode external and exports activate and deactivate', () => {
    // The language client subclasses vscode's classes as it loads, which the recording mock does not
    // hold: for this load, every name of vscode is an empty class (node --test gives each file a process).
    const classes = new Map<PropertyKey, unknown>();
    const anyVscode = new Proxy({}, { get: (_target, name) => classes.get(name) ?? classes.set(name, class {}).get(name) });
    const load = createRequire(__filename);
    const mockPath = load.resolve('./support/vscodeMock');
    load(mockPath);
    load.cache[mockPath]!.exports = anyVscode;
    const extension = load(path.join(root, main)) as Record<string, unknown>;
    assert.equal(typeof extension.activate, 'function');
    assert.equal(typeof extension.deactivate, 'function');
  });
});
