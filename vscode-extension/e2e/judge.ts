/**
 * What a person judges when they look at a suggestion or a refactor: does the code still parse, is
 * the function still there, does the text loop. Pure functions (plus one Python subprocess), so the
 * end-to-end driver can ask them and the unit tests can check them.
 */
import { execFileSync } from 'node:child_process';

/** Messages of the server's proposal check (`lsp_server/rewrite/proposal_check.py`), as the user reads them. */
const PROPOSAL_CHECK_REASONS = [
  /^the proposal drops the definition of /,
  /^the proposed code does not parse as /,
  /^the proposal is \d+x the size of the code it replaces/,
];

/**
 * A loop in `text`, described, or undefined: a piece of a line repeated four times in a row (with
 * at least two different characters, so `# ------` is no loop), or the same non-blank line three
 * times in a row. `x * x * x` and a table of similar lines are no loop.
 */
export function loopIn(text: string): string | undefined {
  const lines = text.split('\n');
  for (const line of lines) {
    for (const match of line.matchAll(/(.{2,40}?)\1{3,}/g)) {
      if (new Set(match[1].replace(/\s/g, '')).size >= 2) {
        return `"${match[1]}" repeats within a line: ${match[0]}`;
      }
    }
  }
  for (let i = 0; i + 2 < lines.length; i++) {
    if (lines[i].trim().length > 0 && lines[i] === lines[i + 1] && lines[i] === lines[i + 2]) {
      return `the line "${lines[i].trim()}" repeats`;
    }
  }
  return undefined;
}

/** Whether Python source `text` defines a function `name` (at any indentation). */
export function definesFunction(text: string, name: string): boolean {
  return new RegExp(`^\\s*(async\\s+)?def\\s+${name}\\s*\\(`, 'm').test(text);
}

/** Whether a "no change made" reason is the proposal check's refusal (what the user is meant to see). */
export function isProposalCheckRefusal(reason: string): boolean {
  return PROPOSAL_CHECK_REASONS.some((pattern) => pattern.test(reason));
}

/** Why the Python file does not parse (`python -c ast.parse`), or undefined when it does. */
export function pythonSyntaxError(file: string, python: string): string | undefined {
  try {
    execFileSync(python, ['-c', 'import ast, sys; ast.parse(open(sys.argv[1], encoding="utf-8").read(), sys.argv[1])', file], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return undefined;
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? String(error);
    return stderr.trim().split('\n').slice(-3).join(' ');
  }
}
