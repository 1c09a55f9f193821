/**
 * Builds the language client for `codedraft lsp` over stdio.
 */
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  InlineCompletionRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';

import { type CompletionFeedback, hookProvider } from './completionFeedback';
import { readServerSettings, SECTION } from './configuration';
import { createMiddleware } from './middleware';
import type { ServerCommandLine } from './serverCommand';
import type { ExecuteCommandNext } from './serverCommands';

export const CLIENT_ID = 'codedraft';

export interface ClientParts {
  commandLine: ServerCommandLine;
  log: vscode.LogOutputChannel;
  executeCommand: (command: string, args: unknown[], next: ExecuteCommandNext) => vscode.ProviderResult<unknown>;
  ghostTextOffered?: (uri: string, version: number, position: vscode.Position) => void;
  /** Reports what became of the ghost text to the server. */
  feedback?: CompletionFeedback;
}

function serverSettings() {
  return readServerSettings(vscode.workspace.getConfiguration(SECTION));
}

function activeUri(): string {
  return vscode.window.activeTextEditor?.document.uri.toString() ?? '';
}

/** A client that is not started yet; `codedraft.trace.server` sets its trace level by its id. */
export function createLanguageClient(parts: ClientParts): LanguageClient {
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const serverOptions: ServerOptions = {
    command: parts.commandLine.command,
    args: parts.commandLine.args,
    // No `transport`: TransportKind.stdio would append `--stdio` to the command line, which
    // `codedraft lsp` does not take; without it the client still talks over stdin and stdout.
    options: cwd === undefined ? undefined : { cwd },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    initializationOptions: serverSettings(),
    synchronize: { configurationSection: SECTION },
    outputChannel: parts.log,
    middleware: createMiddleware({
      serverSettings,
      notifyConfiguration: async (settings) => {
        await client.sendNotification(DidChangeConfigurationNotification.type, { settings });
      },
      executeCommand: parts.executeCommand,
      ghostTextOffered: parts.ghostTextOffered,
      completionsOffered: (document, items) => {
        const feedback = parts.feedback;
        if (feedback !== undefined) {
          hookProvider(client.getFeature(InlineCompletionRequest.method)?.getProvider(document), feedback, activeUri);
          feedback.offered(document.uri.toString(), items);
        }
      },
      completionAccepted: (args) => parts.feedback?.accepted(args),
    }),
  };
  // The middleware above runs only once the client exists.
  const client = new LanguageClient(CLIENT_ID, 'codedraft language server', serverOptions, clientOptions);
  return client;
}
