/**
 * The presence chart in VS Code: "Show Presence Chart" opens who is in which
 * scene (the server's `controlRoom.chart`, an SVG) in a webview beside the
 * editor, drawn again whenever a file of the manuscript is saved. The
 * webview runs no script: it shows the SVG and its tooltips only.
 */

import * as vscode from 'vscode';

import type { ControlRoom } from './controlRoom';

/** The server's command and the palette's. */
export const CHART_SERVER = 'controlRoom.chart';
export const CHART_COMMAND = 'control-room.showPresenceChart';

/** What `controlRoom.chart` answers. */
export interface Chart {
  kind: string;
  title: string;
  svg: string;
  cells: number;
  characters: number;
  scenes: number;
}

/** What the command answers: the chart's figures and the page it shows. */
export interface Shown {
  /** The webview panel's title ("Presence: …"), or undefined without one. */
  panel: string | undefined;
  cells: number;
  characters: number;
  scenes: number;
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

/** The panel, kept while it is open, and redrawn on save. */
export class PresenceChart implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly controlRoom: ControlRoom) {
    this.subscriptions.push(
      vscode.workspace.onDidSaveTextDocument((document) => {
        if (this.panel !== undefined && this.controlRoom.serves(document)) {
          void this.draw().catch(() => undefined);
        }
      }),
    );
  }

  /** Opens (or reveals) the chart and draws it. */
  async show(): Promise<Shown> {
    this.controlRoom.requireClient();
    if (this.panel === undefined) {
      this.panel = vscode.window.createWebviewPanel(
        'controlRoomPresence',
        'Presence',
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
    const chart = await this.controlRoom.serverCommand<Chart>(CHART_SERVER, { kind: 'presence' });
    const html = page(chart);
    if (this.panel !== undefined) {
      this.panel.title = `Presence: ${chart.title}`;
      this.panel.webview.html = html;
    }
    return { panel: this.panel?.title, cells: chart.cells, characters: chart.characters, scenes: chart.scenes, html };
  }

  dispose(): void {
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
    this.panel?.dispose();
  }
}
