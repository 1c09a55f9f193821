/**
 * Runs the server's long commands from the editor: the language client registers every command the
 * server lists, and this middleware fills in their argument (selection, instruction, problems at
 * the cursor) and shows the text they generate while they run.
 */
import * as vscode from 'vscode';

import { fixArguments, givenRefactorArgument, refactorArguments, refactorTarget } from './commandArguments';
import {
  EXECUTE_COMMAND_REQUEST,
  isFinalResult,
  isRangeTarget,
  notAppliedReason,
  ServerCommand,
  streamIdOf,
} from './protocol';
import { StreamFollower, type StreamTexts } from './streams';

/** The part of the language client used here: a request that carries the cancellation token. */
export interface RequestSender {
  sendRequest(method: string, params: unknown, token?: vscode.CancellationToken): Promise<unknown>;
}

export type ExecuteCommandNext = (command: string, args: unknown[]) => vscode.ProviderResult<unknown>;

const PROGRESS_MESSAGE_LENGTH = 80;

/** The last non-empty line of generated text, shortened to fit a progress notification. */
export function progressMessage(text: string): string {
  const lines = text.split('\n').map((line) => line.trim());
  const last = lines.reverse().find((line) => line.length > 0) ?? '';
  return last.length > PROGRESS_MESSAGE_LENGTH ? `${last.slice(0, PROGRESS_MESSAGE_LENGTH - 1)}…` : last;
}

export class ServerCommands {
  constructor(
    private readonly server: RequestSender,
    private readonly streams: StreamTexts,
    private readonly output: vscode.OutputChannel,
  ) {}

  /** `Middleware.executeCommand`: refactor and fix get their argument and a progress view. */
  readonly executeCommand = async (command: string, args: unknown[], next: ExecuteCommandNext): Promise<unknown> => {
    switch (command) {
      case ServerCommand.refactor:
        return this.refactor(args);
      case ServerCommand.fix:
        return this.fix(args);
      default:
        return next(command, args);
    }
  };

  private async refactor(args: unknown[]): Promise<unknown> {
    const given = givenRefactorArgument(args);
    const editor = vscode.window.activeTextEditor;
    const target = given?.target ?? (editor === undefined ? undefined : refactorTarget(editor));
    if (target === undefined) {
      void vscode.window.showWarningMessage('codedraft: select the code to refactor first.');
      return undefined;
    }
    const instruction =
      given?.instruction ??
      (await vscode.window.showInputBox({
        title: 'Refactor with codedraft',
        prompt: 'How should the selected code change?',
        placeHolder: 'e.g. extract a function, add type hints, use pathlib',
        ignoreFocusOut: true,
      }));
    if (instruction === undefined || instruction.trim().length === 0) {
      return undefined;
    }
    return this.runStreaming('codedraft: refactoring', ServerCommand.refactor, refactorArguments(target, instruction));
  }

  private async fix(args: unknown[]): Promise<unknown> {
    let argument: unknown = args[0];
    if (!isRangeTarget(argument)) {
      const editor = vscode.window.activeTextEditor;
      if (editor === undefined) {
        void vscode.window.showWarningMessage('codedraft: open a file and put the cursor on a problem to fix.');
        return undefined;
      }
      argument = fixArguments(editor, vscode.languages.getDiagnostics(editor.document.uri));
    }
    return this.runStreaming('codedraft: fixing', ServerCommand.fix, argument);
  }

  /**
   * Sends the command with a cancellable progress notification; the generated text goes to the
   * output channel as it arrives and its last line into the notification. Ends when the command
   * has returned a final result, or returned `{id}` and that stream is done, or when the user
   * cancels (which cancels the request).
   */
  private runStreaming(title: string, command: string, argument: unknown): Thenable<unknown> {
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title, cancellable: true },
      async (progress, token) => {
        let shown = '';
        let started = false;
        const begin = (): void => {
          if (!started) {
            started = true;
            this.output.appendLine(`── ${title} ──`);
            this.output.show(true);
          }
        };
        const report = (): void => progress.report({ message: progressMessage(shown) });
        const follower = new StreamFollower(this.streams, {
          append: (delta) => {
            begin();
            shown += delta;
            this.output.append(delta);
            report();
          },
          replace: (text) => {
            if (text === shown) {
              return;
            }
            begin();
            if (shown.length > 0) {
              // Another stream was shown first; the named one starts on a line of its own.
              this.output.appendLine('');
            }
            shown = text;
            this.output.append(text);
            report();
          },
        });
        const cancelled = new Promise<void>((resolve) => token.onCancellationRequested(() => resolve()));
        try {
          const result = await this.server.sendRequest(
            EXECUTE_COMMAND_REQUEST,
            { command, arguments: [argument] },
            token,
          );
          const id = streamIdOf(result);
          if (id !== undefined) {
            follower.bind(id);
          }
          if (!isFinalResult(result)) {
            await Promise.race([follower.untilDone(), cancelled]);
          }
          const reason = notAppliedReason(result);
          if (reason !== undefined && !token.isCancellationRequested) {
            void vscode.window.showInformationMessage(`${title}: no change made (${reason}).`);
          }
          return result;
        } catch (error) {
          if (!token.isCancellationRequested) {
            const message = error instanceof Error ? error.message : String(error);
            void vscode.window.showErrorMessage(`${title} failed: ${message}`);
          }
          return undefined;
        } finally {
          if (started && !shown.endsWith('\n')) {
            this.output.appendLine('');
          }
          follower.dispose();
        }
      },
    );
  }
}
