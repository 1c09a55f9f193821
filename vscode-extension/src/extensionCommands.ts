/**
 * The commands that live in the extension: `codedraft.toggle` and `codedraft.showStatus`.
 */
import * as vscode from 'vscode';

import { readServerSettings, SECTION } from './configuration';
import { ExtensionCommand, isStatusParams, ServerCommand, type StatusParams } from './protocol';

export interface StatusSource {
  /** The last status notification. */
  lastStatus: StatusParams | undefined;
  details(status?: StatusParams): string[];
}

export interface ServerHandle {
  readonly isRunning: boolean;
  /** Runs a server command directly (no editor-side wrapping). */
  request(command: string): Promise<unknown>;
  restart(): Promise<void>;
}

/**
 * Flips `codedraft.completion.enabled` where it is set (workspace folder, workspace or user
 * settings); the change reaches the server as `workspace/didChangeConfiguration`.
 */
export async function toggleCompletions(): Promise<boolean> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const enabled = !readServerSettings(config).completion.enabled;
  const inspected = config.inspect<boolean>('completion.enabled');
  const target =
    inspected?.workspaceFolderValue !== undefined
      ? vscode.ConfigurationTarget.WorkspaceFolder
      : inspected?.workspaceValue !== undefined
        ? vscode.ConfigurationTarget.Workspace
        : vscode.ConfigurationTarget.Global;
  await config.update('completion.enabled', enabled, target);
  return enabled;
}

interface DetailItem extends vscode.QuickPickItem {
  run?: () => Thenable<unknown>;
}

/** Shows the backend's state (fresh from the server when it runs) and what can be done about it. */
export async function showStatus(source: StatusSource, server: ServerHandle): Promise<void> {
  let status = source.lastStatus;
  if (server.isRunning) {
    try {
      const fresh = await server.request(ServerCommand.status);
      status = isStatusParams(fresh) ? fresh : status;
    } catch {
      // The last notification is still worth showing.
    }
  }
  const enabled = readServerSettings(vscode.workspace.getConfiguration(SECTION)).completion.enabled;
  const items: DetailItem[] = source.details(status).map((line) => ({ label: line }));
  items.push({ label: '', kind: vscode.QuickPickItemKind.Separator });
  items.push({
    label: enabled ? '$(circle-slash) Disable completions' : '$(sparkle) Enable completions',
    run: () => vscode.commands.executeCommand(ExtensionCommand.toggle),
  });
  if (server.isRunning) {
    items.push({ label: '$(refresh) Reindex the workspace', run: () => server.request(ServerCommand.reindex) });
  }
  items.push({ label: '$(debug-restart) Restart the language server', run: () => server.restart() });
  items.push({
    label: '$(settings-gear) Open settings',
    run: () => vscode.commands.executeCommand('workbench.action.openSettings', SECTION),
  });
  const picked = await vscode.window.showQuickPick(items, { title: 'codedraft status' });
  await picked?.run?.();
}
