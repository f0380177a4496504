/**
 * The words line of the status bar, from what the server's
 * `controlRoom.stats` answers. Nothing here imports `vscode`, so it can be
 * tested on its own.
 */

/** Words against a target. */
export interface Counted {
  words: number;
  target?: number | null;
  label: string;
}

/** What `controlRoom.stats` answers. */
export interface WordStats {
  total: Counted;
  /** Words written since the server started (net: cuts count against). */
  session?: number | null;
  /** Words written today, from git; `null` outside a git repository. */
  today?: number | null;
  history_unavailable?: string | null;
  daily_target?: number | null;
  /** The scene in the active editor, if it is one. */
  scene?: (Counted & { id: string }) | null;
}

/** `1234` → `1,234`. */
export function grouped(n: number): string {
  return Math.trunc(n).toLocaleString('en-US');
}

/** `+350`, `−20`, `0`. */
export function signed(n: number): string {
  if (n === 0) {
    return '0';
  }
  return n > 0 ? `+${grouped(n)}` : `−${grouped(-n)}`;
}

function short(counted: Counted): string {
  const target = counted.target ?? 0;
  return target > 0 ? `${grouped(counted.words)}/${grouped(target)}` : grouped(counted.words);
}

/** The status bar's text and tooltip. */
export function wordsStatus(stats: WordStats): { text: string; tooltip: string } {
  const parts = [`$(book) ${short(stats.total)}`];
  const tooltip = [`Manuscript: ${stats.total.label}`];
  if (stats.scene !== undefined && stats.scene !== null) {
    parts.unshift(`$(file) ${short(stats.scene)}`);
    tooltip.unshift(`${stats.scene.id}: ${stats.scene.label}`);
  }
  if (stats.session !== undefined && stats.session !== null) {
    parts.push(`${signed(stats.session)} this session`);
    tooltip.push(`This session: ${signed(stats.session)} words`);
  }
  if (stats.today !== undefined && stats.today !== null) {
    const daily = stats.daily_target ?? 0;
    const goal = daily > 0 ? ` of ${grouped(daily)}` : '';
    parts.push(`${signed(stats.today)}${goal} today`);
    tooltip.push(`Today: ${signed(stats.today)} words${goal} (from git, with what is not committed yet)`);
  } else if (stats.history_unavailable !== undefined && stats.history_unavailable !== null) {
    tooltip.push(`Words per day need git history: ${stats.history_unavailable}`);
  }
  return { text: parts.join(' · '), tooltip: tooltip.join('\n') };
}
