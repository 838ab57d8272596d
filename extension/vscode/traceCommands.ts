import type * as vscode from 'vscode';

export function registerTraceCommands(_context: vscode.ExtensionContext): void {}
