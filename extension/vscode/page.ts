/**
 * The page every webview of the extension loads (timeline, bring-up view): its bundle's script and style from
 * dist/, under a Content-Security-Policy that runs only that script (by a fresh nonce) and loads nothing from
 * elsewhere.
 */
import type * as vscode from 'vscode';
import { htmlDocument } from '../shared/html';
import { htmlText } from '../shared/text';
import { webviewNonce } from './nonce';

export interface WebviewPage {
  script: vscode.Uri;
  style: vscode.Uri;
  title: string;
  /** The id of an empty element the script renders into, for a bundle that expects one. */
  rootId?: string;
}

export function webviewPageHtml(webview: vscode.Webview, page: WebviewPage): string {
  const nonce = webviewNonce();
  return htmlDocument({
    csp: [
      "default-src 'none'",
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ],
    title: page.title,
    head: [`<link rel="stylesheet" href="${webview.asWebviewUri(page.style)}">`],
    body: [
      ...(page.rootId ? [`<div id="${htmlText(page.rootId)}"></div>`] : []),
      `<script nonce="${nonce}" src="${webview.asWebviewUri(page.script)}"></script>`,
    ],
  });
}
