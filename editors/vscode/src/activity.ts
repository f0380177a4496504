/**
 * What the server is working on: recipe runs and conferences, followed
 * through their `$/progress` notifications.
 *
 * The server names the progress of a run `control-room/run/<run_id>` and of
 * a conference `control-room/conference/<id>` (other tokens, such as the
 * indexing's `control-room/index`, are not followed). Nothing here imports
 * `vscode`, so the bookkeeping can be tested on its own.
 */

/** The kinds of work followed. */
export type ActivityKind = 'run' | 'conference';

/** One run or conference in progress. */
export interface Activity {
  readonly token: string;
  readonly kind: ActivityKind;
  /** The run id or conference id. */
  readonly id: string;
  /** What the server called it when it began ("Draft scene: SCN-the-gate"). */
  readonly title: string;
  /** Its latest step, as the server words it ("[2/5] draft (writer)"). */
  readonly message?: string;
  readonly percentage?: number;
}

/** The `$/progress` values of work done progress, as the protocol has them. */
export type ProgressValue =
  | { kind: 'begin'; title: string; message?: string; percentage?: number; cancellable?: boolean }
  | { kind: 'report'; message?: string; percentage?: number; cancellable?: boolean }
  | { kind: 'end'; message?: string };

const TOKEN = /^control-room\/(run|conference)\/(.+)$/;

/** The kind and id a progress token names, if it is a run's or a conference's. */
export function parseToken(token: string | number): { kind: ActivityKind; id: string } | undefined {
  if (typeof token !== 'string') {
    return undefined;
  }
  const match = TOKEN.exec(token);
  if (match === null) {
    return undefined;
  }
  return { kind: match[1] as ActivityKind, id: match[2] };
}

/** The runs and conferences in progress, updated from `$/progress`. */
export class ActivityTracker {
  private readonly activities = new Map<string, Activity>();
  private readonly listeners = new Set<(activities: readonly Activity[]) => void>();

  /** Everything in progress, oldest first. */
  get current(): readonly Activity[] {
    return [...this.activities.values()];
  }

  /** Calls `listener` after every change; returns a function that stops it. */
  onDidChange(listener: (activities: readonly Activity[]) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Takes one `$/progress` value; other tokens than runs' and conferences' are ignored. */
  handle(token: string | number, value: ProgressValue): void {
    const named = parseToken(token);
    if (named === undefined) {
      return;
    }
    const key = String(token);
    switch (value.kind) {
      case 'begin':
        this.activities.set(key, {
          token: key,
          ...named,
          title: value.title,
          message: value.message,
          percentage: value.percentage,
        });
        break;
      case 'report': {
        const known = this.activities.get(key);
        if (known === undefined) {
          // A report without its begin (the begin came before we listened).
          return;
        }
        this.activities.set(key, {
          ...known,
          message: value.message ?? known.message,
          percentage: value.percentage ?? known.percentage,
        });
        break;
      }
      case 'end':
        if (!this.activities.delete(key)) {
          return;
        }
        break;
    }
    this.fire();
  }

  /** Forgets everything (the server stopped: its work stopped with it). */
  clear(): void {
    if (this.activities.size > 0) {
      this.activities.clear();
      this.fire();
    }
  }

  private fire(): void {
    const current = this.current;
    for (const listener of this.listeners) {
      listener(current);
    }
  }
}

const STEP = /^\[(\d+)\/(\d+)\]\s+(.+?)\s+\(([^)]+)\)$/;

/**
 * A step message made short for the status bar: the server's
 * "[2/5] draft (writer)" becomes "writer: draft 2/5"; anything else is kept.
 */
export function shortStep(message: string | undefined): string | undefined {
  if (message === undefined || message.trim() === '') {
    return undefined;
  }
  const match = STEP.exec(message.trim());
  if (match === null) {
    return message.trim();
  }
  const [, index, total, step, actor] = match;
  return `${actor}: ${step} ${index}/${total}`;
}

/** One line for an activity: "Draft scene: SCN-the-gate (writer: draft 2/5)". */
export function describe(activity: Activity): string {
  const step = shortStep(activity.message);
  return step === undefined ? activity.title : `${activity.title} (${step})`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** The status bar's text and tooltip, or `undefined` when nothing runs. */
export function statusText(activities: readonly Activity[]): { text: string; tooltip: string } | undefined {
  if (activities.length === 0) {
    return undefined;
  }
  const tooltip = activities.map(describe).join('\n') + '\n\nClick to see the runs.';
  if (activities.length === 1) {
    return { text: `$(sync~spin) ${describe(activities[0])}`, tooltip };
  }
  const runs = activities.filter((activity) => activity.kind === 'run').length;
  const conferences = activities.length - runs;
  const parts = [];
  if (runs > 0) {
    parts.push(plural(runs, 'run'));
  }
  if (conferences > 0) {
    parts.push(plural(conferences, 'conference'));
  }
  return { text: `$(sync~spin) ${parts.join(', ')}`, tooltip };
}
