/**
 * The palette commands (category "Control Room"). Their ids are
 * `control-room.*`: the server's own `controlRoom.*` commands are registered
 * by the language client under their names, and these call them.
 *
 * Each command answers what the server answered (a run id, a summary), so
 * other extensions and tests can use them too.
 */

import * as vscode from 'vscode';

import { shortStep } from './activity';
import { type ControlRoom, UserError } from './controlRoom';

/** The server's commands. */
export const SERVER = {
  runRecipe: 'controlRoom.runRecipe',
  cancelRun: 'controlRoom.cancelRun',
  listRuns: 'controlRoom.listRuns',
  openRun: 'controlRoom.openRun',
  conference: 'controlRoom.conference',
  checkWorkspace: 'controlRoom.checkWorkspace',
  compile: 'controlRoom.compile',
  stats: 'controlRoom.stats',
} as const;

/** The palette's commands. */
export const COMMANDS = {
  draftScene: 'control-room.draftScene',
  conference: 'control-room.conference',
  checkWorkspace: 'control-room.checkWorkspace',
  showRuns: 'control-room.showRuns',
  cancelRun: 'control-room.cancelRun',
  openRunReport: 'control-room.openRunReport',
  compile: 'control-room.compile',
  restartServer: 'control-room.restartServer',
  showOutput: 'control-room.showOutput',
} as const;

/** The recipe that drafts a scene. */
const DRAFT_RECIPE = 'creative_draft_scene';

/** The question a conference is asked when the writer does not change it. */
const DEFAULT_QUESTION = 'What do you think of this passage?';

/** What `controlRoom.runRecipe` answers. */
export interface RunStarted {
  run_id: string;
}

/** What `controlRoom.conference` answers. */
export interface ConferenceStarted {
  conference_id: string;
}

/** What `controlRoom.checkWorkspace` answers. */
export interface CheckSummary {
  files: number;
  errors: number;
  warnings: number;
  information: number;
  hints: number;
  by_code: Record<string, number>;
}

/** One entry of `controlRoom.listRuns`. */
export interface RunSummary {
  run_id: string;
  recipe_id: string;
  label?: string | null;
  status: string;
  in_flight: boolean;
  step?: string | null;
  scene_path?: string | null;
  current_step_index?: number | null;
  total_steps?: number | null;
  created_at?: string | null;
  completed_at?: string | null;
  error?: string | null;
  report?: string | null;
}

/** Whether a run is still going (here, or by another server on the same manuscript). */
export function isRunning(run: RunSummary): boolean {
  return run.in_flight || run.status === 'running' || run.status === 'pending';
}

const STATUS_ICONS: Record<string, string> = {
  done: '$(check)',
  failed: '$(error)',
  cancelled: '$(circle-slash)',
  pending: '$(clock)',
  running: '$(sync~spin)',
};

/** A run's name for people: its label, else its recipe and scene. */
export function runTitle(run: RunSummary): string {
  if (run.label !== undefined && run.label !== null && run.label !== '') {
    return run.label;
  }
  const scene = run.scene_path?.split('/').pop()?.replace(/\.md$/, '');
  return scene === undefined ? run.recipe_id : `${run.recipe_id}: ${scene}`;
}

function when(timestamp: string | null | undefined): string | undefined {
  if (timestamp === undefined || timestamp === null || timestamp === '') {
    return undefined;
  }
  const date = new Date(timestamp);
  return Number.isNaN(date.getTime()) ? timestamp : date.toLocaleString();
}

interface RunItem extends vscode.QuickPickItem {
  run: RunSummary;
}

function runItem(run: RunSummary): RunItem {
  const icon = run.in_flight ? '$(sync~spin)' : (STATUS_ICONS[run.status] ?? '$(circle-outline)');
  const progress =
    run.total_steps !== undefined && run.total_steps !== null && run.current_step_index !== undefined && run.current_step_index !== null
      ? ` (step ${Math.min(run.current_step_index + 1, run.total_steps)} of ${run.total_steps})`
      : '';
  const step = shortStep(run.step ?? undefined);
  const description = step !== undefined ? `${run.status}: ${step}` : `${run.status}${isRunning(run) ? progress : ''}`;
  const details = [run.run_id];
  const started = when(run.created_at);
  if (started !== undefined) {
    details.push(`started ${started}`);
  }
  if (run.error !== undefined && run.error !== null && run.error !== '') {
    details.push(run.error);
  }
  return { label: `${icon} ${runTitle(run)}`, description, detail: details.join(' · '), run };
}

/**
 * Asks the writer to pick one of `runs`; `undefined` if they do not. With
 * `cancellable`, a run in progress carries a button that cancels it.
 */
function pickRun(runs: RunSummary[], placeHolder: string, cancellable = false): Promise<RunSummary | undefined> {
  const cancel: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('debug-stop'), tooltip: 'Cancel this run' };
  const pick = vscode.window.createQuickPick<RunItem>();
  pick.title = 'Control Room Runs';
  pick.placeholder = placeHolder;
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  pick.items = runs.map((run) => ({ ...runItem(run), buttons: cancellable && isRunning(run) ? [cancel] : [] }));
  return new Promise((resolve) => {
    let chosen: RunSummary | undefined;
    pick.onDidAccept(() => {
      chosen = pick.selectedItems[0]?.run;
      pick.hide();
    });
    pick.onDidTriggerItemButton(({ item }) => {
      pick.hide();
      void vscode.commands.executeCommand(COMMANDS.cancelRun, { run_id: item.run.run_id });
    });
    pick.onDidHide(() => {
      pick.dispose();
      resolve(chosen);
    });
    pick.show();
  });
}

/** The runs of the manuscript, newest first. */
async function listRuns(controlRoom: ControlRoom): Promise<RunSummary[]> {
  const runs = await controlRoom.serverCommand<RunSummary[] | null>(SERVER.listRuns);
  return runs ?? [];
}

/** A run id passed to a command (`{run_id}` or the id itself), if any. */
function runIdArgument(argument: unknown): string | undefined {
  if (typeof argument === 'string' && argument !== '') {
    return argument;
  }
  if (typeof argument === 'object' && argument !== null && 'run_id' in argument) {
    const id = argument.run_id;
    return typeof id === 'string' ? id : undefined;
  }
  return undefined;
}

/** The scene id on the cursor's line, to suggest in the input box. */
function sceneIdNear(editor: vscode.TextEditor | undefined): string | undefined {
  if (editor === undefined) {
    return undefined;
  }
  const line = editor.document.lineAt(editor.selection.active.line).text;
  return /\bSCN-[\w-]+/.exec(line)?.[0];
}

/** Runs a code action the server offered: its edit, then its command. */
async function runCodeAction(action: vscode.CodeAction | vscode.Command): Promise<unknown> {
  const run = (command: vscode.Command): Thenable<unknown> =>
    vscode.commands.executeCommand(command.command, ...((command.arguments ?? []) as unknown[]));
  if (!(action instanceof vscode.CodeAction)) {
    return run(action);
  }
  if (action.edit !== undefined && !(await vscode.workspace.applyEdit(action.edit))) {
    throw new UserError(`VS Code did not apply "${action.title}".`);
  }
  return action.command === undefined ? undefined : run(action.command);
}

/**
 * Draft Scene: the server's "Draft scene" action where the cursor is (on an
 * outline entry whose scene is missing or short), else the scene the writer
 * names. The draft arrives later, as an edit creating or filling the scene.
 */
async function draftScene(controlRoom: ControlRoom): Promise<RunStarted | undefined> {
  controlRoom.requireClient();
  const editor = vscode.window.activeTextEditor;
  if (editor !== undefined && controlRoom.serves(editor.document)) {
    const actions = await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[] | undefined>(
      'vscode.executeCodeActionProvider',
      editor.document.uri,
      editor.selection,
    );
    const draft = actions?.find((action) => action.title.startsWith('Draft scene'));
    if (draft !== undefined) {
      return (await runCodeAction(draft)) as RunStarted | undefined;
    }
  }
  const scene = await vscode.window.showInputBox({
    title: 'Draft Scene',
    prompt: 'Which scene should the agents draft? Give its id as the outline has it.',
    placeHolder: 'SCN-the-reckoning',
    value: sceneIdNear(editor),
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim() === '' ? 'Name the scene, such as SCN-the-gate.' : undefined),
  });
  if (scene === undefined) {
    return undefined;
  }
  return controlRoom.serverCommand<RunStarted>(SERVER.runRecipe, { recipe: DRAFT_RECIPE, scene: scene.trim() });
}

/**
 * Convene Conference: the agents talk over a question, about the selected
 * passage if there is one. The transcript opens when the round closes.
 */
async function conference(controlRoom: ControlRoom): Promise<ConferenceStarted | undefined> {
  const client = controlRoom.requireClient();
  const editor = vscode.window.activeTextEditor;
  const passage = editor !== undefined && controlRoom.serves(editor.document) && !editor.selection.isEmpty;
  const question = await vscode.window.showInputBox({
    title: 'Convene Conference',
    prompt: passage
      ? 'What should the agents discuss about the selected passage?'
      : 'What should the agents discuss? (Select a passage first to ask about it.)',
    value: DEFAULT_QUESTION,
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim() === '' && !passage ? 'Ask a question, or select a passage first.' : undefined),
  });
  if (question === undefined) {
    return undefined;
  }
  const argument: { question: string; uri?: string; range?: object } = { question: question.trim() };
  if (passage) {
    argument.uri = client.code2ProtocolConverter.asUri(editor.document.uri);
    argument.range = client.code2ProtocolConverter.asRange(editor.selection);
  }
  return controlRoom.serverCommand<ConferenceStarted>(SERVER.conference, argument);
}

function count(value: number, one: string, many: string): string {
  return `${value} ${value === 1 ? one : many}`;
}

/** The summary of a check, in a sentence. */
export function checkMessage(summary: CheckSummary): string {
  const files = count(summary.files, 'file', 'files');
  const found = [
    summary.errors > 0 ? count(summary.errors, 'error', 'errors') : undefined,
    summary.warnings > 0 ? count(summary.warnings, 'warning', 'warnings') : undefined,
    summary.information > 0 ? count(summary.information, 'note', 'notes') : undefined,
    summary.hints > 0 ? count(summary.hints, 'hint', 'hints') : undefined,
  ].filter((part): part is string => part !== undefined);
  return found.length === 0 ? `Checked ${files}: no problems found.` : `Checked ${files}: ${found.join(', ')}.`;
}

/** Check Workspace: the whole manuscript read again and checked; the Problems view shows the result. */
async function checkWorkspace(controlRoom: ControlRoom): Promise<CheckSummary> {
  const summary = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Control Room: checking the manuscript…' },
    () => controlRoom.serverCommand<CheckSummary>(SERVER.checkWorkspace),
  );
  void vscode.window.showInformationMessage(checkMessage(summary));
  await vscode.commands.executeCommand('workbench.actions.view.problems');
  return summary;
}

/**
 * Show Runs: every run, newest first; picking one opens its report, and the
 * button beside a run in progress cancels it.
 */
async function showRuns(controlRoom: ControlRoom): Promise<RunSummary | undefined> {
  const runs = await listRuns(controlRoom);
  if (runs.length === 0) {
    void vscode.window.showInformationMessage('No runs yet in this manuscript. Draft a scene to start one.');
    return undefined;
  }
  const run = await pickRun(runs, 'Pick a run to open its report', true);
  if (run !== undefined) {
    await controlRoom.serverCommand(SERVER.openRun, { run_id: run.run_id });
  }
  return run;
}

/** Cancel Run: stops a run in progress; nothing it has not delivered is written. */
async function cancelRun(controlRoom: ControlRoom, argument: unknown): Promise<string | undefined> {
  let runId = runIdArgument(argument);
  if (runId === undefined) {
    const running = (await listRuns(controlRoom)).filter(isRunning);
    if (running.length === 0) {
      void vscode.window.showInformationMessage('No run is in progress.');
      return undefined;
    }
    runId = (await pickRun(running, 'Pick the run to cancel'))?.run_id;
    if (runId === undefined) {
      return undefined;
    }
  }
  await controlRoom.serverCommand(SERVER.cancelRun, { run_id: runId });
  void vscode.window.setStatusBarMessage(`Control Room: cancelling ${runId}`, 5000);
  return runId;
}

/** Open Run Report: the report of a run (its record until it has one). */
async function openRunReport(controlRoom: ControlRoom, argument: unknown): Promise<string | undefined> {
  let runId = runIdArgument(argument);
  if (runId === undefined) {
    const runs = await listRuns(controlRoom);
    if (runs.length === 0) {
      void vscode.window.showInformationMessage('No runs yet in this manuscript, so no reports.');
      return undefined;
    }
    const withReport = runs.filter((run) => run.report !== undefined && run.report !== null);
    runId = (await pickRun(withReport.length > 0 ? withReport : runs, 'Pick a run to open its report'))?.run_id;
    if (runId === undefined) {
      return undefined;
    }
  }
  await controlRoom.serverCommand(SERVER.openRun, { run_id: runId });
  return runId;
}

/** What `controlRoom.compile` answers. */
export interface Compiled {
  format: string;
  output: string;
  uri?: string | null;
  title: string;
  scenes: number;
  words: number;
  missing: string[];
  unlisted: string[];
  converter?: string | null;
}

interface FormatItem extends vscode.QuickPickItem {
  format: string;
}

const FORMATS: FormatItem[] = [
  { label: 'DOCX', description: 'standard manuscript format, to send', format: 'docx' },
  { label: 'EPUB', description: 'an e-book', format: 'epub' },
  { label: 'PDF', description: 'needs a PDF engine (LaTeX or WeasyPrint)', format: 'pdf' },
  { label: 'Markdown', description: 'one file, no pandoc needed', format: 'md' },
];

/** The sentence that says what a compile wrote. */
export function compiledMessage(compiled: Compiled): string {
  const left = [...compiled.missing, ...compiled.unlisted];
  const leftOut = left.length > 0 ? ` Left out: ${left.join(', ')}.` : '';
  return `Compiled “${compiled.title}” (${count(compiled.scenes, 'scene', 'scenes')}, ${count(compiled.words, 'word', 'words')}) to ${compiled.output}.${leftOut}`;
}

/**
 * Compile Manuscript: the scenes in outline order as one DOCX, EPUB, PDF or
 * Markdown file (`{format, output}` as an argument skips the questions).
 */
async function compile(controlRoom: ControlRoom, argument: unknown): Promise<Compiled | undefined> {
  controlRoom.requireClient();
  let request: { format?: string; output?: string } = {};
  if (typeof argument === 'object' && argument !== null && 'format' in argument) {
    request = argument as { format?: string; output?: string };
  } else {
    const picked = await vscode.window.showQuickPick(FORMATS, {
      title: 'Compile Manuscript',
      placeHolder: 'Compile the manuscript to…',
    });
    if (picked === undefined) {
      return undefined;
    }
    request = { format: picked.format };
  }
  const compiled = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Control Room: compiling the manuscript…' },
    () => controlRoom.serverCommand<Compiled>(SERVER.compile, request),
  );
  const uri = vscode.Uri.file(compiled.output);
  void vscode.window.showInformationMessage(compiledMessage(compiled), 'Open', 'Show in Folder').then((choice) => {
    if (choice === 'Open') {
      void (compiled.format === 'md' ? vscode.window.showTextDocument(uri) : vscode.env.openExternal(uri));
    } else if (choice === 'Show in Folder') {
      void vscode.commands.executeCommand('revealFileInOS', uri);
    }
  });
  return compiled;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Registers the palette commands; each shows its failure to the writer and answers `undefined`. */
export function registerCommands(controlRoom: ControlRoom, output: vscode.OutputChannel): vscode.Disposable[] {
  const handlers: Record<string, (argument: unknown) => Promise<unknown>> = {
    [COMMANDS.draftScene]: () => draftScene(controlRoom),
    [COMMANDS.conference]: () => conference(controlRoom),
    [COMMANDS.checkWorkspace]: () => checkWorkspace(controlRoom),
    [COMMANDS.showRuns]: () => showRuns(controlRoom),
    [COMMANDS.cancelRun]: (argument) => cancelRun(controlRoom, argument),
    [COMMANDS.openRunReport]: (argument) => openRunReport(controlRoom, argument),
    [COMMANDS.compile]: (argument) => compile(controlRoom, argument),
    [COMMANDS.restartServer]: () => controlRoom.restart(),
    [COMMANDS.showOutput]: () => Promise.resolve(output.show()),
  };
  return Object.entries(handlers).map(([id, handler]) =>
    vscode.commands.registerCommand(id, async (argument: unknown) => {
      try {
        return await handler(argument);
      } catch (error) {
        const message = messageOf(error);
        output.appendLine(`${id}: ${message}`);
        void vscode.window.showErrorMessage(`Control Room: ${message}`);
        return undefined;
      }
    }),
  );
}
