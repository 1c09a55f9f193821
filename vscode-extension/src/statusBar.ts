/**
 * The status bar item: shows what `codedraft/status` last said; a click runs `codedraft.showStatus`.
 */
import * as vscode from 'vscode';

import { ExtensionCommand, type StatusParams } from './protocol';
import { type ClientPhase, presentStatus, statusDetails } from './statusText';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private status: StatusParams | undefined;
  private phase: ClientPhase = 'starting';
  private completionEnabled = true;

  constructor() {
    this.item = vscode.window.createStatusBarItem('codedraft.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'codedraft';
    this.item.command = ExtensionCommand.showStatus;
    this.render();
    this.item.show();
  }

  /** The last status the server sent, for the details view. */
  get lastStatus(): StatusParams | undefined {
    return this.status;
  }

  get text(): string {
    return this.item.text;
  }

  setStatus(status: StatusParams): void {
    this.status = status;
    this.render();
  }

  setPhase(phase: ClientPhase): void {
    this.phase = phase;
    if (phase !== 'running') {
      // A restarted server starts from scratch; its old status no longer holds.
      this.status = undefined;
    }
    this.render();
  }

  setCompletionEnabled(enabled: boolean): void {
    this.completionEnabled = enabled;
    this.render();
  }

  details(status: StatusParams | undefined = this.status): string[] {
    return statusDetails(status, this.phase, this.completionEnabled);
  }

  dispose(): void {
    this.item.dispose();
  }

  private render(): void {
    const presentation = presentStatus(this.status, this.phase, this.completionEnabled);
    this.item.text = presentation.text;
    this.item.tooltip = presentation.tooltip;
    this.item.backgroundColor =
      presentation.severity === 'normal'
        ? undefined
        : new vscode.ThemeColor(
            presentation.severity === 'error' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground',
          );
  }
}
