/**
 * Wires next-edit suggestions into VS Code: the editor events the controller follows, the
 * commands that Tab and Esc run (package.json binds them under the controller's context keys),
 * and the `codedraft.nextEdit.enabled` setting.
 */
import * as vscode from 'vscode';

import { readServerSettings, SECTION } from './configuration';
import { NextEditController } from './nextEditController';
import { type NextEditClient, VscodeNextEditEditor } from './nextEditEditor';
import type { WirePosition } from './protocol';

/** Commands of next-edit suggestions; package.json binds the keys. */
export const NextEditCommand = {
  /** Tab: apply the shown edit, or jump to it. */
  accept: 'codedraft.nextEdit.accept',
  /** Esc: dismiss the shown edit. */
  dismiss: 'codedraft.nextEdit.dismiss',
  /** Esc while ghost text is shown: hide it, and show the edit that waited behind it. */
  hideGhostText: 'codedraft.nextEdit.hideGhostText',
} as const;

const CHANGE_SCHEMES = ['file', 'untitled'];

function nextEditsEnabled(): boolean {
  return readServerSettings(vscode.workspace.getConfiguration(SECTION)).nextEdit.enabled;
}

export class NextEdits implements vscode.Disposable {
  private readonly editor: VscodeNextEditEditor;
  private readonly controller: NextEditController;
  private readonly subscriptions: vscode.Disposable[];

  /**
   * `client` answers the running language client, or undefined while there is none;
   * `ghostTextDismissed` hears of the user's Esc over ghost text.
   */
  constructor(client: () => NextEditClient | undefined, ghostTextDismissed?: () => void) {
    this.editor = new VscodeNextEditEditor(client, nextEditsEnabled);
    this.controller = new NextEditController(this.editor);
    this.subscriptions = [
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.contentChanges.length > 0 && CHANGE_SCHEMES.includes(event.document.uri.scheme)) {
          this.controller.documentChanged(event.document.uri.toString());
        }
      }),
      vscode.window.onDidChangeTextEditorSelection(() => this.controller.cursorMoved()),
      vscode.window.onDidChangeActiveTextEditor(() => this.controller.cursorMoved()),
      vscode.window.onDidChangeVisibleTextEditors(() => this.editor.redraw()),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(`${SECTION}.nextEdit.enabled`) && !nextEditsEnabled()) {
          this.controller.stop();
        }
      }),
      vscode.commands.registerCommand(NextEditCommand.accept, () => this.controller.accept()),
      vscode.commands.registerCommand(NextEditCommand.dismiss, () => this.controller.dismiss()),
      vscode.commands.registerCommand(NextEditCommand.hideGhostText, async () => {
        await vscode.commands.executeCommand('editor.action.inlineSuggest.hide');
        ghostTextDismissed?.();
        this.controller.ghostTextHidden();
      }),
    ];
  }

  /** The inline completion provider returned ghost text for this place. */
  ghostTextOffered(uri: string, version: number, position: WirePosition): void {
    this.controller.ghostTextOffered(uri, version, position);
  }

  dispose(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.controller.dispose();
    this.editor.dispose();
  }
}
