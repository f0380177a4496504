/**
 * Control Room for VS Code: starts the control-room language server on a
 * manuscript (a folder with `control-room.toml`, or with `Story/` and
 * `Compendium/`), adds the palette commands, and shows runs in progress.
 */

import * as vscode from 'vscode';

import type { Activity } from './activity';
import { registerCommands } from './commands';
import { IMPORT_NOVEL, type ImportArgument, importNovel, NEW_MANUSCRIPT, type NewManuscriptArgument, newManuscript } from './newManuscript';
import { OUTLINE_VIEW, OutlineProvider, chapterDescription, sceneDescription } from './outlineView';
import { CAST_VIEW, CastProvider, RUNS_VIEW, RunsProvider, SHOW_MENTIONS, scenesDescription, showMentions } from './sidebar';
import { ControlRoom, SECTION } from './controlRoom';
import { FOREMAN_COMMANDS, ModeStatusBar, advanceMode, askForeman } from './foreman';
import { VOICE_COMMANDS, lockVoice, voiceTournament } from './voice';
import { CHART_COMMANDS, ChartKind, ChartPanel } from './charts';
import { HEALTH_COMMAND, OVERRIDE_COMMAND, overrideHealth, showHealth, type HealthOverride } from './health';
import { RunStatusBar } from './statusBar';
import { WordsStatusBar } from './wordsStatusBar';

/** What the extension offers other extensions (and its end-to-end test). */
export interface ControlRoomApi {
  /** The runs and conferences in progress. */
  activities(): readonly Activity[];
  /** The run status bar item's text, or `undefined` while it is hidden. */
  statusBarText(): string | undefined;
  /** Fires with the status bar's new text whenever it changes. */
  readonly onDidChangeStatusBar: vscode.Event<string | undefined>;
  /** The manuscript folder the server reads, while it runs. */
  folder(): vscode.Uri | undefined;
  /** The program the server was started from, while it runs. */
  serverPath(): string | undefined;
  /** The Outline view's top level (asked of the server again first): each chapter or scene's label and description. */
  outlineItems(): Promise<{ label: string; description: string }[]>;
  /** The Cast and Places view's cards (asked again first): name and description. */
  castItems(): Promise<{ label: string; description: string }[]>;
  /** The Runs view's runs (asked again first), as the tree shows them: title, status and step, and whether Cancel Run is offered. */
  runItems(): Promise<{ id: string; label: string; description: string; cancellable: boolean }[]>;
  /** "Show Mentions" on the card named `name`: how many mentions it listed. */
  showMentionsOf(name: string): Promise<number>;
  /** Resolves once the server has been started (or found missing) for the current folders. */
  ready(): Promise<void>;
  /** The words status bar item's text (asked for again first), or `undefined` while it is hidden. */
  wordsText(): Promise<string | undefined>;
  /** The mode status bar item's text (asked for again first), or `undefined` while it is hidden. */
  modeText(): Promise<string | undefined>;
}

let controlRoom: ControlRoom | undefined;

/** The extension's version, as its package.json says. */
function extensionVersion(context: vscode.ExtensionContext): string {
  const version = (context.extension.packageJSON as { version?: unknown }).version;
  return typeof version === 'string' ? version : '';
}

export function activate(context: vscode.ExtensionContext): ControlRoomApi {
  const output = vscode.window.createOutputChannel('Control Room');
  const instance = new ControlRoom(output, {
    path: context.extensionPath,
    version: extensionVersion(context),
  });
  controlRoom = instance;
  const statusBar = new RunStatusBar(instance.activity);
  const words = new WordsStatusBar(instance);
  const mode = new ModeStatusBar(instance);
  const charts = (Object.keys(CHART_COMMANDS) as ChartKind[]).map((kind) => ({ kind, panel: new ChartPanel(instance, kind) }));
  const foremanCommand = (id: string, handler: (argument: unknown) => Promise<unknown>) =>
    vscode.commands.registerCommand(id, async (argument: unknown) => {
      try {
        return await handler(argument);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        output.appendLine(`${id}: ${message}`);
        void vscode.window.showErrorMessage(`Control Room: ${message}`);
        return undefined;
      }
    });
  context.subscriptions.push(
    output,
    statusBar,
    words,
    mode,
    ...charts.map(({ panel }) => panel),
    ...registerCommands(instance, output),
    vscode.commands.registerCommand(NEW_MANUSCRIPT, (argument?: NewManuscriptArgument) =>
      newManuscript(context.extensionPath, output, argument),
    ),
    vscode.commands.registerCommand(IMPORT_NOVEL, (argument?: ImportArgument) => importNovel(context.extensionPath, output, argument)),
    foremanCommand(FOREMAN_COMMANDS.askForeman, (argument) => askForeman(instance, argument)),
    foremanCommand(FOREMAN_COMMANDS.advanceMode, (argument) => advanceMode(instance, argument, mode)),
    foremanCommand(VOICE_COMMANDS.tournament, (argument) => voiceTournament(instance, argument)),
    foremanCommand(VOICE_COMMANDS.lock, () => lockVoice(instance)),
    foremanCommand(VOICE_COMMANDS.unlock, () => lockVoice(instance, true)),
    ...charts.map(({ kind, panel }) => foremanCommand(CHART_COMMANDS[kind], (argument) => panel.show(argument))),
    foremanCommand(HEALTH_COMMAND, () => showHealth(instance)),
    foremanCommand(OVERRIDE_COMMAND, (argument) => overrideHealth(instance, argument as HealthOverride | undefined)),
  );
  context.subscriptions.push(
    vscode.workspace.onDidChangeWorkspaceFolders(() => void instance.refresh()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(`${SECTION}.server.path`)) {
        void instance.restart();
      }
    }),
  );
  // A manuscript can appear in an open folder (its settings file, or its
  // second folder) or stop being one.
  const watcher = vscode.workspace.createFileSystemWatcher('**/{control-room.toml,Story,Compendium}', false, true, false);
  context.subscriptions.push(
    watcher,
    watcher.onDidCreate(() => void instance.refresh()),
    watcher.onDidDelete(() => void instance.refresh()),
  );
  const outline = new OutlineProvider(instance);
  const cast = new CastProvider(instance);
  const runs = new RunsProvider(instance);
  context.subscriptions.push(
    outline,
    cast,
    runs,
    vscode.window.createTreeView(OUTLINE_VIEW, { treeDataProvider: outline, showCollapseAll: true }),
    vscode.window.createTreeView(CAST_VIEW, { treeDataProvider: cast }),
    vscode.window.createTreeView(RUNS_VIEW, { treeDataProvider: runs }),
    vscode.commands.registerCommand(SHOW_MENTIONS, (node?: Parameters<typeof showMentions>[1]) => showMentions(instance, node)),
  );
  void instance.refresh().then(() => {
    words.schedule(0);
    void mode.update();
    outline.refresh();
    cast.refresh();
    runs.refresh();
  });
  return {
    activities: () => instance.activity.current,
    statusBarText: () => statusBar.text,
    onDidChangeStatusBar: statusBar.onDidChange,
    folder: () => instance.folder?.uri,
    serverPath: () => instance.serverPath,
    outlineItems: async () => {
      outline.refresh();
      const view = await outline.current();
      return (view?.chapters ?? []).flatMap((chapter) =>
        chapter.title === ''
          ? chapter.scenes.map((scene) => ({ label: scene.title, description: sceneDescription(scene) }))
          : [{ label: chapter.title, description: chapterDescription(chapter) }],
      );
    },
    castItems: async () => {
      cast.refresh();
      return (await cast.current()).map((card) => ({ label: card.name, description: scenesDescription(card.scenes) }));
    },
    runItems: async () => {
      runs.refresh();
      const nodes = await runs.getChildren();
      return nodes.map((node) => {
        const item = runs.getTreeItem(node);
        return {
          id: node.run_id,
          label: typeof item.label === 'string' ? item.label : (item.label?.label ?? ''),
          description: typeof item.description === 'string' ? item.description : '',
          cancellable: item.contextValue === 'runningRun',
        };
      });
    },
    showMentionsOf: async (name: string) => {
      const card = (await cast.current()).find((found) => found.name === name);
      return card === undefined ? 0 : showMentions(instance, { kind: 'card', card });
    },
    ready: () => instance.settled(),
    wordsText: async () => {
      await words.update();
      return words.text;
    },
    modeText: async () => {
      await mode.update();
      return mode.text;
    },
  };
}

export async function deactivate(): Promise<void> {
  await controlRoom?.shutdown();
  controlRoom = undefined;
}
