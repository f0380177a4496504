/**
 * "Control Room: New Manuscript": asks for a new or empty folder, makes a
 * manuscript there with `control-room new` (the program this extension
 * carries, or the one the settings or PATH give), and opens it. "Import a
 * Novel…": asks for the book's file, makes a manuscript of it beside it
 * with `control-room import`, and opens that.
 */

import { execFile } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { carriedServer, findServer } from './server';

export const NEW_MANUSCRIPT = 'control-room.newManuscript';
export const IMPORT_NOVEL = 'control-room.importNovel';

/** What the command may be given (by other extensions, or tests). */
export interface NewManuscriptArgument {
  /** The folder to make it in, instead of asking. */
  folder?: string;
  /** Open the folder once made (default true). */
  open?: boolean;
}

/** Runs `program ...args`: what it printed, or a rejection with what it said went wrong. */
export function runProgram(program: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(program, args, { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
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
  return make(extensionPath, output, 'New Manuscript', ['new', folder], folder, argument?.open);
}

/** What Import a Novel may be given (by other extensions, or tests). */
export interface ImportArgument {
  /** The book's file, instead of asking. */
  source?: string;
  /** The folder to make the manuscript in (default: beside the book, named after it). */
  into?: string;
  /** Open the folder once made (default true). */
  open?: boolean;
}

/**
 * The file kinds `control-room import` reads: a Scrivener project is its
 * `.scriv` package (macOS) or the `.scrivx` binder inside it.
 */
const BOOK_FILES = { Books: ['md', 'markdown', 'txt', 'docx', 'odt', 'epub', 'rtf', 'scriv', 'scrivx'] };

/** The command: the folder made, or undefined when the writer stopped or it failed (after saying why). */
export async function importNovel(
  extensionPath: string,
  output: vscode.OutputChannel,
  argument?: ImportArgument,
): Promise<string | undefined> {
  let source = argument?.source;
  if (source === undefined) {
    const picked = await vscode.window.showOpenDialog({
      canSelectFiles: true,
      canSelectFolders: false,
      canSelectMany: false,
      filters: BOOK_FILES,
      openLabel: 'Import This Book',
      title: 'Import a Novel: a Markdown, text, Word, OpenDocument, EPUB or RTF file, or a Scrivener project (its .scrivx)',
    });
    source = picked?.[0]?.fsPath;
    if (source === undefined) {
      return undefined;
    }
  }
  // A Scrivener binder names its project: the manuscript goes beside the
  // `.scriv` folder, not inside it.
  const book = path.extname(source).toLowerCase() === '.scrivx' ? path.dirname(source) : source;
  const into = argument?.into ?? path.join(path.dirname(book), path.parse(book).name);
  return make(extensionPath, output, 'Import a Novel', ['import', source, '--into', into], into, argument?.open);
}

/** Runs the program for `title`'s command, says why when it fails, and opens `folder` when asked. */
async function make(
  extensionPath: string,
  output: vscode.OutputChannel,
  title: string,
  args: string[],
  folder: string,
  open: boolean | undefined,
): Promise<string | undefined> {
  try {
    const configured = vscode.workspace.getConfiguration('controlRoom').get<string>('server.path');
    const program = await findServer(configured, os.homedir(), carriedServer(extensionPath));
    output.appendLine(await runProgram(program, args));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    output.appendLine(message);
    void vscode.window.showErrorMessage(`${title}: ${message}`);
    return undefined;
  }
  if (open !== false) {
    await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(folder));
  }
  return folder;
}
