/** activate(): wiring only. Each feature registers itself from extension/vscode/. */
import type * as vscode from 'vscode';
import { registerTraceCommands } from './vscode/traceCommands';

export function activate(context: vscode.ExtensionContext): void {
  registerTraceCommands(context);
}

export function deactivate(): void {
  // Every registration is owned by context.subscriptions and released by VS Code.
}
