/**
 * Which process to start as the language server, and whether it can be started at all,
 * checked before the client spawns it so a missing program gets one clear message.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { ClientSettings } from './configuration';

export interface ServerCommandLine {
  command: string;
  args: string[];
}

/** `server.pythonPath` wins over `server.command`, so pointing at a virtual environment is enough. */
export function resolveServerCommand(settings: ClientSettings): ServerCommandLine | undefined {
  if (settings.pythonPath.length > 0) {
    return { command: settings.pythonPath, args: ['-m', 'codedraft', 'lsp'] };
  }
  const [command, ...args] = settings.serverCommand;
  return command === undefined ? undefined : { command, args };
}

export function describeCommand(line: ServerCommandLine): string {
  return [line.command, ...line.args].map((part) => (/\s/.test(part) ? JSON.stringify(part) : part)).join(' ');
}

function isExecutableFile(candidate: string): boolean {
  try {
    fs.accessSync(candidate, fs.constants.X_OK);
    return fs.statSync(candidate).isFile();
  } catch {
    return false;
  }
}

/**
 * The absolute path the program would run from, or undefined when it is not there.
 * A bare name is looked up on PATH the way the shell does; a path is taken as written
 * (relative paths against `cwd`).
 */
export function findExecutable(
  command: string,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string | undefined {
  if (command.includes('/') || command.includes(path.sep)) {
    const candidate = path.resolve(cwd, command);
    return isExecutableFile(candidate) ? candidate : undefined;
  }
  const extensions = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD').split(';') : [''];
  for (const directory of (env.PATH ?? '').split(path.delimiter)) {
    if (directory.length === 0) {
      continue;
    }
    for (const extension of extensions) {
      const candidate = path.join(directory, command + extension);
      if (isExecutableFile(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}
