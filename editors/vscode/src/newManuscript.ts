/**
 * "Control Room: New Manuscript": asks for a new or empty folder, makes a
 * manuscript there with `control-room new` (the program this extension
 * carries, or the one the settings or PATH give), and opens it.
 */

import { execFile } from 'node:child_process';
import * as os from 'node:os';

import * as vscode from 'vscode';

import { carriedServer, findServer } from './server';

export const NEW_MANUSCRIPT = 'control-room.newManuscript';

/** What the command may be given (by other extensions, or tests). */
export interface NewManuscriptArgument {
  /** The folder to make it in, instead of asking. */
  folder?: string;
  /** Open the folder once made (default true). */
  open?: boolean;
}

/** Runs `program new folder`: what it printed, or a rejection with what it said went wrong. */
export function makeManuscript(program: string, folder: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(program, ['new', folder], { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error !== null) {
        const said = stderr.trim().replace(/^Error:\s*/, '');
        reject(new Error(said !== '' ? said : error.message));
        return;
      }
      resolve(stdout);
    });
  });
}

/** The command: the folder made, or undefined when the writer stopped or it failed (after saying why). */
export async function newManuscript(
  extensionPath: string,
  output: vscode.OutputChannel,
  argument?: NewManuscriptArgument,
): Promise<string | undefined> {
  let folder = argument?.folder;
  if (folder === undefined) {
    const picked = await vscode.window.showOpenDialog({
      canSelectFiles: false,
      canSelectFolders: true,
      canSelectMany: false,
      openLabel: 'Make the Manuscript Here',
      title: 'New Manuscript: choose a new or empty folder',
    });
    folder = picked?.[0]?.fsPath;
    if (folder === undefined) {
      return undefined;
    }
  }
  try {
    const configured = vscode.workspace.getConfiguration('controlRoom').get<string>('server.path');
    const program = await findServer(configured, os.homedir(), carriedServer(extensionPath));
    output.appendLine(await makeManuscript(program, folder));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    output.appendLine(message);
    void vscode.window.showErrorMessage(`New Manuscript: ${message}`);
    return undefined;
  }
  if (argument?.open !== false) {
    await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(folder));
  }
  return folder;
}
