/**
 * The status bar item with the writer's words: the active scene and the
 * manuscript against their targets, this session's words and today's (from
 * git). It asks the server's `controlRoom.stats` a moment after typing
 * stops, on save and when the active editor changes, and hides while no
 * server runs.
 */

import * as vscode from 'vscode';

import { SERVER } from './commands';
import type { ControlRoom } from './controlRoom';
import { type WordStats, wordsStatus } from './words';

/** How long after the last keystroke the count is asked for. */
const QUIET_MS = 1500;

export class WordsStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private shown: string | undefined;

  constructor(private readonly controlRoom: ControlRoom) {
    this.item = vscode.window.createStatusBarItem('control-room.words', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'Control Room Words';
    this.subscriptions.push(
      vscode.workspace.onDidChangeTextDocument((event) => {
        if (this.controlRoom.serves(event.document)) {
          this.schedule(QUIET_MS);
        }
      }),
      vscode.workspace.onDidSaveTextDocument(() => this.schedule(0)),
      vscode.window.onDidChangeActiveTextEditor(() => this.schedule(0)),
    );
  }

  /** The text shown now, or `undefined` while the item is hidden. */
  get text(): string | undefined {
    return this.shown;
  }

  /** Asks for the counts after `delay` milliseconds (again if asked again meanwhile). */
  schedule(delay: number): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => void this.update(), delay);
  }

  /** Asks the server now and shows the answer. */
  async update(): Promise<void> {
    this.timer = undefined;
    if (this.controlRoom.folder === undefined) {
      this.hide();
      return;
    }
    const editor = vscode.window.activeTextEditor;
    const argument =
      editor !== undefined && this.controlRoom.serves(editor.document) ? { uri: editor.document.uri.toString() } : {};
    try {
      const stats = await this.controlRoom.serverCommand<WordStats>(SERVER.stats, argument);
      const { text, tooltip } = wordsStatus(stats);
      this.item.text = text;
      this.item.tooltip = tooltip;
      this.item.show();
      this.shown = text;
    } catch {
      // The server is starting or stopping: show nothing rather than a stale count.
      this.hide();
    }
  }

  private hide(): void {
    this.item.hide();
    this.shown = undefined;
  }

  dispose(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.item.dispose();
  }
}
