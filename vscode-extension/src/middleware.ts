/**
 * The language client's middleware: ghost text only where and when it is wanted (with the editor's
 * cancellation token passed on to the request, and next-edit suggestions and the completion feedback
 * told what was offered and accepted), no completion-list items in VS Code, settings
 * served in the server's shape, and the server's long commands wrapped for the editor.
 */
import type * as vscode from 'vscode';
import type { Middleware, ResponseError } from 'vscode-languageclient/node';

import { completionWanted, configurationItem, SECTION, type ServerSettings } from './configuration';
import { ServerCommand } from './protocol';
import type { ExecuteCommandNext } from './serverCommands';

export interface MiddlewareDependencies {
  /** Reads the current settings; called per request, so a change applies at once. */
  serverSettings: () => ServerSettings;
  /** Sends `workspace/didChangeConfiguration`. */
  notifyConfiguration: (settings: { [SECTION]: ServerSettings }) => Promise<void>;
  executeCommand: (command: string, args: unknown[], next: ExecuteCommandNext) => vscode.ProviderResult<unknown>;
  /** Told where ghost text was offered, so that next-edit suggestions give way to it. */
  ghostTextOffered?: (uri: string, version: number, position: vscode.Position) => void;
  /** Told every answer of the inline completion provider (items may be empty), for the feedback. */
  completionsOffered?: (document: vscode.TextDocument, items: readonly unknown[]) => void;
  /** Told when VS Code runs an item's accept command (before it goes to the server). */
  completionAccepted?: (args: unknown[]) => void;
}

function isOurs(section: string | undefined): boolean {
  return section === SECTION || (section?.startsWith(`${SECTION}.`) ?? false);
}

export function createMiddleware(deps: MiddlewareDependencies): Middleware {
  return {
    provideInlineCompletionItems: async (document, position, context, token, next) => {
      if (!completionWanted(deps.serverSettings().completion, document.languageId)) {
        return undefined;
      }
      const version = document.version;
      const result = await next(document, position, context, token);
      const items = Array.isArray(result) ? result : result?.items;
      if (items !== undefined && items.length > 0) {
        deps.ghostTextOffered?.(document.uri.toString(), version, position);
      }
      if (!token.isCancellationRequested) {
        deps.completionsOffered?.(document, items ?? []);
      }
      return result;
    },
    // The server also answers textDocument/completion for editors without ghost text; in VS Code
    // the same suggestion would show twice, so only the inline path is used.
    provideCompletionItem: () => undefined,
    executeCommand: (command, args, next) => {
      if (command === ServerCommand.acceptCompletion) {
        deps.completionAccepted?.(args);
      }
      return deps.executeCommand(command, args, next);
    },
    workspace: {
      configuration: async (params, token, next): Promise<unknown[] | ResponseError> => {
        const settings = deps.serverSettings();
        if (params.items.every((item) => isOurs(item.section))) {
          return params.items.map((item) => configurationItem(settings, item.section));
        }
        const answered = await next(params, token);
        if (!Array.isArray(answered)) {
          return answered;
        }
        const theirs: unknown[] = answered;
        return params.items.map((item, index) =>
          isOurs(item.section) ? configurationItem(settings, item.section) : theirs[index],
        );
      },
      didChangeConfiguration: async () => {
        await deps.notifyConfiguration({ [SECTION]: deps.serverSettings() });
      },
    },
  };
}
