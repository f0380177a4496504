/**
 * The Foreman in VS Code: the project's mode in the status bar (asked of
 * the server's `controlRoom.mode` on save and when the active editor
 * changes; a click advances it), "Ask the Foreman" (a message for the
 * desk, `Notes/foreman.md`, which opens beside; the reply arrives there as
 * an edit) and "Advance Mode" (through the gate, or past it with the
 * writer's reason, which the server records with the risk).
 */

import * as vscode from 'vscode';

import type { ControlRoom } from './controlRoom';

/** The server's commands for the Foreman. */
export const FOREMAN_SERVER = {
  mode: 'controlRoom.mode',
  advanceMode: 'controlRoom.mode.advance',
  askForeman: 'controlRoom.askForeman',
} as const;

/** The palette's commands for the Foreman. */
export const FOREMAN_COMMANDS = {
  askForeman: 'control-room.askForeman',
  advanceMode: 'control-room.advanceMode',
} as const;

/** The desk, relative to the manuscript. */
export const DESK_FILE = 'Notes/foreman.md';

/** What `controlRoom.mode` answers. */
export interface ModeView {
  mode: string;
  label: string;
  next: string | null;
  gate_name: string;
  gate: { met: boolean; unmet: string[]; percent: number };
  completed_at: string | null;
}

/** What `controlRoom.mode.advance` answers. */
export interface Advanced {
  moved: boolean;
  refused?: string;
  mode: ModeView;
}

/** The status bar's text and tooltip for a mode. */
export function modeStatus(view: ModeView): { text: string; tooltip: string } {
  const towards = view.next === null ? 'the end' : view.next.toUpperCase();
  const gate = view.gate.met ? 'open' : 'shut';
  const lines = [`Gate to ${towards} (${view.gate_name}): ${gate}, ${view.gate.percent}% done`, ...view.gate.unmet.map((line) => `• ${line}`)];
  return { text: `$(compass) ${view.label} ${view.gate.percent}%`, tooltip: lines.join('\n') };
}

export class ModeStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[] = [];
  private shown: string | undefined;

  constructor(private readonly controlRoom: ControlRoom) {
    this.item = vscode.window.createStatusBarItem('control-room.mode', vscode.StatusBarAlignment.Left, 9);
    this.item.name = 'Control Room Mode';
    this.item.command = FOREMAN_COMMANDS.advanceMode;
    this.subscriptions.push(
      vscode.workspace.onDidSaveTextDocument(() => void this.update()),
      vscode.window.onDidChangeActiveTextEditor(() => void this.update()),
    );
  }

  /** The text shown now, or `undefined` while the item is hidden. */
  get text(): string | undefined {
    return this.shown;
  }

  /** Asks the server and shows the mode. */
  async update(): Promise<void> {
    if (this.controlRoom.folder === undefined) {
      this.hide();
      return;
    }
    try {
      const view = await this.controlRoom.serverCommand<ModeView>(FOREMAN_SERVER.mode);
      const { text, tooltip } = modeStatus(view);
      this.item.text = text;
      this.item.tooltip = tooltip;
      this.item.show();
      this.shown = text;
    } catch {
      this.hide();
    }
  }

  private hide(): void {
    this.item.hide();
    this.shown = undefined;
  }

  dispose(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.item.dispose();
  }
}

/**
 * Ask the Foreman: a message for the desk (empty asks the desk's last
 * unanswered one), with the desk opened beside. `{message}` as an argument
 * skips the question.
 */
export async function askForeman(controlRoom: ControlRoom, argument: unknown): Promise<unknown> {
  controlRoom.requireClient();
  let message: string | undefined;
  if (typeof argument === 'object' && argument !== null && 'message' in argument) {
    message = String(argument.message);
  } else {
    message = await vscode.window.showInputBox({
      title: 'Ask the Foreman',
      prompt: `Your message (leave it empty to ask your last message in ${DESK_FILE})`,
      ignoreFocusOut: true,
    });
    if (message === undefined) {
      return undefined;
    }
  }
  const folder = controlRoom.folder;
  if (folder !== undefined) {
    const desk = vscode.Uri.joinPath(folder.uri, DESK_FILE);
    try {
      await vscode.workspace.fs.stat(desk);
      await vscode.window.showTextDocument(desk, { viewColumn: vscode.ViewColumn.Beside, preview: false });
    } catch {
      // A first message: the reply's edit creates the desk.
    }
  }
  const trimmed = message.trim();
  return controlRoom.serverCommand(FOREMAN_SERVER.askForeman, trimmed === '' ? {} : { message: trimmed });
}

/**
 * Advance Mode: through the gate; when it is shut, the writer may go on
 * anyway with a reason. `{to, skip, because}` as an argument skips the questions.
 */
export async function advanceMode(controlRoom: ControlRoom, argument: unknown, bar: ModeStatusBar): Promise<Advanced | undefined> {
  controlRoom.requireClient();
  const given = typeof argument === 'object' && argument !== null ? (argument) : {};
  let advanced = await controlRoom.serverCommand<Advanced>(FOREMAN_SERVER.advanceMode, given);
  if (!advanced.moved && !('skip' in given)) {
    const choice = await vscode.window.showWarningMessage(advanced.refused ?? 'The gate is shut.', 'Go On Anyway…');
    if (choice === 'Go On Anyway…') {
      const because = await vscode.window.showInputBox({
        title: 'Why go on with the gate shut?',
        prompt: 'Your reason is recorded with the risk.',
        ignoreFocusOut: true,
        validateInput: (value) => (value.trim() === '' ? 'Say why.' : undefined),
      });
      if (because !== undefined) {
        advanced = await controlRoom.serverCommand<Advanced>(FOREMAN_SERVER.advanceMode, { ...given, skip: true, because });
      }
    }
  }
  if (advanced.moved) {
    void vscode.window.showInformationMessage(`Control Room: now in ${advanced.mode.label}.`);
  }
  await bar.update();
  return advanced;
}
