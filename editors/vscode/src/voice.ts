/**
 * Voice calibration in VS Code: "Voice Tournament" drafts the selection (or,
 * without one, the scene in the editor) in several voices side by side, by
 * the server's `controlRoom.voice.tournament`; the tournament's file opens
 * when the contestants are done, with the server's code lenses on each
 * version ("Pick this voice", "Why does this work?", "Cross with the picked
 * voice"). "Lock the Voice" sets `locked: true` in the gold standard.
 */

import * as vscode from 'vscode';

import type { ControlRoom } from './controlRoom';

/** The server's commands for the voice. */
export const VOICE_SERVER = {
  tournament: 'controlRoom.voice.tournament',
  lock: 'controlRoom.voice.lock',
  unlock: 'controlRoom.voice.unlock',
} as const;

/** The palette's commands for the voice. */
export const VOICE_COMMANDS = {
  tournament: 'control-room.voiceTournament',
  lock: 'control-room.lockVoice',
  unlock: 'control-room.unlockVoice',
} as const;

/** What `controlRoom.voice.tournament` answers. */
export interface TournamentStarted {
  tournament: string;
  contestants: number;
}

/**
 * A tournament on the active editor's selection, or its scene. `{contestants:
 * [...]}` as an argument skips the question; an empty answer keeps the
 * manuscript's `[voice] contestants`.
 */
export async function voiceTournament(controlRoom: ControlRoom, argument: unknown): Promise<TournamentStarted | undefined> {
  controlRoom.requireClient();
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined || !controlRoom.serves(editor.document)) {
    throw new Error('open a scene of the manuscript, and select the passage to draft in several voices');
  }
  let contestants: string[] | undefined;
  if (typeof argument === 'object' && argument !== null && 'contestants' in argument && Array.isArray(argument.contestants)) {
    contestants = argument.contestants.map(String);
  } else {
    const answer = await vscode.window.showInputBox({
      title: 'Voice Tournament',
      prompt: 'Contestants, comma-separated: sparse, lyrical, close, distant, action, character, dialogue, balanced, @model, or your own words (empty: the manuscript’s)',
      ignoreFocusOut: true,
    });
    if (answer === undefined) {
      return undefined;
    }
    const names = answer.split(',').map((name) => name.trim()).filter((name) => name !== '');
    contestants = names.length > 0 ? names : undefined;
  }
  const selection = editor.selection;
  const given: Record<string, unknown> = { uri: editor.document.uri.toString() };
  if (!selection.isEmpty) {
    given.range = {
      start: { line: selection.start.line, character: selection.start.character },
      end: { line: selection.end.line, character: selection.end.character },
    };
  }
  if (contestants !== undefined) {
    given.contestants = contestants;
  }
  return controlRoom.serverCommand<TournamentStarted>(VOICE_SERVER.tournament, given);
}

/** Locks the voice (the gold standard's `locked: true`), or unlocks it. */
export async function lockVoice(controlRoom: ControlRoom, unlock = false): Promise<unknown> {
  const answer = await controlRoom.serverCommand<{ said?: string }>(unlock ? VOICE_SERVER.unlock : VOICE_SERVER.lock, {});
  if (answer?.said !== undefined) {
    void vscode.window.showInformationMessage(`Control Room: ${answer.said}`);
  }
  return answer;
}
