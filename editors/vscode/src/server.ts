/**
 * Finding the `control-room` program: the `controlRoom.server.path` setting,
 * else the first `control-room` on `PATH`.
 */

import { constants as fsConstants, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The program's name, without the `.exe` Windows adds. */
export const SERVER_NAME = 'control-room';

/** Why the program could not be found, worded for the writer. */
export class ServerNotFound extends Error {
  constructor(
    message: string,
    /** Whether the setting named a path (as opposed to searching `PATH`). */
    readonly fromSetting: boolean,
  ) {
    super(message);
    this.name = 'ServerNotFound';
  }
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) {
      return false;
    }
    await fs.access(file, process.platform === 'win32' ? fsConstants.F_OK : fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `~` and `${workspaceFolder}` expanded; relative paths read from `folder`. */
export function expandPath(configured: string, folder: string): string {
  let expanded = configured.trim().replace(/\$\{workspaceFolder\}/g, folder);
  if (expanded === '~' || expanded.startsWith('~/') || expanded.startsWith('~\\')) {
    expanded = path.join(os.homedir(), expanded.slice(1));
  }
  return path.resolve(folder, expanded);
}

/** The names the program may have on this system (`control-room.exe` on Windows). */
function candidateNames(): string[] {
  if (process.platform !== 'win32') {
    return [SERVER_NAME];
  }
  const extensions = (process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').filter(Boolean);
  return extensions.map((extension) => SERVER_NAME + extension.toLowerCase());
}

/** The first `control-room` on `searchPath`, if any. */
export async function searchPath(searchPath: string | undefined = process.env.PATH): Promise<string | undefined> {
  const directories = (searchPath ?? '').split(path.delimiter).filter((entry) => entry !== '');
  for (const directory of directories) {
    for (const name of candidateNames()) {
      const candidate = path.join(directory, name);
      if (await isExecutable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/**
 * The absolute path of the server program for the manuscript in `folder`.
 * Throws {@link ServerNotFound} with a message saying how to fix it.
 */
export async function findServer(configured: string | undefined, folder: string): Promise<string> {
  if (configured !== undefined && configured.trim() !== '') {
    const resolved = expandPath(configured, folder);
    if (await isExecutable(resolved)) {
      return resolved;
    }
    throw new ServerNotFound(
      `The setting controlRoom.server.path is "${configured}", but there is no program at ${resolved}. ` +
        'Point it at the control-room program (for example target/release/control-room after `cargo build --release`), ' +
        'or clear it to use the control-room on your PATH.',
      true,
    );
  }
  const found = await searchPath();
  if (found !== undefined) {
    return found;
  }
  throw new ServerNotFound(
    'The control-room program was not found on your PATH. Install it with `cargo install --path .` ' +
      'in the control-room source folder, or set controlRoom.server.path to the program ' +
      '(for example target/release/control-room after `cargo build --release`).',
    false,
  );
}
