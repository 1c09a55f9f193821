/**
 * The message a user sees when the language server cannot start, with a way to fix it.
 */
import * as vscode from 'vscode';

export const OPEN_SETTINGS = 'Open settings';
export const SHOW_LOG = 'Show log';

/** Shows what went wrong and opens the server settings if the user asks to. */
export async function reportStartFailure(reason: string, log: vscode.OutputChannel | undefined): Promise<void> {
  const actions = log === undefined ? [OPEN_SETTINGS] : [OPEN_SETTINGS, SHOW_LOG];
  const choice = await vscode.window.showErrorMessage(
    `codedraft: the language server could not start: ${reason}. ` +
      'Install codedraft, or set codedraft.server.command or codedraft.server.pythonPath.',
    ...actions,
  );
  if (choice === OPEN_SETTINGS) {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'codedraft.server');
  } else if (choice === SHOW_LOG) {
    log?.show();
  }
}
