/**
 * Which workspace folders hold a manuscript: a folder with `control-room.toml`,
 * or with both `Story/` and `Compendium/` (the default layout).
 */

import * as vscode from 'vscode';

/** The settings file that marks a manuscript whatever its layout. */
export const CONFIG_FILE = 'control-room.toml';

async function stat(uri: vscode.Uri): Promise<vscode.FileStat | undefined> {
  try {
    return await vscode.workspace.fs.stat(uri);
  } catch {
    return undefined;
  }
}

async function isFile(uri: vscode.Uri): Promise<boolean> {
  const found = await stat(uri);
  return found !== undefined && (found.type & vscode.FileType.File) !== 0;
}

async function isDirectory(uri: vscode.Uri): Promise<boolean> {
  const found = await stat(uri);
  return found !== undefined && (found.type & vscode.FileType.Directory) !== 0;
}

/** Whether `folder` is the root of a manuscript. */
export async function isManuscript(folder: vscode.WorkspaceFolder): Promise<boolean> {
  if (folder.uri.scheme !== 'file') {
    // The server reads the manuscript from disk.
    return false;
  }
  if (await isFile(vscode.Uri.joinPath(folder.uri, CONFIG_FILE))) {
    return true;
  }
  const [story, compendium] = await Promise.all([
    isDirectory(vscode.Uri.joinPath(folder.uri, 'Story')),
    isDirectory(vscode.Uri.joinPath(folder.uri, 'Compendium')),
  ]);
  return story && compendium;
}

/** The workspace folders that are manuscripts, in the window's order. */
export async function manuscriptFolders(): Promise<vscode.WorkspaceFolder[]> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const flags = await Promise.all(folders.map(isManuscript));
  return folders.filter((_, index) => flags[index]);
}
