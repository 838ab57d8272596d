/** activate(): wiring only. Each feature registers itself from extension/vscode/. */
import type * as vscode from 'vscode';
import { registerTraceCommands } from './vscode/traceCommands';
import { registerEditorAnnotations } from './vscode/editorAnnotations';
import { registerTimeline } from './vscode/timeline';
import { registerBringup } from './vscode/bringup';
import { registerCapture } from './vscode/capture';

export function activate(context: vscode.ExtensionContext): void {
  registerTraceCommands(context);
  registerEditorAnnotations(context);
  registerTimeline(context);
  registerBringup(context);
  registerCapture(context);
}

export function deactivate(): void {
  // Every registration is owned by context.subscriptions and released by VS Code.
}
