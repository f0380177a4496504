// Test-only extension: exercises Control Room in a running VS Code and
// writes what it observed to $CONTROL_ROOM_E2E_REPORT (JSON). It only
// observes and waits; ../assert-report.mjs holds the expectations.
//
// The workspace is a copy of examples/salt-road; the runner's user settings
// point the server at a fake model and set `orphan-scene` to error.

'use strict';

const fs = require('node:fs');
const path = require('node:path');
const vscode = require('vscode');

const REPORT = process.env.CONTROL_ROOM_E2E_REPORT;
const EXTENSION_ID = 'control-room.control-room';
/** How long to wait for the server's answers, in milliseconds. */
const TIMEOUT = Number(process.env.CONTROL_ROOM_E2E_TIMEOUT_MS || 60000);

const PALETTE_COMMANDS = [
  'control-room.newManuscript',
  'control-room.importNovel',
  'control-room.draftScene',
  'control-room.conference',
  'control-room.checkWorkspace',
  'control-room.showRuns',
  'control-room.cancelRun',
  'control-room.openRunReport',
  'control-room.compile',
  'control-room.askForeman',
  'control-room.advanceMode',
  'control-room.voiceTournament',
  'control-room.lockVoice',
  'control-room.showPresenceChart',
  'control-room.showTimelineChart',
  'control-room.showBeatChart',
  'control-room.showRunChart',
  'control-room.showHealth',
  'control-room.overrideHealth',
];
const SERVER_COMMANDS = [
  'controlRoom.runRecipe',
  'controlRoom.cancelRun',
  'controlRoom.listRuns',
  'controlRoom.openRun',
  'controlRoom.dismissFinding',
  'controlRoom.conference',
  'controlRoom.checkWorkspace',
  'controlRoom.compile',
  'controlRoom.askForeman',
  'controlRoom.mode',
  'controlRoom.voice.tournament',
  'controlRoom.voice.pick',
];

const zlib = require('node:zlib');

/** The entry `name` of the zip file at `file`, inflated, or undefined. */
function unzipEntry(file, name) {
  const zip = fs.readFileSync(file);
  // The end of central directory record: its signature, searched from the end.
  let end = zip.length - 22;
  while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) {
    end -= 1;
  }
  if (end < 0) {
    return undefined;
  }
  const entries = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  for (let i = 0; i < entries; i += 1) {
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    if (zip.toString('utf8', at + 46, at + 46 + nameLength) === name) {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + size);
      return (method === 8 ? zlib.inflateRawSync(data) : data).toString('utf8');
    }
    at += 46 + nameLength + extraLength + commentLength;
  }
  return undefined;
}

/** The text of a DOCX's word/document.xml: one line a paragraph, no markup. */
function docxText(xml) {
  return xml
    .replace(/<\/w:p>/g, '\n')
    .replace(/<w:tab\/>/g, '\t')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      found.push(...filesUnder(full).map((file) => `${entry.name}/${file}`));
    } else {
      found.push(entry.name);
    }
  }
  return found.sort();
}

/** The outline's scenes that have a file, in order, each with the first words of its prose. */
function outlineScenes() {
  const outline = fs.readFileSync(fileUri('Story/SCN-outline.md').fsPath, 'utf8');
  const scenes = [];
  for (const match of outline.matchAll(/^\s*[-*]\s+(SCN-[\w-]+)/gm)) {
    const file = fileUri(`Story/Scenes/${match[1]}.md`).fsPath;
    if (!fs.existsSync(file)) {
      continue;
    }
    const body = fs.readFileSync(file, 'utf8').replace(/^---\n[\s\S]*?\n---\n/, '');
    const prose = body.split('\n').find((line) => line.trim() !== '' && !line.startsWith('#'));
    scenes.push({ id: match[1], firstWords: (prose || '').trim().split(/\s+/).slice(0, 5).join(' ') });
  }
  return scenes;
}

/**
 * Runs a palette command that asks with a quick pick, and accepts the item
 * the pick starts on (as Enter would), once the pick is shown.
 */
async function acceptingFirstPick(command) {
  let settled = false;
  const pending = Promise.resolve(vscode.commands.executeCommand(command)).finally(() => {
    settled = true;
  });
  const deadline = Date.now() + TIMEOUT;
  while (!settled && Date.now() < deadline) {
    await sleep(500);
    if (!settled) {
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    }
  }
  return pending;
}

const SEVERITY = ['error', 'warning', 'information', 'hint'];

const report = { started: new Date().toISOString(), finished: false, steps: [], facts: {}, log: [] };

function log(message) {
  const line = `${new Date().toISOString()} ${message}`;
  report.log.push(line);
  console.log(`[control-room probe] ${message}`);
}

function writeReport() {
  const temporary = `${REPORT}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify(report, null, 2));
  fs.renameSync(temporary, REPORT);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it answers something truthy; throws after `timeout`. */
async function waitFor(what, probe, timeout = TIMEOUT) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await probe();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    }
    await sleep(200);
  }
}

/** Runs one named step, recording its outcome; a failed step does not stop the next. */
async function step(name, body) {
  const start = Date.now();
  log(`step ${name}`);
  try {
    await body();
    report.steps.push({ name, ok: true, ms: Date.now() - start });
  } catch (error) {
    log(`step ${name} failed: ${error && error.stack ? error.stack : error}`);
    report.steps.push({ name, ok: false, ms: Date.now() - start, error: String(error && error.message ? error.message : error) });
  }
  writeReport();
}

function root() {
  return vscode.workspace.workspaceFolders[0].uri;
}

function fileUri(relative) {
  return vscode.Uri.joinPath(root(), ...relative.split('/'));
}

function codeOf(diagnostic) {
  const code = diagnostic.code;
  return typeof code === 'object' && code !== null ? String(code.value) : String(code);
}

/** A file's diagnostics from Control Room, in plain data. */
function diagnosticsOf(uri) {
  return vscode.languages
    .getDiagnostics(uri)
    .filter((diagnostic) => diagnostic.source === 'control-room')
    .map((diagnostic) => ({
      code: codeOf(diagnostic),
      severity: SEVERITY[diagnostic.severity],
      line: diagnostic.range.start.line,
      character: diagnostic.range.start.character,
      message: diagnostic.message,
    }));
}

function codesOf(uri) {
  return diagnosticsOf(uri).map((diagnostic) => diagnostic.code);
}

async function open(relative) {
  const document = await vscode.workspace.openTextDocument(fileUri(relative));
  await vscode.window.showTextDocument(document, { preview: false });
  return document;
}

/**
 * A document's semantic tokens, as VS Code's own provider command answers
 * them, decoded with the legend: line, character (UTF-16), the text, the
 * type and the modifiers.
 */
function decodeTokens(document, tokens, legend) {
  const decoded = [];
  let line = 0;
  let character = 0;
  const data = tokens.data;
  for (let i = 0; i + 4 < data.length; i += 5) {
    line += data[i];
    character = data[i] === 0 ? character + data[i + 1] : data[i + 1];
    const modifiers = legend.tokenModifiers.filter((_, bit) => (data[i + 4] >> bit) & 1);
    decoded.push({
      line,
      character,
      text: document.lineAt(line).text.slice(character, character + data[i + 2]),
      type: legend.tokenTypes[data[i + 3]],
      modifiers,
    });
  }
  return decoded;
}

/** The semantic tokens of a scene once the server has its index (a token is `deprecated`, or `until` holds). */
async function semanticTokensOf(relative, until) {
  const document = await open(relative);
  const legend = await waitFor('the semantic tokens legend', () =>
    vscode.commands.executeCommand('vscode.provideDocumentSemanticTokensLegend', document.uri),
  );
  return waitFor(`semantic tokens of ${relative}`, async () => {
    const tokens = await vscode.commands.executeCommand('vscode.provideDocumentSemanticTokens', document.uri);
    if (!tokens) {
      return undefined;
    }
    const decoded = decodeTokens(document, tokens, legend);
    return until(decoded) ? { legend: { tokenTypes: legend.tokenTypes, tokenModifiers: legend.tokenModifiers }, tokens: decoded } : undefined;
  });
}

/** Opens a file and waits until its diagnostics include `code`. */
async function diagnosticsWith(relative, code) {
  const document = await open(relative);
  await waitFor(`${code} in ${relative}`, () => codesOf(document.uri).includes(code));
  return diagnosticsOf(document.uri);
}

async function run() {
  let api;

  await step('activate', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    report.facts.extensionFound = extension !== undefined;
    if (extension === undefined) {
      throw new Error(`${EXTENSION_ID} is not installed`);
    }
    api = await extension.activate();
    await api.ready();
    await waitFor('the server to run', () => api.folder() !== undefined, 30000);
    report.facts.servedFolder = api.folder().fsPath;
    report.facts.serverPath = api.serverPath();
    report.facts.workspaceFolder = root().fsPath;
    report.facts.contributedCommands = extension.packageJSON.contributes.commands.map((command) => ({
      command: command.command,
      title: command.title,
      category: command.category,
    }));
  });

  await step('commands', async () => {
    const registered = new Set(await vscode.commands.getCommands(true));
    report.facts.paletteCommands = PALETTE_COMMANDS.filter((id) => registered.has(id));
    report.facts.serverCommands = SERVER_COMMANDS.filter((id) => registered.has(id));
  });

  await step('new-manuscript', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    report.facts.walkthroughs = (extension.packageJSON.contributes.walkthroughs || []).map((walkthrough) => ({
      id: walkthrough.id,
      steps: walkthrough.steps.map((step) => step.id),
      media: walkthrough.steps.map((step) => fs.existsSync(path.join(extension.extensionPath, step.media.markdown))),
    }));
    const parent = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'control-room-new-'));
    const folder = path.join(parent, 'The Lighthouse');
    report.facts.newManuscript = await vscode.commands.executeCommand('control-room.newManuscript', { folder, open: false });
    report.facts.newManuscriptOutline = fs.existsSync(path.join(folder, 'Story', 'SCN-outline.md'))
      ? fs.readFileSync(path.join(folder, 'Story', 'SCN-outline.md'), 'utf8').split('\n')[0]
      : null;
    // The folder is not empty now: a second New Manuscript there is refused and changes nothing.
    report.facts.newManuscriptAgain = (await vscode.commands.executeCommand('control-room.newManuscript', { folder, open: false })) ?? null;
    report.facts.newManuscriptFiles = fs.readdirSync(folder).sort();
    // Import a Novel: a small book of one file, beside which the manuscript is made.
    const book = path.join(parent, 'The Keeper.md');
    fs.writeFileSync(book, '# The Keeper\n\n## Chapter 1\n\nAda came.\n\n* * *\n\nShe slept.\n\n## Chapter 2\n\nMorning.\n');
    report.facts.imported = await vscode.commands.executeCommand('control-room.importNovel', { source: book, open: false });
    const importedOutline = path.join(parent, 'The Keeper', 'Story', 'SCN-outline.md');
    report.facts.importedOutline = fs.existsSync(importedOutline)
      ? fs.readFileSync(importedOutline, 'utf8').split('\n').filter((line) => line.startsWith('#') || line.startsWith('- '))
      : null;
  });

  await step('outline-view', async () => {
    // The side bar's Outline, opened, as the writer sees it.
    await vscode.commands.executeCommand('workbench.view.extension.controlRoom');
    report.facts.outline = await api.outlineItems();
    report.facts.cast = await api.castItems();
    report.facts.mentionsOfKael = await api.showMentionsOf('Kael Maren');
  });

  await step('diagnostics', async () => {
    report.facts.saltmaster = await diagnosticsWith('Story/Scenes/SCN-the-saltmaster.md', 'name-typo');
    report.facts.highTide = await diagnosticsWith('Story/Scenes/SCN-the-high-tide.md', 'dead-character');
    // The user settings make orphan-scene an error (it is a warning by default).
    report.facts.deletedDream = await diagnosticsWith('Story/Scenes/SCN-deleted-dream.md', 'orphan-scene');
  });

  await step('semantic-tokens', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    report.facts.contributedTokenTypes = (extension.packageJSON.contributes.semanticTokenTypes || []).map((type) => ({
      id: type.id,
      superType: type.superType,
    }));
    const named = (tokens, text) => tokens.filter((token) => token.text === text);
    // After Old Tomas's death (SCN-the-fall): struck through.
    const highTide = await semanticTokensOf('Story/Scenes/SCN-the-high-tide.md', (tokens) =>
      tokens.some((token) => token.modifiers.includes('deprecated')),
    );
    report.facts.semanticLegend = highTide.legend;
    report.facts.highTideTokens = {
      tomas: named(highTide.tokens, 'Tomas'),
      kael: named(highTide.tokens, 'Kael').slice(0, 1),
      fortress: named(highTide.tokens, 'the fortress'),
      dialogue: highTide.tokens.filter((token) => token.type === 'dialogue').slice(0, 2),
      dead: highTide.tokens.filter((token) => token.modifiers.includes('deprecated')).map((token) => token.text),
    };
    // Before it: alive.
    const saltmaster = await semanticTokensOf('Story/Scenes/SCN-the-saltmaster.md', (tokens) =>
      tokens.some((token) => token.text === 'Tomas'),
    );
    report.facts.saltmasterTomas = named(saltmaster.tokens, 'Tomas');
  });

  await step('inlay-hints', async () => {
    // VS Code asks for the hints of what is in view; its own provider
    // command asks the same way, for the whole scene.
    const relative = 'Story/Scenes/SCN-the-gate.md';
    const document = await open(relative);
    const whole = new vscode.Range(0, 0, document.lineCount, 0);
    const labelOf = (hint) => (typeof hint.label === 'string' ? hint.label : hint.label.map((part) => part.value).join(''));
    const hints = await waitFor(`inlay hints of ${relative}`, async () => {
      const found = await vscode.commands.executeCommand('vscode.executeInlayHintProvider', document.uri, whole);
      return found && found.length > 0 ? found : undefined;
    });
    report.facts.gateInlayHints = hints.map((hint) => ({
      label: labelOf(hint),
      line: hint.position.line,
      character: hint.position.character,
      lineText: document.lineAt(hint.position.line).text,
    }));
    const outline = await open('Story/SCN-outline.md');
    const outlineHints = await vscode.commands.executeCommand(
      'vscode.executeInlayHintProvider',
      outline.uri,
      new vscode.Range(0, 0, outline.lineCount, 0),
    );
    report.facts.outlineInlayHints = (outlineHints || []).map((hint) => ({
      label: labelOf(hint),
      line: hint.position.line,
      character: hint.position.character,
      before: outline.lineAt(hint.position.line).text.slice(0, hint.position.character),
    }));
  });

  await step('quick-fix', async () => {
    const document = await open('Story/Scenes/SCN-the-saltmaster.md');
    const typo = vscode.languages
      .getDiagnostics(document.uri)
      .find((diagnostic) => codeOf(diagnostic) === 'name-typo');
    if (typo === undefined) {
      throw new Error('no name-typo diagnostic to fix');
    }
    const line = typo.range.start.line;
    report.facts.typoWord = document.getText(typo.range);
    report.facts.lineBeforeFix = document.lineAt(line).text;
    const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', document.uri, typo.range);
    report.facts.quickFixTitles = (actions || []).map((action) => action.title);
    // VS Code hands back the actions without their diagnostics: the fix for
    // the typo is the quick fix whose edit replaces the typo's range.
    const fix = (actions || []).find(
      (action) =>
        action.kind !== undefined &&
        vscode.CodeActionKind.QuickFix.contains(action.kind) &&
        action.edit !== undefined &&
        action.edit.get(document.uri).some((edit) => edit.range.isEqual(typo.range)),
    );
    if (fix === undefined) {
      throw new Error(`no quick fix edits the typo's range among ${JSON.stringify(report.facts.quickFixTitles)}`);
    }
    report.facts.quickFixTitle = fix.title;
    report.facts.quickFixApplied = await vscode.workspace.applyEdit(fix.edit);
    report.facts.lineAfterFix = document.lineAt(line).text;
    await document.save();
    await waitFor('name-typo to go after the fix', () => !codesOf(document.uri).includes('name-typo'), 20000).catch(
      (error) => log(String(error)),
    );
    report.facts.saltmasterAfterFix = diagnosticsOf(document.uri);
  });

  await step('severity-setting-change', async () => {
    const vigil = await diagnosticsWith('Story/Scenes/SCN-the-vigil.md', 'timeline-order');
    report.facts.vigilBefore = vigil;
    const config = vscode.workspace.getConfiguration('controlRoom');
    await config.update(
      'diagnostics.severity',
      { 'orphan-scene': 'error', 'timeline-order': 'off' },
      vscode.ConfigurationTarget.Global,
    );
    const uri = fileUri('Story/Scenes/SCN-the-vigil.md');
    await waitFor('timeline-order to be turned off', () => !codesOf(uri).includes('timeline-order'), 20000).catch(
      (error) => log(String(error)),
    );
    report.facts.vigilAfter = diagnosticsOf(uri);
  });

  await step('check-workspace', async () => {
    report.facts.checkSummary = await vscode.commands.executeCommand('control-room.checkWorkspace');
    const byFile = {};
    for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) {
      const ours = diagnostics.filter((diagnostic) => diagnostic.source === 'control-room').map(codeOf);
      if (ours.length > 0) {
        byFile[path.relative(root().fsPath, uri.fsPath).split(path.sep).join('/')] = ours;
      }
    }
    report.facts.workspaceDiagnostics = byFile;
  });

  await step('draft-scene', async () => {
    const outline = await open('Story/SCN-outline.md');
    const editor = vscode.window.activeTextEditor;
    const line = outline.getText().split('\n').findIndex((text) => /^\s*[-*]\s+SCN-the-reckoning\b/.test(text));
    if (line < 0) {
      throw new Error('the outline has no SCN-the-reckoning entry');
    }
    report.facts.outlineBeforeDraft = diagnosticsOf(outline.uri);
    const column = outline.lineAt(line).text.indexOf('SCN-the-reckoning') + 4;
    editor.selection = new vscode.Selection(line, column, line, column);
    const statusTexts = [];
    const subscription = api.onDidChangeStatusBar((text) => statusTexts.push(text === undefined ? null : text));
    report.facts.statusBarTexts = statusTexts;
    const sceneUri = fileUri('Story/Scenes/SCN-the-reckoning.md');
    try {
      report.facts.draftResult = await vscode.commands.executeCommand('control-room.draftScene');
      // The run is over when its progress ends and the scene has arrived.
      const scene = await waitFor('the drafted scene', () =>
        vscode.workspace.textDocuments.find(
          (document) => document.uri.toString() === sceneUri.toString() && document.getText().trim() !== '',
        ),
      );
      await waitFor('the run to end', () => api.activities().length === 0);
      report.facts.sceneText = scene.getText();
      report.facts.sceneExistsOnDisk = fs.existsSync(sceneUri.fsPath);
      report.facts.statusBarAfter = api.statusBarText() === undefined ? null : api.statusBarText();
    } finally {
      subscription.dispose();
    }
    await waitFor('missing-scene to go from the outline', () => !codesOf(outline.uri).includes('missing-scene'), 20000).catch(
      (error) => log(String(error)),
    );
    report.facts.outlineAfterDraft = diagnosticsOf(outline.uri);
  });

  await step('runs', async () => {
    const runs = await vscode.commands.executeCommand('controlRoom.listRuns');
    report.facts.runs = (runs || []).map((run) => ({
      run_id: run.run_id,
      recipe_id: run.recipe_id,
      status: run.status,
      in_flight: run.in_flight,
      report: run.report,
    }));
    const runId = report.facts.draftResult && report.facts.draftResult.run_id;
    if (typeof runId !== 'string') {
      throw new Error('no run id from Draft Scene');
    }
    report.facts.runItems = await api.runItems();
    report.facts.openedRun = await vscode.commands.executeCommand('control-room.openRunReport', { run_id: runId });
    const editor = await waitFor('the run report to open', () => {
      const active = vscode.window.activeTextEditor;
      return active !== undefined && active.document.uri.fsPath.includes(runId) ? active : undefined;
    });
    report.facts.reportPath = path.relative(root().fsPath, editor.document.uri.fsPath).split(path.sep).join('/');
    report.facts.reportText = editor.document.getText().slice(0, 4000);
  });

  await step('cancel-run', async () => {
    // The fake model holds its answers, so the run waits on its first agent.
    const base = new URL(vscode.workspace.getConfiguration('controlRoom').get('llm.baseUrl'));
    const control = (what) => fetch(new URL(`/control/${what}`, base), { method: 'POST' });
    const gate = fileUri('Story/Scenes/SCN-the-gate.md').fsPath;
    report.facts.gateBefore = fs.readFileSync(gate, 'utf8');
    await control('hold');
    try {
      const started = await vscode.commands.executeCommand('controlRoom.runRecipe', {
        recipe: 'creative_draft_scene',
        scene: 'SCN-the-gate',
      });
      const runId = started.run_id;
      report.facts.heldRunId = runId;
      await waitFor('the run to wait on the planner', () =>
        api.activities().some((activity) => activity.id === runId && /planner/.test(activity.message || '')),
      );
      report.facts.statusWhileHeld = api.statusBarText() === undefined ? null : api.statusBarText();
      report.facts.runItemsWhileHeld = await api.runItems();
      report.facts.cancelAnswer = await vscode.commands.executeCommand('control-room.cancelRun', { run_id: runId });
      await waitFor('the cancelled run to end', () => !api.activities().some((activity) => activity.id === runId));
      const runs = await vscode.commands.executeCommand('controlRoom.listRuns');
      const run = (runs || []).find((entry) => entry.run_id === runId);
      report.facts.cancelledStatus = run === undefined ? null : run.status;
    } finally {
      await control('release');
    }
    // Give a wrongly delivered draft the time to arrive before looking.
    await sleep(1000);
    report.facts.gateAfter = fs.readFileSync(gate, 'utf8');
    const open = vscode.workspace.textDocuments.find((document) => document.uri.fsPath === gate);
    report.facts.gateDirty = open === undefined ? false : open.isDirty;
  });

  await step('compile', async () => {
    const story = fileUri('Story').fsPath;
    report.facts.storyFilesBeforeCompile = filesUnder(story);
    report.facts.outlineScenes = outlineScenes();
    const relative = (file) => path.relative(root().fsPath, file).split(path.sep).join('/');
    // As a writer would: Compile Manuscript from the palette, and Enter on
    // the quick pick's first format, DOCX.
    const docx = await acceptingFirstPick('control-room.compile');
    report.facts.compiledDocx = docx === undefined ? null : {
      format: docx.format,
      output: relative(docx.output),
      scenes: docx.scenes,
      missing: docx.missing,
      unlisted: docx.unlisted,
      exists: fs.existsSync(docx.output),
    };
    if (docx !== undefined && fs.existsSync(docx.output)) {
      report.facts.compiledDocx.isZip = fs.readFileSync(docx.output).subarray(0, 4).equals(Buffer.from('PK\x03\x04', 'latin1'));
      const xml = unzipEntry(docx.output, 'word/document.xml');
      report.facts.compiledDocx.text = xml === undefined ? null : docxText(xml);
    }
    // The same command with its format given, as other extensions call it.
    const md = await vscode.commands.executeCommand('control-room.compile', { format: 'md' });
    report.facts.compiledMarkdown = md === undefined ? null : {
      format: md.format,
      output: relative(md.output),
      scenes: md.scenes,
      exists: fs.existsSync(md.output),
      text: fs.existsSync(md.output) ? fs.readFileSync(md.output, 'utf8') : null,
    };
    report.facts.storyFilesAfterCompile = filesUnder(story);
  });

  await step('foreman', async () => {
    // The mode in the status bar: the example's Story Bible is complete.
    report.facts.modeText = (await api.modeText()) ?? null;
    // As a writer would, with the message given to the palette command.
    const desk = fileUri('Notes/foreman.md').fsPath;
    report.facts.askAnswer = await vscode.commands.executeCommand('control-room.askForeman', {
      message: 'E2E: what comes after the Story Bible?',
    });
    // The reply streams into the desk: read it as the writer sees it (the
    // open document, else the file).
    const deskText = () => {
      const open = vscode.workspace.textDocuments.find((document) => document.uri.fsPath === desk);
      if (open !== undefined) {
        return open.getText();
      }
      return fs.existsSync(desk) ? fs.readFileSync(desk, 'utf8') : '';
    };
    report.facts.deskText = await waitFor('the reply in the desk', () => {
      const text = deskText();
      return text.includes('## Foreman') && !text.includes('the Foreman is writing') ? text : undefined;
    });
  });

  await step('voice', async () => {
    // As a writer would: the gate's first paragraph selected, the palette's
    // Voice Tournament with two contestants.
    const gate = await vscode.window.showTextDocument(fileUri('Story/Scenes/SCN-the-gate.md'), { preview: false });
    const line = gate.document.lineAt(11);
    gate.selection = new vscode.Selection(line.range.start, line.range.end);
    report.facts.tournamentAnswer = await vscode.commands.executeCommand('control-room.voiceTournament', {
      contestants: ['sparse', 'lyrical'],
    });
    const id = report.facts.tournamentAnswer?.tournament;
    const file = fileUri(`Compendium/Voice/tournaments/${id}.md`).fsPath;
    await waitFor('the tournament file', () => fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('## 2. lyrical'));
    report.facts.tournamentText = fs.readFileSync(file, 'utf8');
    // Its lenses, and "Pick this voice" on the first version.
    const uri = vscode.Uri.file(file);
    await vscode.window.showTextDocument(uri, { preview: false });
    const lenses = await waitFor('the tournament lenses', async () => {
      const found = await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri, 20);
      return (found ?? []).some((lens) => lens.command?.title === 'Pick this voice') ? found : undefined;
    });
    report.facts.tournamentLenses = lenses.map((lens) => lens.command?.title ?? null);
    const pick = lenses.find((lens) => lens.command?.title === 'Pick this voice' && lens.command.arguments?.[0]?.version === 1);
    report.facts.pickAnswer = await vscode.commands.executeCommand(pick.command.command, ...pick.command.arguments);
    // The new file is created, then its text applied and saved.
    const gold = fileUri('Compendium/Voice/gold-standard.md').fsPath;
    report.facts.goldText = await waitFor('the gold standard', () => {
      const text = fs.existsSync(gold) ? fs.readFileSync(gold, 'utf8') : '';
      return text.includes('## Passage') ? text : undefined;
    });
  });

  await step('presence-chart', async () => {
    // From the palette, as a writer would: the webview's page and its figures.
    const shown = await vscode.commands.executeCommand('control-room.showPresenceChart');
    report.facts.presenceChart = shown === undefined ? null : {
      cells: shown.cells,
      characters: shown.characters,
      scenes: shown.scenes,
      cellRects: (shown.html.match(/<rect class="cell /g) ?? []).length,
      gateTooltip: /<title>Iria Vell in SCN-the-gate: point of view<\/title>/.test(shown.html),
      panel: shown.panel ?? null,
    };
    // The writer's reading of the gate for B1, then the report that shows it.
    const kept = await vscode.commands.executeCommand('control-room.overrideHealth', {
      check: 'B1', scene: 'SCN-the-gate', verdict: 'not challenged', why: 'thanking her costs nothing',
    });
    const health = await vscode.commands.executeCommand('control-room.showHealth');
    report.facts.health = health === undefined ? null : {
      score: health.score,
      checks: health.checks.map((check) => `${check.id}:${check.method}`),
      document: health.document.split('\n')[0],
      deterministic: health.checks.filter((check) => check.method === 'deterministic').length,
      override: kept?.verdict ?? null,
      writersReading: health.document.includes("not challenged (the writer's reading: thanking her costs nothing)"),
    };
    const timeline = await vscode.commands.executeCommand('control-room.showTimelineChart');
    report.facts.timelineChart = timeline === undefined ? null : {
      panel: timeline.panel ?? null,
      figures: timeline.figures,
      vigilBack: /<title>\s*SCN-the-vigil: [^<]*\(goes back in time, unmarked\)/.test(timeline.html),
    };
  });

  // Leave the new scene in view for the screenshot.
  const scene = vscode.workspace.textDocuments.find((document) => document.uri.path.endsWith('/SCN-the-reckoning.md'));
  if (scene !== undefined) {
    await vscode.window.showTextDocument(scene, { preview: false });
  }
}

function activate() {
  if (!REPORT) {
    return;
  }
  run()
    .catch((error) => {
      report.error = String(error && error.stack ? error.stack : error);
    })
    .finally(() => {
      report.finished = true;
      report.ended = new Date().toISOString();
      writeReport();
      log('report written');
    });
}

function deactivate() {}

module.exports = { activate, deactivate };
