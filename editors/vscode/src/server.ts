/**
 * Finding the `control-room` program: the `controlRoom.server.path` setting,
 * else the one the extension carries (`server/` in a package made by
 * `scripts/package`), else the first `control-room` on `PATH`; and checking
 * that its version is the extension's.
 */

import { execFile } from 'node:child_process';
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

/**
 * Gives the carried program back its executable bit, which an unpacker may
 * have dropped; whether it is executable now.
 */
async function makeExecutable(file: string): Promise<boolean> {
  if (process.platform === 'win32') {
    return false;
  }
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) {
      return false;
    }
    await fs.chmod(file, stat.mode | 0o111);
    return await isExecutable(file);
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

/** The program a package made by `scripts/package` carries, in the extension's `server/`. */
export function carriedServer(extensionPath: string): string {
  return path.join(extensionPath, 'server', candidateNames()[0] ?? SERVER_NAME);
}

/**
 * The absolute path of the server program for the manuscript in `folder`:
 * the setting's, else the one the extension carries (`carried`), else the
 * first on `PATH`. Throws {@link ServerNotFound} with a message saying how to
 * fix it.
 */
export async function findServer(
  configured: string | undefined,
  folder: string,
  carried?: string,
): Promise<string> {
  if (configured !== undefined && configured.trim() !== '') {
    const resolved = expandPath(configured, folder);
    if (await isExecutable(resolved)) {
      return resolved;
    }
    throw new ServerNotFound(
      `The setting controlRoom.server.path is "${configured}", but there is no program at ${resolved}. ` +
        'Point it at the control-room program, or clear it to use the one this extension carries ' +
        '(or the control-room on your PATH).',
      true,
    );
  }
  if (carried !== undefined && (await isExecutable(carried) || (await makeExecutable(carried)))) {
    return carried;
  }
  const found = await searchPath();
  if (found !== undefined) {
    return found;
  }
  throw new ServerNotFound(
    'This Control Room extension carries no control-room program for this platform, and none is on your PATH. ' +
      'Install the package made for your platform (control-room-<version>-<platform>.vsix), ' +
      'or install the program from its archive (./install.sh) and make sure it is on your PATH, ' +
      'or set controlRoom.server.path to it.',
    false,
  );
}

/** What `program --version` says ("control-room 0.1.0"), or why it could not say. */
export function serverVersion(program: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(program, ['--version'], { timeout: 10_000 }, (error, stdout) => {
      if (error !== null) {
        reject(new Error(`${program} --version failed: ${error.message}`));
        return;
      }
      resolve(stdout.trim());
    });
  });
}

/**
 * The writer's message when the program's `--version` answer (`reported`)
 * is not the extension's version; undefined when they agree.
 */
export function versionMismatch(program: string, reported: string, extensionVersion: string): string | undefined {
  const version = /^control-room\s+(\S+)/.exec(reported)?.[1];
  if (version === extensionVersion) {
    return undefined;
  }
  const found = version === undefined ? `answers "${reported}"` : `is version ${version}`;
  return (
    `The control-room program at ${program} ${found}, but this extension is version ${extensionVersion}: ` +
    'some features may fail. Install the matching program (the archive or package of the same version), ' +
    'or clear controlRoom.server.path to use the program this extension carries.'
  );
}
