/**
 * Preloaded by `npm test` (`node --require`): makes `require('vscode')` load the stand-in, which
 * only exists inside a running VS Code.
 */
import { Module } from 'node:module';

type ResolveFilename = (this: unknown, request: string, ...rest: unknown[]) => string;

const mockPath = require.resolve('./vscodeMock');
const moduleInternals = Module as unknown as { _resolveFilename: ResolveFilename };
const resolveFilename = moduleInternals._resolveFilename;
moduleInternals._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]): string {
  return request === 'vscode' ? mockPath : resolveFilename.call(this, request, ...rest);
};
