/**
 * Entry point: wires the parts together on activation and stops the server on deactivation.
 */
import * as vscode from 'vscode';

import { CodedraftServer } from './codedraftServer';
import { readServerSettings, SECTION } from './configuration';
import { showStatus, toggleCompletions } from './extensionCommands';
import { NextEdits } from './nextEditFeature';
import { EXECUTE_COMMAND_REQUEST, ExtensionCommand } from './protocol';
import { StatusBar } from './statusBar';
import { StreamTexts } from './streams';

let server: CodedraftServer | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const statusBar = new StatusBar();
  const generated = vscode.window.createOutputChannel('codedraft');
  // Next-edit suggestions ask through the server's client; the server tells them about ghost text.
  const nextEdits = new NextEdits(
    () => (server?.isRunning === true ? server.languageClient : undefined),
    () => server?.completionFeedback.dismissed(),
  );
  server = new CodedraftServer(statusBar, new StreamTexts(), generated, (uri, version, position) =>
    nextEdits.ghostTextOffered(uri, version, position),
  );
  const running = server;
  statusBar.setCompletionEnabled(readServerSettings(vscode.workspace.getConfiguration(SECTION)).completion.enabled);
  context.subscriptions.push(
    statusBar,
    generated,
    running,
    nextEdits,
    vscode.commands.registerCommand(ExtensionCommand.toggle, toggleCompletions),
    vscode.commands.registerCommand(ExtensionCommand.showStatus, () =>
      showStatus(statusBar, {
        get isRunning() {
          return running.isRunning;
        },
        request: (command) =>
          running.languageClient?.sendRequest(EXECUTE_COMMAND_REQUEST, { command, arguments: [] }) ??
          Promise.reject(new Error('the language server is not running')),
        restart: () => running.restart(),
      }),
    ),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(`${SECTION}.completion.enabled`)) {
        statusBar.setCompletionEnabled(readServerSettings(vscode.workspace.getConfiguration(SECTION)).completion.enabled);
      }
      if (event.affectsConfiguration(`${SECTION}.server`)) {
        void running.restart();
      }
    }),
  );
  // Activation does not wait for the server: it may take a while to start, or fail.
  void running.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
