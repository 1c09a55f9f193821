/**
 * The controller's view of VS Code (`NextEditEditor`): documents, the cursor, edits, context keys,
 * the language client, and the decorations that draw a predicted edit (removed text struck
 * through, new text beside it, the jump hint at the end of the cursor's line).
 */
import * as vscode from 'vscode';

import type { NextEditDisplay, NextEditEditor, PendingRequest } from './nextEditHost';
import { previewOf } from './nextEditLayout';
import {
  DID_SHOW_INLINE_EDIT_NOTIFICATION,
  type DidShowInlineEditParams,
  type InlineEdit,
  type InlineEditParams,
  inlineEditsOf,
  INLINE_EDIT_REQUEST,
} from './nextEditProtocol';
import { EXECUTE_COMMAND_REQUEST, type WirePosition, type WireRange } from './protocol';

/** Documents the language client synchronises (its document selector). */
const SYNCHRONISED_SCHEMES = ['file', 'untitled'];

/** The part of the language client this module uses. */
export interface NextEditClient {
  sendRequest(method: string, params: unknown, token?: vscode.CancellationToken): Promise<unknown>;
  sendNotification(method: string, params: unknown): Promise<void>;
}

const toPosition = (position: WirePosition): vscode.Position => new vscode.Position(position.line, position.character);
const toRange = (range: WireRange): vscode.Range => new vscode.Range(toPosition(range.start), toPosition(range.end));
/** The server may spell a URI differently (percent-encoding); VS Code's spelling is the one compared. */
const canonical = (uri: string): string => vscode.Uri.parse(uri).toString();

export class VscodeNextEditEditor implements NextEditEditor, vscode.Disposable {
  private readonly deleted = vscode.window.createTextEditorDecorationType({
    textDecoration: 'line-through',
    backgroundColor: new vscode.ThemeColor('diffEditor.removedTextBackground'),
  });
  private readonly inserted = vscode.window.createTextEditorDecorationType({
    after: {
      backgroundColor: new vscode.ThemeColor('diffEditor.insertedTextBackground'),
      border: '1px solid',
      borderColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
      margin: '0 0 0 1px',
    },
  });
  private readonly hint = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor('editorCodeLens.foreground'), fontStyle: 'italic', margin: '0 0 0 2em' },
  });
  private display: NextEditDisplay | undefined;

  constructor(
    private readonly client: () => NextEditClient | undefined,
    readonly enabled: () => boolean,
  ) {}

  cursor(): { uri: string; version: number; position: WirePosition } | undefined {
    const editor = vscode.window.activeTextEditor;
    if (editor === undefined || !SYNCHRONISED_SCHEMES.includes(editor.document.uri.scheme)) {
      return undefined;
    }
    const { line, character } = editor.selection.active;
    return { uri: editor.document.uri.toString(), version: editor.document.version, position: { line, character } };
  }

  versionOf(uri: string): number | undefined {
    return this.document(uri)?.version;
  }

  textIn(uri: string, edit: InlineEdit): string | undefined {
    return this.document(uri)?.getText(toRange(edit.range));
  }

  async apply(edit: InlineEdit): Promise<number | undefined> {
    const uri = vscode.Uri.parse(edit.textDocument.uri);
    const change = new vscode.WorkspaceEdit();
    change.replace(uri, toRange(edit.range), edit.text);
    const applied = await vscode.workspace.applyEdit(change);
    return applied ? this.versionOf(edit.textDocument.uri) : undefined;
  }

  async moveCursor(uri: string, position: WirePosition): Promise<void> {
    const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    const editor = await vscode.window.showTextDocument(document, { preview: false });
    const place = toPosition(position);
    editor.selection = new vscode.Selection(place, place);
    editor.revealRange(new vscode.Range(place, place), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  draw(display: NextEditDisplay | undefined): void {
    this.display = display;
    this.redraw();
  }

  /** Draws the last display again, in the editors visible now. */
  redraw(): void {
    const display = this.display;
    for (const editor of vscode.window.visibleTextEditors) {
      const uri = editor.document.uri.toString();
      const parts = display?.uri === uri ? display.parts : undefined;
      editor.setDecorations(this.deleted, parts?.deleted === undefined ? [] : [toRange(parts.deleted)]);
      const insertAt = parts === undefined ? undefined : toPosition(parts.insertAt);
      editor.setDecorations(
        this.inserted,
        insertAt === undefined || parts === undefined || parts.inserted.length === 0
          ? []
          : [
              {
                range: new vscode.Range(insertAt, insertAt),
                hoverMessage: new vscode.MarkdownString().appendCodeblock(parts.inserted, editor.document.languageId),
                renderOptions: { after: { contentText: previewOf(parts.inserted) } },
              },
            ],
      );
      const hint = display?.hint?.uri === uri ? display.hint : undefined;
      const lineEnd = hint === undefined ? undefined : editor.document.lineAt(Math.min(hint.line, editor.document.lineCount - 1)).range.end;
      editor.setDecorations(
        this.hint,
        hint === undefined || lineEnd === undefined
          ? []
          : [{ range: new vscode.Range(lineEnd, lineEnd), renderOptions: { after: { contentText: hint.text } } }],
      );
    }
  }

  setContext(key: string, value: boolean): void {
    void vscode.commands.executeCommand('setContext', key, value);
  }

  request(params: InlineEditParams): PendingRequest {
    const client = this.client();
    if (client === undefined) {
      return { result: Promise.reject(new Error('the language server is not running')), cancel: () => undefined };
    }
    const source = new vscode.CancellationTokenSource();
    const result = client.sendRequest(INLINE_EDIT_REQUEST, params, source.token).then((answer) => ({
      edits: inlineEditsOf(answer).map((edit) => ({
        ...edit,
        textDocument: { uri: canonical(edit.textDocument.uri), version: edit.textDocument.version },
      })),
    }));
    void result.finally(() => source.dispose()).catch(() => undefined);
    return { result, cancel: () => source.cancel() };
  }

  notifyShown(params: DidShowInlineEditParams): void {
    void this.client()?.sendNotification(DID_SHOW_INLINE_EDIT_NOTIFICATION, params).catch(() => undefined);
  }

  executeCommand(command: string, args: unknown[]): Promise<unknown> {
    const client = this.client();
    return client === undefined
      ? Promise.reject(new Error('the language server is not running'))
      : client.sendRequest(EXECUTE_COMMAND_REQUEST, { command, arguments: args });
  }

  dispose(): void {
    this.deleted.dispose();
    this.inserted.dispose();
    this.hint.dispose();
  }

  private document(uri: string): vscode.TextDocument | undefined {
    return vscode.workspace.textDocuments.find((document) => document.uri.toString() === uri);
  }
}
