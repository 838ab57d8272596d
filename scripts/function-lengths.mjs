#!/usr/bin/env node
// The longest functions, methods and classes of the TypeScript sources: a map of where a unit does too much.
// Usage: node scripts/function-lengths.mjs [--most N] [--classes] [folders…]   (default: extension webview)
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import ts from 'typescript';

const { values, positionals } = parseArgs({
  options: { most: { type: 'string', default: '15' }, classes: { type: 'boolean', default: false } },
  allowPositionals: true,
});
const roots = positionals.length ? positionals : ['extension', 'webview'];

function* files(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(p);
    else if (/\.ts$/.test(entry.name) && !/\.d\.ts$/.test(entry.name)) yield p;
  }
}

const units = [];
for (const root of roots)
  for (const file of files(root)) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      const isClass = ts.isClassDeclaration(node);
      const isFunction =
        ts.isFunctionDeclaration(node) ||
        ts.isMethodDeclaration(node) ||
        ts.isConstructorDeclaration(node) ||
        ((ts.isArrowFunction(node) || ts.isFunctionExpression(node)) &&
          ts.isVariableDeclaration(node.parent));
      if ((isFunction && node.body) || (isClass && values.classes)) {
        const start = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
        const name =
          node.name?.getText() ??
          (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText() : '(anonymous)');
        units.push({
          lines: end - start + 1,
          where: `${file}:${start}`,
          name: `${isClass ? 'class ' : ''}${name}`,
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
units.sort((a, b) => b.lines - a.lines);
for (const u of units.slice(0, Number(values.most)))
  console.log(`${String(u.lines).padStart(5)}  ${u.name}  ${u.where}`);
