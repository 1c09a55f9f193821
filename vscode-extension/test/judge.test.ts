import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { definesFunction, isProposalCheckRefusal, loopIn, pythonSyntaxError } from '../e2e/judge';

describe('judging a suggestion', () => {
  it('finds the loops of the issue', () => {
    assert.match(loopIn(`return ${'x * '.repeat(40)}x`) ?? '', /repeats within a line/);
    assert.match(loopIn(`__all__ = ['a', 'b', 'c', 'c', ${"'d', ".repeat(100)}]`) ?? '', /repeats within a line/);
    assert.match(loopIn('    self.value = value\n'.repeat(5)) ?? '', /the line "self.value = value" repeats/);
  });
  it('leaves legitimate repetition alone', () => {
    assert.equal(loopIn('return x * x * x'), undefined);
    assert.equal(loopIn(`# ${'-'.repeat(70)}`), undefined);
    assert.equal(loopIn(['(1, "a", 1),', '(2, "b", 4),', '(3, "c", 9),', '(4, "d", 16),'].join('\n')), undefined);
    assert.equal(loopIn('call(arg1, arg2, arg3, arg4, arg5, arg6)'), undefined);
  });
  it('finds a function definition', () => {
    assert.equal(definesFunction('import x\n\ndef fibonacci(n):\n    return n\n', 'fibonacci'), true);
    assert.equal(definesFunction('    async def fibonacci (n):', 'fibonacci'), true);
    assert.equal(definesFunction('"""Utilities."""\n__all__ = ["fibonacci"]\n', 'fibonacci'), false);
  });
  it("tells the proposal check's refusals from other reasons", () => {
    assert.equal(isProposalCheckRefusal('the proposal drops the definition of fibonacci; not offered, ask again'), true);
    assert.equal(isProposalCheckRefusal('the proposal is 19x the size of the code it replaces (at most 3x is offered)'), true);
    assert.equal(isProposalCheckRefusal('the model could not answer: timed out'), false);
  });
  it('runs Python to see whether a file parses', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'judge-'));
    const good = path.join(dir, 'good.py');
    const bad = path.join(dir, 'bad.py');
    fs.writeFileSync(good, 'def f(n):\n    return n\n');
    fs.writeFileSync(bad, 'def f(n):\n    return x * \n');
    assert.equal(pythonSyntaxError(good, 'python3'), undefined);
    assert.match(pythonSyntaxError(bad, 'python3') ?? '', /SyntaxError/);
    fs.rmSync(dir, { recursive: true });
  });
});
