/**
 * The Control Room side bar's Outline: the book's chapters in story order,
 * each with its scenes (words against target, point of view, date; a scene
 * the outline lists that no file holds yet marked missing), then the scene
 * files the outline does not list. Fed by the server's `controlRoom.outline`
 * and asked again a moment after the manuscript changes.
 */

import * as vscode from 'vscode';

import type { ControlRoom } from './controlRoom';

/** What `controlRoom.outline` answers. */
export interface OutlineView {
  title: string;
  chapters: ChapterView[];
  unlisted: SceneView[];
}

export interface ChapterView {
  title: string;
  words: number;
  target: number | null;
  scenes: SceneView[];
}

export interface SceneView {
  id: string;
  title: string;
  path: string | null;
  words: number;
  target: number | null;
  label: string;
  pov: string | null;
  date: string | null;
  missing: boolean;
}

export const OUTLINE_VIEW = 'controlRoom.outline';

type Node = { kind: 'chapter'; chapter: ChapterView } | { kind: 'unlisted'; scenes: SceneView[] } | { kind: 'scene'; scene: SceneView };

/** "387 / 400 words · Iria Vell · 1203-04-12, dusk", or "missing: not written yet". */
export function sceneDescription(scene: SceneView): string {
  if (scene.missing) {
    return 'missing: not written yet';
  }
  return [scene.label, scene.pov, scene.date].filter((part) => part !== null && part !== '').join(' · ');
}

export function chapterDescription(chapter: ChapterView): string {
  const words = chapter.words.toLocaleString('en-US');
  return chapter.target === null ? `${words} words` : `${words} / ${chapter.target.toLocaleString('en-US')} words`;
}

export class OutlineProvider implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private outline: OutlineView | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly controlRoom: ControlRoom) {
    const later = () => this.refreshSoon();
    this.subscriptions = [
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (event.document.languageId === 'markdown') {
          later();
        }
      }),
      vscode.workspace.onDidCreateFiles(later),
      vscode.workspace.onDidDeleteFiles(later),
      vscode.workspace.onDidRenameFiles(later),
      vscode.workspace.onDidSaveTextDocument(later),
    ];
  }

  /** Asks the server again a moment from now (typing asks once it pauses). */
  refreshSoon(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), 600);
  }

  refresh(): void {
    this.outline = undefined;
    this.changed.fire(undefined);
  }

  /** The outline as the tree shows it (asked of the server when not yet known). */
  async current(): Promise<OutlineView | undefined> {
    if (this.outline === undefined && this.controlRoom.folder !== undefined) {
      try {
        this.outline = await this.controlRoom.serverCommand<OutlineView>('controlRoom.outline');
      } catch {
        this.outline = undefined;
      }
    }
    return this.outline;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (node === undefined) {
      const outline = await this.current();
      if (outline === undefined) {
        return [];
      }
      const nodes: Node[] = [];
      for (const chapter of outline.chapters) {
        if (chapter.title === '') {
          nodes.push(...chapter.scenes.map((scene): Node => ({ kind: 'scene', scene })));
        } else {
          nodes.push({ kind: 'chapter', chapter });
        }
      }
      if (outline.unlisted.length > 0) {
        nodes.push({ kind: 'unlisted', scenes: outline.unlisted });
      }
      return nodes;
    }
    switch (node.kind) {
      case 'chapter':
        return node.chapter.scenes.map((scene) => ({ kind: 'scene', scene }));
      case 'unlisted':
        return node.scenes.map((scene) => ({ kind: 'scene', scene }));
      case 'scene':
        return [];
    }
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case 'chapter': {
        const item = new vscode.TreeItem(node.chapter.title, vscode.TreeItemCollapsibleState.Expanded);
        item.description = chapterDescription(node.chapter);
        item.iconPath = new vscode.ThemeIcon('book');
        item.contextValue = 'chapter';
        return item;
      }
      case 'unlisted': {
        const item = new vscode.TreeItem('Not in the outline', vscode.TreeItemCollapsibleState.Collapsed);
        item.description = `${node.scenes.length} scene${node.scenes.length === 1 ? '' : 's'}`;
        item.iconPath = new vscode.ThemeIcon('question');
        return item;
      }
      case 'scene': {
        const scene = node.scene;
        const item = new vscode.TreeItem(scene.title, vscode.TreeItemCollapsibleState.None);
        item.description = sceneDescription(scene);
        item.tooltip = `${scene.id}${scene.path === null ? '' : ` (${scene.path})`}`;
        item.contextValue = scene.missing ? 'missingScene' : 'scene';
        item.iconPath = new vscode.ThemeIcon(scene.missing ? 'circle-slash' : 'file-text');
        const root = this.controlRoom.folder?.uri;
        if (scene.path !== null && root !== undefined) {
          const uri = vscode.Uri.joinPath(root, scene.path);
          item.resourceUri = uri;
          item.command = { command: 'vscode.open', title: 'Open Scene', arguments: [uri] };
        }
        return item;
      }
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.changed.dispose();
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
  }
}
