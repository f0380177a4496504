/**
 * The Control Room side bar's other two trees: **Cast and Places** (every
 * card, with how many scenes it is in; click opens the card, "Show Mentions"
 * lists every mention) and **Runs** (status and step; cancel, open the
 * report). Fed by the server's `controlRoom.cast` and `controlRoom.listRuns`.
 */

import * as vscode from 'vscode';

import { COMMANDS, isRunning, runTitle, type RunSummary, SERVER } from './commands';
import type { ControlRoom } from './controlRoom';

/** One card of `controlRoom.cast`. */
export interface CardView {
  kind: 'character' | 'location' | 'other';
  name: string;
  path: string;
  scenes: number;
  name_position: { line: number; character: number } | null;
}

export const CAST_VIEW = 'controlRoom.cast';
export const RUNS_VIEW = 'controlRoom.runs';
export const SHOW_MENTIONS = 'control-room.showMentions';

const KIND_TITLES: Record<CardView['kind'], string> = {
  character: 'Characters',
  location: 'Places',
  other: 'Other canon',
};

/** "in 12 scenes", "in no scene yet". */
export function scenesDescription(scenes: number): string {
  if (scenes === 0) {
    return 'in no scene yet';
  }
  return `in ${scenes} scene${scenes === 1 ? '' : 's'}`;
}

type CastNode = { kind: 'group'; title: string; cards: CardView[] } | { kind: 'card'; card: CardView };

/** A tree that asks the server again a moment after the manuscript changes. */
abstract class ServerTree<T> implements vscode.TreeDataProvider<T>, vscode.Disposable {
  protected readonly changed = new vscode.EventEmitter<T | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private timer: NodeJS.Timeout | undefined;
  protected readonly subscriptions: vscode.Disposable[] = [];

  constructor(protected readonly controlRoom: ControlRoom) {}

  refreshSoon(delay = 600): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), delay);
  }

  abstract refresh(): void;
  abstract getChildren(node?: T): Promise<T[]>;
  abstract getTreeItem(node: T): vscode.TreeItem;

  dispose(): void {
    clearTimeout(this.timer);
    this.changed.dispose();
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
  }
}

export class CastProvider extends ServerTree<CastNode> {
  private cards: CardView[] | undefined;

  constructor(controlRoom: ControlRoom) {
    super(controlRoom);
    this.subscriptions.push(
      vscode.workspace.onDidSaveTextDocument(() => this.refreshSoon()),
      vscode.workspace.onDidCreateFiles(() => this.refreshSoon()),
      vscode.workspace.onDidDeleteFiles(() => this.refreshSoon()),
      vscode.workspace.onDidRenameFiles(() => this.refreshSoon()),
    );
  }

  refresh(): void {
    this.cards = undefined;
    this.changed.fire(undefined);
  }

  /** The cards (asked of the server when not yet known). */
  async current(): Promise<CardView[]> {
    if (this.cards === undefined && this.controlRoom.folder !== undefined) {
      try {
        this.cards = (await this.controlRoom.serverCommand<CardView[] | null>('controlRoom.cast')) ?? [];
      } catch {
        this.cards = undefined;
      }
    }
    return this.cards ?? [];
  }

  async getChildren(node?: CastNode): Promise<CastNode[]> {
    if (node === undefined) {
      const cards = await this.current();
      return (Object.keys(KIND_TITLES) as CardView['kind'][])
        .map((kind) => ({ kind: 'group' as const, title: KIND_TITLES[kind], cards: cards.filter((card) => card.kind === kind) }))
        .filter((group) => group.cards.length > 0);
    }
    return node.kind === 'group' ? node.cards.map((card) => ({ kind: 'card', card })) : [];
  }

  getTreeItem(node: CastNode): vscode.TreeItem {
    if (node.kind === 'group') {
      const item = new vscode.TreeItem(node.title, vscode.TreeItemCollapsibleState.Expanded);
      item.description = `${node.cards.length}`;
      return item;
    }
    const card = node.card;
    const item = new vscode.TreeItem(card.name, vscode.TreeItemCollapsibleState.None);
    item.description = scenesDescription(card.scenes);
    item.tooltip = card.path;
    item.contextValue = 'card';
    item.iconPath = new vscode.ThemeIcon(card.kind === 'character' ? 'person' : card.kind === 'location' ? 'location' : 'library');
    const root = this.controlRoom.folder?.uri;
    if (root !== undefined) {
      const uri = vscode.Uri.joinPath(root, card.path);
      item.resourceUri = uri;
      item.command = { command: 'vscode.open', title: 'Open Card', arguments: [uri] };
    }
    return item;
  }
}

/** "Show Mentions" on a card: every mention of it, in the references view. */
export async function showMentions(controlRoom: ControlRoom, node: CastNode | undefined): Promise<number> {
  const root = controlRoom.folder?.uri;
  if (node?.kind !== 'card' || root === undefined || node.card.name_position === null) {
    return 0;
  }
  const uri = vscode.Uri.joinPath(root, node.card.path);
  const position = new vscode.Position(node.card.name_position.line, node.card.name_position.character);
  const locations = (await vscode.commands.executeCommand<vscode.Location[]>('vscode.executeReferenceProvider', uri, position)) ?? [];
  await vscode.commands.executeCommand('editor.action.showReferences', uri, position, locations);
  return locations.length;
}

/** A run in the tree: its id at the top, so Cancel Run and Open Run Report take the node itself. */
type RunNode = { run_id: string; run: RunSummary };

export class RunsProvider extends ServerTree<RunNode> {
  private runs: RunSummary[] | undefined;

  constructor(controlRoom: ControlRoom) {
    super(controlRoom);
    this.subscriptions.push(controlRoom.activity.onDidChange(() => this.refreshSoon(300)));
  }

  refresh(): void {
    this.runs = undefined;
    this.changed.fire(undefined);
  }

  async current(): Promise<RunSummary[]> {
    if (this.runs === undefined && this.controlRoom.folder !== undefined) {
      try {
        this.runs = (await this.controlRoom.serverCommand<RunSummary[] | null>(SERVER.listRuns)) ?? [];
      } catch {
        this.runs = undefined;
      }
    }
    return this.runs ?? [];
  }

  async getChildren(node?: RunNode): Promise<RunNode[]> {
    if (node !== undefined) {
      return [];
    }
    return (await this.current()).map((run) => ({ run_id: run.run_id, run }));
  }

  getTreeItem(node: RunNode): vscode.TreeItem {
    const run = node.run;
    const item = new vscode.TreeItem(runTitle(run), vscode.TreeItemCollapsibleState.None);
    const step = run.step !== undefined && run.step !== null && run.step !== '' ? `: ${run.step}` : '';
    item.description = `${run.status}${step}`;
    item.tooltip = [run.run_id, run.created_at, run.error].filter((part) => part !== undefined && part !== null && part !== '').join('\n');
    item.contextValue = isRunning(run) ? 'runningRun' : 'run';
    item.iconPath = new vscode.ThemeIcon(
      isRunning(run) ? 'sync~spin' : run.status === 'done' ? 'check' : run.status === 'failed' ? 'error' : 'circle-slash',
    );
    item.command = { command: COMMANDS.openRunReport, title: 'Open Run Report', arguments: [{ run_id: run.run_id }] };
    return item;
  }
}
