/**
 * The book's charts in VS Code: "Show Presence Chart" (who is in which
 * scene), "Show Timeline" (story dates against the telling), "Show Beat
 * Chart" (the beat sheet against the manuscript) and "Show Run Chart" (a
 * run's steps in time) each open the server's `controlRoom.chart`, an SVG,
 * in a webview beside the editor, drawn again whenever a file of the
 * manuscript is saved. The webviews run no script: they show the SVG and
 * its tooltips only.
 */

import * as vscode from 'vscode';

import type { ControlRoom } from './controlRoom';

/** The server's command. */
export const CHART_SERVER = 'controlRoom.chart';

/** The palette's commands, by the chart each shows. */
export const CHART_COMMANDS = {
  presence: 'control-room.showPresenceChart',
  timeline: 'control-room.showTimelineChart',
  beats: 'control-room.showBeatChart',
  run: 'control-room.showRunChart',
} as const;

export type ChartKind = keyof typeof CHART_COMMANDS;

const PANEL_TITLES: Record<ChartKind, string> = {
  presence: 'Presence',
  timeline: 'Timeline',
  beats: 'Beats',
  run: 'Run',
};

/** What `controlRoom.chart` answers: the chart and its figures. */
export interface Chart {
  kind: string;
  title: string;
  svg: string;
  [figure: string]: unknown;
}

/** What a command answers: the chart's figures and the page it shows. */
export interface Shown {
  /** The webview panel's title ("Presence: …"), or undefined without one. */
  panel: string | undefined;
  cells?: number;
  characters?: number;
  scenes?: number;
  figures: Record<string, unknown>;
  html: string;
}

function page(chart: Chart): string {
  return [
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';">`,
    '<style>body { background: #fff; margin: 12px; } svg { max-width: none; }</style>',
    '</head><body>',
    chart.svg,
    '</body></html>',
  ].join('\n');
}

/** One chart's panel, kept while it is open, and redrawn on save. */
export class ChartPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private run: string | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly controlRoom: ControlRoom,
    private readonly kind: ChartKind,
  ) {
    this.subscriptions.push(
      vscode.workspace.onDidSaveTextDocument((document) => {
        if (this.panel !== undefined && this.controlRoom.serves(document)) {
          void this.draw().catch(() => undefined);
        }
      }),
    );
  }

  /** Opens (or reveals) the chart and draws it; the run chart takes a run's id. */
  async show(argument?: unknown): Promise<Shown | undefined> {
    this.controlRoom.requireClient();
    if (this.kind === 'run') {
      const given = typeof argument === 'string' ? argument : undefined;
      const run = given ?? (await vscode.window.showInputBox({ prompt: 'The run to chart (run_…)', value: this.run }));
      if (run === undefined || run.trim() === '') {
        return undefined;
      }
      this.run = run.trim();
    }
    if (this.panel === undefined) {
      this.panel = vscode.window.createWebviewPanel(
        `controlRoom${PANEL_TITLES[this.kind]}`,
        PANEL_TITLES[this.kind],
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        { enableScripts: false },
      );
      this.panel.onDidDispose(() => {
        this.panel = undefined;
      });
    } else {
      this.panel.reveal(vscode.ViewColumn.Beside, true);
    }
    return this.draw();
  }

  private async draw(): Promise<Shown> {
    const chart = await this.controlRoom.serverCommand<Chart>(CHART_SERVER, { kind: this.kind, run: this.run });
    const html = page(chart);
    if (this.panel !== undefined) {
      this.panel.title = `${PANEL_TITLES[this.kind]}: ${chart.title}`;
      this.panel.webview.html = html;
    }
    const figures: Record<string, unknown> = Object.fromEntries(
      Object.entries(chart).filter(([key]) => key !== 'kind' && key !== 'title' && key !== 'svg'),
    );
    const count = (name: string): number | undefined => {
      const value = figures[name];
      return typeof value === 'number' ? value : undefined;
    };
    return {
      panel: this.panel?.title,
      cells: count('cells'),
      characters: count('characters'),
      scenes: count('scenes'),
      figures,
      html,
    };
  }

  dispose(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.panel?.dispose();
  }
}
