/**
 * Show Story Health: the server's `controlRoom.health` report (the seven
 * checks of the book's shape, each with its score, findings and what to
 * do) in a Markdown document beside the editor. The findings that point at
 * text are also diagnostics, in the Problems panel.
 */

import * as vscode from 'vscode';

import type { ControlRoom } from './controlRoom';

export const HEALTH_COMMAND = 'control-room.showHealth';
const HEALTH_SERVER = 'controlRoom.health';

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
  scenes: number;
  words: number;
  checks: HealthCheck[];
  text: string;
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
  const lines = [`# The story's health: ${report.score ?? 'not judged'}${report.score === null ? '' : ' of 100'}`, ''];
  lines.push(`${report.scenes} scenes, ${report.words} words.`, '');
  for (const check of report.checks) {
    const score = check.score ?? (check.method === 'model' ? 'not run' : 'not judged');
    const how = check.method === 'model' ? 'needs a model' : 'from the text';
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
