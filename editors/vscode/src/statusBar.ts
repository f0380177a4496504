/**
 * The status bar item that shows the runs and conferences in progress
 * ("$(sync~spin) Draft scene: SCN-the-gate (writer: draft 2/5)", or
 * "2 runs"); it opens Show Runs and hides when nothing runs.
 */

import * as vscode from 'vscode';

import { type Activity, type ActivityTracker, statusText } from './activity';
import { COMMANDS } from './commands';

export class RunStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscription: { dispose(): void };
  private readonly changed = new vscode.EventEmitter<string | undefined>();
  private shown: string | undefined;

  /** Fires with the new text (`undefined` when hidden) after every change. */
  readonly onDidChange = this.changed.event;

  constructor(tracker: ActivityTracker) {
    this.item = vscode.window.createStatusBarItem('control-room.runs', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'Control Room Runs';
    this.item.command = COMMANDS.showRuns;
    this.subscription = tracker.onDidChange((activities) => this.update(activities));
    this.update(tracker.current);
  }

  /** The text shown now, or `undefined` while the item is hidden. */
  get text(): string | undefined {
    return this.shown;
  }

  private update(activities: readonly Activity[]): void {
    const status = statusText(activities);
    if (status === undefined) {
      this.item.hide();
    } else {
      this.item.text = status.text;
      this.item.tooltip = status.tooltip;
      this.item.show();
    }
    if (status?.text !== this.shown) {
      this.shown = status?.text;
      this.changed.fire(this.shown);
    }
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
    this.item.dispose();
  }
}
