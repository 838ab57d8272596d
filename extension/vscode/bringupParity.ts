/**
 * "FlagOS: Run Parity Workload": writes the parity workload (torch_fl profiler.md §5) for the device the user
 * picks and profiles it with Profile Current File (extension/vscode/capture.ts: interpreter, Workspace Trust,
 * progress, cancel, session folders). The finished capture reaches the bring-up view through onProfileLoaded.
 */
import * as vscode from 'vscode';
import path from 'node:path';
import { PARITY_SCRIPT_NAME, validDevice, writeParityWorkload } from '../bringup/parity';
import type { SessionRecord } from '../capture/session';
import { profileCurrentFile } from './capture';

async function pickDevice(): Promise<string | undefined> {
  const items: (vscode.QuickPickItem & { device?: string })[] = [
    { label: 'cuda', description: 'NVIDIA through stock torch (CUPTI)', device: 'cuda' },
    {
      label: 'PrivateUse1 backend…',
      description: "torch_fl's device (flagos) or another PrivateUse1 backend by name",
    },
    {
      label: 'cpu',
      description: 'no device activity: checks the CPU side and the pipeline only',
      device: 'cpu',
    },
  ];
  const choice = await vscode.window.showQuickPick(items, {
    title: 'FlagOS: device for the parity workload',
    ignoreFocusOut: true,
  });
  if (!choice) return undefined;
  if (choice.device) return choice.device;
  return vscode.window.showInputBox({
    title: 'PrivateUse1 backend name (as torch._C._get_privateuse1_backend_name() reports it)',
    value: 'flagos',
    ignoreFocusOut: true,
    validateInput: (v) => (validDevice(v.trim()) ? undefined : 'a device name such as flagos or flagos:0'),
  });
}

/** A session folder whose script is the parity workload (session.json names the script). */
export function isParitySession(sessionDir: string, record: SessionRecord | undefined): boolean {
  if (record) return record.script !== undefined && path.basename(record.script) === PARITY_SCRIPT_NAME;
  // No readable session.json: the folder is named after its script (capture/sessions.ts).
  return path.basename(sessionDir).includes(PARITY_SCRIPT_NAME.replace(/\.py$/, ''));
}

export function registerParityWorkload(context: vscode.ExtensionContext): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('flagos.runParityWorkload', async (deviceArg?: unknown) => {
      const device =
        typeof deviceArg === 'string' && validDevice(deviceArg) ? deviceArg : (await pickDevice())?.trim();
      if (!device) return;
      // The device is baked into the script's default, so it runs with no arguments like any other file.
      const script = writeParityWorkload(path.join(context.globalStorageUri.fsPath, 'parity'), device);
      await profileCurrentFile(context, vscode.Uri.file(script), false);
    }),
  );
}
