/**
 * How long Node takes to load an extension's entry module: the "code loading" part of activation
 * that bundling changes (activate() itself runs the same code either way). Each run is a fresh
 * `node` process, so nothing is cached between runs; `vscode` is a stand-in whose every name is an
 * empty class, enough for the language client's subclasses to load.
 *
 *   node out/e2e/loadTime.js [--runs=N] path/to/extension.js...   (median and range per entry, in ms)
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

const LOAD_ONE = `
const { Module } = require('node:module');
const classes = new Map();
const anyVscode = new Proxy({}, { get: (_t, name) => classes.get(name) ?? classes.set(name, class {}).get(name) });
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'vscode' ? 'vscode' : resolve.call(this, request, ...rest);
};
require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: anyVscode };
const started = process.hrtime.bigint();
require(process.argv[1]);
process.stdout.write(String(Number(process.hrtime.bigint() - started) / 1e6));
`;

function loadMs(entry: string): number {
  return Number(execFileSync(process.execPath, ['-e', LOAD_ONE, path.resolve(entry)], { encoding: 'utf8' }));
}

function main(): void {
  const runsFlag = process.argv.find((arg) => arg.startsWith('--runs='));
  const runs = runsFlag ? Number(runsFlag.slice('--runs='.length)) : 20;
  const entries = process.argv.slice(2).filter((arg) => arg !== runsFlag);
  if (entries.length === 0) {
    console.error('usage: node out/e2e/loadTime.js [--runs=N] path/to/extension.js...');
    process.exit(2);
  }
  // Runs alternate between the entries, so a busy moment of the machine costs each of them alike.
  const times = entries.map((): number[] => []);
  for (let run = 0; run < runs; run += 1) {
    entries.forEach((entry, index) => times[index].push(loadMs(entry)));
  }
  entries.forEach((entry, index) => {
    const sorted = [...times[index]].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    const range = `${sorted[0].toFixed(1)}-${sorted[sorted.length - 1].toFixed(1)}`;
    console.log(`${entry}: median ${median.toFixed(1)} ms over ${runs} runs (${range})`);
  });
}

main();
