/**
 * The language server's lifecycle in the editor: start (after checking the program exists),
 * restart when its command changes, stop on deactivate; and the wiring of its notifications.
 */
import * as vscode from 'vscode';
import { type LanguageClient, State } from 'vscode-languageclient/node';

import { createLanguageClient } from './client';
import { CompletionFeedback } from './completionFeedback';
import { readClientSettings, SECTION } from './configuration';
import { CursorNotifier } from './cursorNotifications';
import { isStatusParams, isStreamTextParams, STATUS_NOTIFICATION, STREAM_TEXT_NOTIFICATION } from './protocol';
import { describeCommand, findExecutable, resolveServerCommand } from './serverCommand';
import { ServerCommands } from './serverCommands';
import { reportStartFailure } from './startFailure';
import type { StatusBar } from './statusBar';
import type { StreamTexts } from './streams';

/** Context key that enables the server's commands in menus and the palette. */
const RUNNING_CONTEXT = 'codedraft.serverRunning';

export class CodedraftServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly log: vscode.LogOutputChannel;
  private readonly cursor = new CursorNotifier((method, params) => {
    if (this.isRunning) {
      void this.client?.sendNotification(method, params);
    }
  });
  private readonly cursorEvents: vscode.Disposable[];
  /** What became of the ghost text, told to the running server. */
  readonly completionFeedback = new CompletionFeedback((method, params) => {
    if (this.isRunning) {
      void this.client?.sendNotification(method, params);
    }
  });

  constructor(
    private readonly statusBar: StatusBar,
    private readonly streams: StreamTexts,
    private readonly generated: vscode.OutputChannel,
    private readonly ghostTextOffered?: (uri: string, version: number, position: vscode.Position) => void,
  ) {
    this.log = vscode.window.createOutputChannel('codedraft language server', { log: true });
    this.cursorEvents = [
      vscode.window.onDidChangeTextEditorSelection((event) => {
        const document = event.textEditor.document;
        this.cursor.selectionChanged(document.uri.toString(), document.uri.scheme, event.selections[0].active);
      }),
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        this.completionFeedback.editorChanged(editor?.document.uri.toString());
        if (editor !== undefined) {
          const document = editor.document;
          this.cursor.editorActivated(document.uri.toString(), document.uri.scheme, editor.selection.active);
        }
      }),
    ];
  }

  get languageClient(): LanguageClient | undefined {
    return this.client;
  }

  get isRunning(): boolean {
    return this.client?.state === State.Running;
  }

  /**
   * Starts the server; resolves once it runs or could not start. A failure is reported with a
   * message that is not waited on, so nothing hangs on the user reading it.
   */
  async start(): Promise<void> {
    const settings = readClientSettings(vscode.workspace.getConfiguration(SECTION));
    const commandLine = resolveServerCommand(settings);
    if (commandLine === undefined) {
      this.statusBar.setPhase('stopped');
      void reportStartFailure('codedraft.server.command is empty', undefined);
      return;
    }
    if (findExecutable(commandLine.command, process.env, vscode.workspace.workspaceFolders?.[0]?.uri.fsPath) === undefined) {
      this.statusBar.setPhase('stopped');
      void reportStartFailure(`"${commandLine.command}" was not found`, undefined);
      return;
    }
    const commands = new ServerCommands(
      // Server commands are registered by the client, so they only run once it exists.
      { sendRequest: (method, params, token) => client.sendRequest(method, params, token) },
      this.streams,
      this.generated,
    );
    const client = createLanguageClient({
      commandLine,
      log: this.log,
      executeCommand: commands.executeCommand,
      ghostTextOffered: this.ghostTextOffered,
      feedback: this.completionFeedback,
    });
    this.completionFeedback.forget();
    this.client = client;
    client.onDidChangeState((event) => {
      if (client !== this.client) {
        return; // a client being replaced by a restart
      }
      const phase = event.newState === State.Running ? 'running' : event.newState === State.Starting ? 'starting' : 'stopped';
      this.statusBar.setPhase(phase);
      void vscode.commands.executeCommand('setContext', RUNNING_CONTEXT, phase === 'running');
    });
    client.onNotification(STATUS_NOTIFICATION, (params: unknown) => {
      if (isStatusParams(params)) {
        this.statusBar.setStatus(params);
      }
    });
    client.onNotification(STREAM_TEXT_NOTIFICATION, (params: unknown) => {
      if (isStreamTextParams(params)) {
        this.streams.accept(params);
      }
    });
    this.log.appendLine(`Starting: ${describeCommand(commandLine)}`);
    try {
      await client.start();
      const editor = vscode.window.activeTextEditor;
      if (editor !== undefined && client === this.client) {
        this.cursor.forget();
        const document = editor.document;
        this.cursor.editorActivated(document.uri.toString(), document.uri.scheme, editor.selection.active);
      }
    } catch (error) {
      if (client === this.client) {
        this.statusBar.setPhase('stopped');
        void reportStartFailure(error instanceof Error ? error.message : String(error), this.log);
      }
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined && client.needsStop()) {
      await client.stop();
    }
    this.statusBar.setPhase('stopped');
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  dispose(): void {
    this.cursor.cancel();
    for (const subscription of this.cursorEvents) {
      subscription.dispose();
    }
    void this.stop();
    this.log.dispose();
  }
}
