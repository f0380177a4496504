/**
 * The language client's life: started for the first manuscript folder of the
 * window, with the writer's settings, stopped and started again when the
 * folders or the server's path change.
 */

import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';

import { ActivityTracker } from './activity';
import { manuscriptFolders } from './manuscript';
import { carriedServer, findServer, ServerNotFound, serverVersion, versionMismatch } from './server';
import { serverSettings, type ServerSettings } from './settings';

/** The settings section, and the client's id (it reads `controlRoom.trace.server`). */
export const SECTION = 'controlRoom';

/** A context key, true while the window has a manuscript; it shows the commands. */
const CONTEXT_KEY = 'controlRoom.manuscript';

/** The writer's settings for the server, read for `folder`. */
function currentSettings(folder: vscode.WorkspaceFolder): ServerSettings {
  const config = vscode.workspace.getConfiguration(SECTION, folder.uri);
  return serverSettings((key) => config.get(key));
}

/** A glob matching everything under `folder`, unless its path has glob syntax in it. */
function folderGlob(folder: vscode.WorkspaceFolder, pattern: string): string | undefined {
  const base = folder.uri.fsPath.replace(/\\/g, '/').replace(/\/$/, '');
  return /[[\]{}*?]/.test(base) ? undefined : `${base}/${pattern}`;
}

/** A message for the writer when a server command fails. */
export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserError';
  }
}

export class ControlRoom implements vscode.Disposable {
  /** The runs and conferences in progress. */
  readonly activity = new ActivityTracker();
  private client: LanguageClient | undefined;
  private served: vscode.WorkspaceFolder | undefined;
  /** Why the server is not running, when a manuscript is open but it is not. */
  private problem: string | undefined;
  /** Start and stop in turn, never two at once. */
  private queue: Promise<void> = Promise.resolve();

  /** The program the client was last started from. */
  private command: string | undefined;
  /** The program whose version was last checked, so a mismatch is said once. */
  private checkedVersion: string | undefined;

  constructor(
    private readonly output: vscode.OutputChannel,
    /** The extension's folder and version: where its carried server is, and what it expects. */
    private readonly extension: { path: string; version: string },
  ) {}

  /** The program the server was started from, while it runs. */
  get serverPath(): string | undefined {
    return this.client?.isRunning() === true ? this.command : undefined;
  }

  /** The manuscript folder the server reads, while it runs. */
  get folder(): vscode.WorkspaceFolder | undefined {
    return this.client?.isRunning() === true ? this.served : undefined;
  }

  /** Starts the server for the window's manuscript, or stops it if there is none. */
  refresh(): Promise<void> {
    this.queue = this.queue.then(() => this.doRefresh(false)).catch((error: unknown) => this.log(error));
    return this.queue;
  }

  /** Stops the server and starts it again, with the current settings. */
  restart(): Promise<void> {
    this.queue = this.queue.then(() => this.doRefresh(true)).catch((error: unknown) => this.log(error));
    return this.queue;
  }

  /** Resolves when the starts and stops asked for so far are done. */
  settled(): Promise<void> {
    return this.queue;
  }

  private async doRefresh(force: boolean): Promise<void> {
    const folders = await manuscriptFolders();
    await vscode.commands.executeCommand('setContext', CONTEXT_KEY, folders.length > 0);
    const folder = folders[0];
    if (folder === undefined) {
      // Not a manuscript: stay out of the way.
      this.problem = undefined;
      await this.stop();
      return;
    }
    if (!force && this.client !== undefined && this.served?.uri.toString() === folder.uri.toString()) {
      return;
    }
    if (folders.length > 1) {
      this.output.appendLine(
        `This window has ${folders.length} manuscripts; Control Room serves the first, ${folder.uri.fsPath}.`,
      );
    }
    await this.stop();
    await this.start(folder);
  }

  /** Says once, for each program, when its version is not the extension's; it is started all the same. */
  private async checkVersion(command: string): Promise<void> {
    if (this.checkedVersion === command) {
      return;
    }
    this.checkedVersion = command;
    let message: string | undefined;
    try {
      message = versionMismatch(command, await serverVersion(command), this.extension.version);
    } catch (error) {
      message = error instanceof Error ? error.message : String(error);
    }
    if (message !== undefined) {
      this.output.appendLine(message);
      void vscode.window.showWarningMessage(message);
    }
  }

  private async start(folder: vscode.WorkspaceFolder): Promise<void> {
    const configured = vscode.workspace.getConfiguration(SECTION, folder.uri).get<string>('server.path');
    let command: string;
    try {
      command = await findServer(configured, folder.uri.fsPath, carriedServer(this.extension.path));
    } catch (error) {
      if (error instanceof ServerNotFound) {
        this.problem = error.message;
        this.output.appendLine(error.message);
        void this.offerFix(error);
        return;
      }
      throw error;
    }
    await this.checkVersion(command);
    this.command = command;
    this.output.appendLine(`Starting ${command} lsp for ${folder.uri.fsPath}`);
    // Stdio without `transport`: naming it would add a `--stdio` argument the server refuses.
    const serverOptions: ServerOptions = { command, args: ['lsp'], options: { cwd: folder.uri.fsPath } };
    const markdown = folderGlob(folder, '**/*');
    const recipes = folderGlob(folder, '.control-room/recipes/*.json');
    const decisions = folderGlob(folder, '.control-room/kb/decisions.jsonl');
    let client: LanguageClient | undefined = undefined;
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        markdown === undefined
          ? { scheme: 'file', language: 'markdown' }
          : { scheme: 'file', language: 'markdown', pattern: markdown },
        { scheme: 'file', language: 'json', pattern: recipes ?? '**/.control-room/recipes/*.json' },
        // The knowledge base: decisions that contradict a card, and "Promote to card".
        { scheme: 'file', pattern: decisions ?? '**/.control-room/kb/decisions.jsonl' },
      ],
      workspaceFolder: folder,
      outputChannel: this.output,
      initializationOptions: () => ({ [SECTION]: currentSettings(folder) }),
      synchronize: { configurationSection: SECTION },
      middleware: {
        // Follow runs for the status bar, and let the client show its own progress too.
        handleWorkDoneProgress: (token, params, next) => {
          this.activity.handle(token, params);
          next(token, params);
        },
        workspace: {
          // Send the settings as the server reads them, unset values left out.
          didChangeConfiguration: async () => {
            await client?.sendNotification(DidChangeConfigurationNotification.type, {
              settings: { [SECTION]: currentSettings(folder) },
            });
          },
        },
      },
    };
    client = new LanguageClient(SECTION, 'Control Room', serverOptions, clientOptions);
    client.onDidChangeState(() => {
      if (client?.isRunning() !== true) {
        this.activity.clear();
      }
    });
    this.client = client;
    this.served = folder;
    this.problem = undefined;
    try {
      await client.start();
    } catch (error) {
      this.problem = `The Control Room server did not start: ${String(error)}`;
      this.output.appendLine(this.problem);
      void vscode.window.showErrorMessage(this.problem, 'Show Output').then((choice) => {
        if (choice !== undefined) {
          this.output.show();
        }
      });
    }
  }

  private async offerFix(error: ServerNotFound): Promise<void> {
    const openSettings = 'Open Settings';
    const choice = await vscode.window.showErrorMessage(`Control Room: ${error.message}`, openSettings);
    if (choice === openSettings) {
      await vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.server.path`);
    }
  }

  private async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.served = undefined;
    this.activity.clear();
    if (client !== undefined) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.log(error);
      }
      await client.dispose();
    }
  }

  /** The running client, or an error saying why there is none. */
  requireClient(): LanguageClient {
    if (this.client?.isRunning() === true) {
      return this.client;
    }
    if (this.problem !== undefined) {
      throw new UserError(this.problem);
    }
    if (this.client !== undefined) {
      throw new UserError('The Control Room server is starting; try again in a moment.');
    }
    throw new UserError(
      'Control Room works in a manuscript folder: open a folder with control-room.toml, or with Story/ and Compendium/.',
    );
  }

  /** Whether the server reads `document`. */
  serves(document: vscode.TextDocument): boolean {
    const folder = this.folder;
    if (folder === undefined || document.uri.scheme !== 'file') {
      return false;
    }
    return vscode.workspace.getWorkspaceFolder(document.uri)?.uri.toString() === folder.uri.toString();
  }

  /** Runs one of the server's `controlRoom.*` commands and answers its result. */
  async serverCommand<T>(command: string, argument?: object): Promise<T> {
    const client = this.requireClient();
    const result: unknown = await client.sendRequest(ExecuteCommandRequest.type, {
      command,
      arguments: argument === undefined ? [] : [argument],
    });
    return result as T;
  }

  private log(error: unknown): void {
    this.output.appendLine(error instanceof Error ? (error.stack ?? error.message) : String(error));
  }

  /** Stops the server, after any start or stop under way. */
  shutdown(): Promise<void> {
    this.queue = this.queue.then(() => this.stop());
    return this.queue;
  }

  dispose(): void {
    void this.shutdown();
  }
}
