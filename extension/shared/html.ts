/**
 * The HTML document around every page the product shows (the webviews and the standalone report): a strict
 * Content-Security-Policy first, then the caller's head and body. The title is untrusted text (a trace's name).
 */
import { htmlText, visibleText } from './text';

export interface HtmlDocument {
  /** The Content-Security-Policy directives, joined with "; ". */
  csp: string[];
  title: string;
  head?: string[];
  body: string[];
}

export function htmlDocument(page: HtmlDocument): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${page.csp.join('; ')}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    ...(page.head ?? []),
    `<title>${htmlText(visibleText(page.title))}</title>`,
    '</head>',
    '<body>',
    ...page.body,
    '</body>',
    '</html>',
  ].join('\n');
}
