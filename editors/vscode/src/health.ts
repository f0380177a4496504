/**
 * Show Story Health: the server's `controlRoom.health` report (the seven
 * checks of the book's shape, each with its score, findings and what to
 * do) in a Markdown document beside the editor. The findings that point at
 * text are also diagnostics, in the Problems panel.
 */

import * as vscode from 'vscode';

import type { ControlRoom } from './controlRoom';

export const HEALTH_COMMAND = 'control-room.showHealth';
export const OVERRIDE_COMMAND = 'control-room.overrideHealth';
const HEALTH_SERVER = 'controlRoom.health';
const OVERRIDE_SERVER = 'controlRoom.healthOverride';

/** The checks a model reads, and the verdicts each may give a scene. */
const MODEL_VERDICTS: Record<string, string[]> = {
  A3: ['agrees', 'disagrees', 'cannot judge'],
  B1: ['challenged', 'not challenged', 'cannot judge'],
  C2: ['strong', 'weak', 'none', 'cannot judge'],
};

/** What `controlRoom.healthOverride` takes; `verdict: null` takes it back. */
export interface HealthOverride {
  check: string;
  scene: string;
  verdict: string | null;
  why: string;
}

/** One check of `controlRoom.health`. */
export interface HealthCheck {
  id: string;
  name: string;
  method: 'deterministic' | 'model';
  score: number | null;
  summary: string;
  findings: { message: string; recommendation: string; at: string | null; severity: string }[];
}

/** What `controlRoom.health` answers. */
export interface HealthReport {
  score: number | null;
  /** How many of the checks judged the book: the score is theirs alone. */
  judged: number;
  scenes: number;
  words: number;
  checks: HealthCheck[];
  text: string;
  /** Each scene in the book's order, with its pace. */
  pace: { scene: string }[];
}

/** Asks for the report and shows it; answers the report and the document's text. */
export async function showHealth(controlRoom: ControlRoom): Promise<HealthReport & { document: string }> {
  const report = await controlRoom.serverCommand<HealthReport>(HEALTH_SERVER);
  const document = await vscode.workspace.openTextDocument({ language: 'markdown', content: markdown(report) });
  await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: true });
  return { ...report, document: document.getText() };
}

/** The report as Markdown: a heading per check, its findings as a list. */
export function markdown(report: HealthReport): string {
  const judged = `${report.judged} of ${report.checks.length} checks`;
  const headline =
    report.score === null
      ? `not judged: none of the ${report.checks.length} checks could judge the book yet`
      : `${report.score} of 100, from the ${judged} that judged`;
  const lines = [`# The story's health: ${headline}`, ''];
  lines.push(`${report.scenes} scenes, ${report.words} words.`, '');
  for (const check of report.checks) {
    const score = check.score ?? (check.method === 'model' ? 'not read' : 'not judged');
    const how = check.method === 'model' ? 'read by a model' : 'from the text';
    lines.push(`## ${check.id} ${check.name}: ${score}`, '', `*${how}*: ${check.summary}`, '');
    for (const finding of check.findings) {
      lines.push(`- ${finding.at ? `\`${finding.at}\` ` : ''}${finding.message}`, `  - ${finding.recommendation}`);
    }
    if (check.findings.length > 0) {
      lines.push('');
    }
  }
  return lines.join('\n');
}

/**
 * Override a Health Check: the writer's verdict on a scene for a check a
 * model reads (A3, B1, C2), kept over whatever a run says. Asks for the
 * check, the scene, the verdict (or "clear") and why, unless `given`
 * holds them; answers what the server kept.
 */
export async function overrideHealth(controlRoom: ControlRoom, given?: HealthOverride): Promise<unknown> {
  let chosen = given;
  if (chosen === undefined) {
    const check = await vscode.window.showQuickPick(
      [
        { label: 'A3', description: 'Timeline semantics' },
        { label: 'B1', description: 'Fatal-flaw challenges' },
        { label: 'C2', description: 'Theme resonance' },
      ],
      { title: 'Override a health check: which check?' },
    );
    if (check === undefined) {
      return undefined;
    }
    const report = await controlRoom.serverCommand<HealthReport>(HEALTH_SERVER);
    const scene = await vscode.window.showQuickPick(
      report.pace.map((scene) => scene.scene),
      { title: `Override ${check.label}: which scene?` },
    );
    if (scene === undefined) {
      return undefined;
    }
    const verdict = await vscode.window.showQuickPick([...MODEL_VERDICTS[check.label], 'clear: the model\'s reading counts again'], {
      title: `${check.label} of ${scene}: your verdict`,
    });
    if (verdict === undefined) {
      return undefined;
    }
    const clear = verdict.startsWith('clear');
    const why = clear ? '' : await vscode.window.showInputBox({ title: 'Why, in a line (shown in the report)' });
    if (why === undefined) {
      return undefined;
    }
    chosen = { check: check.label, scene, verdict: clear ? null : verdict, why };
  }
  const kept = await controlRoom.serverCommand<unknown>(OVERRIDE_SERVER, chosen);
  void vscode.window.showInformationMessage(
    chosen.verdict === null
      ? `${chosen.check} of ${chosen.scene}: the model's reading counts again.`
      : `${chosen.check} of ${chosen.scene}: ${chosen.verdict} (yours).`,
  );
  return kept;
}
