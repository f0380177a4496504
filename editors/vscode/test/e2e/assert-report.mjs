// Checks what the probe extension saw in VS Code (its report) and what the
// fake model server was asked, prints one line per expectation, and exits 1
// if any fails.
//
//   node assert-report.mjs REPORT.json MODEL_REQUESTS.jsonl SCRIPTED.json

import { existsSync, readFileSync } from 'node:fs';

const [reportPath, requestsPath, scriptedPath] = process.argv.slice(2);
if (!reportPath || !requestsPath || !scriptedPath) {
  console.error('usage: node assert-report.mjs REPORT.json MODEL_REQUESTS.jsonl SCRIPTED.json');
  process.exit(2);
}

if (!existsSync(reportPath)) {
  console.error(`FAIL  the probe wrote no report at ${reportPath}`);
  process.exit(1);
}
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
const facts = report.facts ?? {};
const requests = existsSync(requestsPath)
  ? readFileSync(requestsPath, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line))
  : [];
const scripted = JSON.parse(readFileSync(scriptedPath, 'utf8'));

const results = [];

/** Records one expectation; `detail` says what was seen when it fails. */
function expect(name, ok, detail) {
  results.push({ name, ok: Boolean(ok), detail });
}

const codes = (diagnostics) => (diagnostics ?? []).map((diagnostic) => diagnostic.code);
const show = (value) => JSON.stringify(value);

// The probe itself.
expect('the probe finished', report.finished === true && report.error === undefined, report.error);
for (const step of report.steps ?? []) {
  expect(`probe step "${step.name}" ran without error`, step.ok, step.error);
}

// Activation and commands.
expect('the extension is installed', facts.extensionFound === true, show(facts.extensionFound));
expect(
  'the server serves the workspace folder',
  facts.servedFolder !== undefined && facts.servedFolder === facts.workspaceFolder,
  `served ${show(facts.servedFolder)}, workspace ${show(facts.workspaceFolder)}`,
);
expect(
  'the server is the program the package carries',
  typeof facts.serverPath === 'string' && /[\\/]extensions[\\/].*[\\/]server[\\/]control-room(\.exe)?$/.test(facts.serverPath),
  show(facts.serverPath),
);
const palette = [
  'control-room.draftScene',
  'control-room.conference',
  'control-room.checkWorkspace',
  'control-room.showRuns',
  'control-room.cancelRun',
  'control-room.openRunReport',
  'control-room.compile',
];
expect(
  'all seven palette commands are registered',
  palette.every((id) => (facts.paletteCommands ?? []).includes(id)),
  `registered: ${show(facts.paletteCommands)}`,
);
expect('New Manuscript is registered', (facts.paletteCommands ?? []).includes('control-room.newManuscript'), show(facts.paletteCommands));
expect(
  'New Manuscript made the manuscript in the folder given',
  typeof facts.newManuscript === 'string' && facts.newManuscriptOutline === '# The Lighthouse',
  `${show(facts.newManuscript)}: ${show(facts.newManuscriptOutline)}`,
);
expect(
  'a second New Manuscript in the same folder was refused and changed nothing',
  facts.newManuscriptAgain === null &&
    JSON.stringify(facts.newManuscriptFiles) === JSON.stringify(['Compendium', 'Story', 'control-room.toml']),
  `${show(facts.newManuscriptAgain)}, ${show(facts.newManuscriptFiles)}`,
);
expect(
  'Import a Novel made a manuscript beside the book, its chapters and scenes in the outline',
  typeof facts.imported === 'string' &&
    JSON.stringify(facts.importedOutline) ===
      JSON.stringify(['# The Keeper', '## Chapter 1', '- SCN-chapter-1-1: Ada came.', '- SCN-chapter-1-2: She slept.', '## Chapter 2', '- SCN-chapter-2: Morning.']),
  `${show(facts.imported)}: ${show(facts.importedOutline)}`,
);
const walkthrough = (facts.walkthroughs ?? [])[0];
expect(
  'the first-five-minutes walkthrough is contributed with its five steps and their pages',
  walkthrough !== undefined && walkthrough.steps.length === 5 && walkthrough.media.every((found) => found === true),
  show(facts.walkthroughs),
);
const firstChapter = (facts.outline ?? [])[0];
expect(
  "the Outline view's first chapter is the outline's, with its words",
  firstChapter !== undefined && firstChapter.label === 'Chapter 1: The Gate' && /^1,1\d\d words$/.test(firstChapter.description),
  show(facts.outline),
);
expect('the Outline view shows both chapters', (facts.outline ?? []).length === 2, show(facts.outline));
const kael = (facts.cast ?? []).find((card) => card.label === 'Kael Maren');
expect(
  'Cast and Places lists Kael Maren with the scenes he is in',
  kael !== undefined && /^in [2-9] scenes$/.test(kael.description),
  show(facts.cast),
);
expect('Show Mentions on Kael Maren lists his mentions', typeof facts.mentionsOfKael === 'number' && facts.mentionsOfKael > 10, show(facts.mentionsOfKael));
const contributed = facts.contributedCommands ?? [];
expect(
  'the palette commands are contributed in the "Control Room" category',
  palette.every((id) => contributed.some((command) => command.command === id && command.category === 'Control Room')),
  show(contributed),
);
const serverCommands = ['controlRoom.runRecipe', 'controlRoom.cancelRun', 'controlRoom.listRuns', 'controlRoom.openRun', 'controlRoom.conference', 'controlRoom.compile'];
expect(
  "the server's own commands were registered by the language client",
  serverCommands.every((id) => (facts.serverCommands ?? []).includes(id)),
  `registered: ${show(facts.serverCommands)}`,
);

// Diagnostics, and the severity set in the user settings (initializationOptions).
expect('SCN-the-saltmaster.md has name-typo', codes(facts.saltmaster).includes('name-typo'), show(facts.saltmaster));
expect('SCN-the-high-tide.md has dead-character', codes(facts.highTide).includes('dead-character'), show(facts.highTide));
const orphan = (facts.deletedDream ?? []).find((diagnostic) => diagnostic.code === 'orphan-scene');
expect(
  'orphan-scene is an error, as the user settings say (a warning by default)',
  orphan?.severity === 'error',
  show(facts.deletedDream),
);

// Semantic tokens: the legend, the contributed types, and what VS Code got.
const legend = facts.semanticLegend ?? {};
expect(
  'the semantic tokens legend has character, place and dialogue, and the deprecated modifier',
  show(legend.tokenTypes) === show(['character', 'place', 'dialogue']) && show(legend.tokenModifiers) === show(['deprecated']),
  show(legend),
);
const contributedTypes = facts.contributedTokenTypes ?? [];
expect(
  'the extension contributes the token types with standard super types, for themes to colour',
  show(contributedTypes) ===
    show([
      { id: 'character', superType: 'variable' },
      { id: 'place', superType: 'namespace' },
      { id: 'dialogue', superType: 'string' },
    ]),
  show(contributedTypes),
);
const highTide = facts.highTideTokens ?? {};
expect(
  'in SCN-the-high-tide.md, after his death, Tomas is a character struck through (deprecated)',
  (highTide.tomas ?? []).length > 0 && highTide.tomas.every((token) => token.type === 'character' && token.modifiers.includes('deprecated')),
  show(highTide.tomas),
);
expect('only Tomas is struck through there', show(highTide.dead) === show(['Tomas']), show(highTide.dead));
expect(
  'Kael is a character, not struck through',
  highTide.kael?.[0]?.type === 'character' && highTide.kael[0].modifiers.length === 0,
  show(highTide.kael),
);
expect('"the fortress" is a place', highTide.fortress?.[0]?.type === 'place', show(highTide.fortress));
expect(
  'a line of dialogue arrives whole, from quote to quote',
  (highTide.dialogue ?? []).some((token) => token.text === '"Mind the crown, it\'s rotten on the seaward side,"'),
  show(highTide.dialogue),
);
expect(
  'in SCN-the-saltmaster.md, before his death, Tomas is not struck through',
  (facts.saltmasterTomas ?? []).length > 0 && facts.saltmasterTomas.every((token) => token.type === 'character' && token.modifiers.length === 0),
  show(facts.saltmasterTomas),
);

// The quick fix.
expect('the typo under the diagnostic is "Kale"', facts.typoWord === 'Kale', show(facts.typoWord));
expect(
  'the quick fix for the typo offers the name Kael',
  typeof facts.quickFixTitle === 'string' && facts.quickFixTitle.includes('Kael'),
  `${show(facts.quickFixTitle)} among ${show(facts.quickFixTitles)}`,
);
expect('VS Code applied the quick fix', facts.quickFixApplied === true, show(facts.quickFixApplied));
expect(
  'the quick fix replaced "Kale" with "Kael" and nothing else',
  typeof facts.lineBeforeFix === 'string' &&
    facts.lineBeforeFix.includes('Kale') &&
    facts.lineAfterFix === facts.lineBeforeFix.replace('Kale', 'Kael'),
  `before ${show(facts.lineBeforeFix)}, after ${show(facts.lineAfterFix)}`,
);
expect(
  'name-typo is gone after the fix',
  facts.saltmasterAfterFix !== undefined && !codes(facts.saltmasterAfterFix).includes('name-typo'),
  show(facts.saltmasterAfterFix),
);

// A settings change reaches the running server.
expect('SCN-the-vigil.md had timeline-order', codes(facts.vigilBefore).includes('timeline-order'), show(facts.vigilBefore));
expect(
  'turning timeline-order off in the settings removes it at once',
  facts.vigilAfter !== undefined && !codes(facts.vigilAfter).includes('timeline-order'),
  show(facts.vigilAfter),
);

// Check Workspace.
const summary = facts.checkSummary;
expect('Check Workspace answered a summary', summary !== undefined && summary !== null && summary.files > 0, show(summary));
const byCode = summary?.by_code ?? {};
const expectedCodes = ['missing-scene', 'orphan-scene', 'unknown-reference', 'anti-pattern', 'attribute-mismatch', 'dead-character'];
expect(
  `Check Workspace counts ${expectedCodes.join(', ')}`,
  expectedCodes.every((code) => byCode[code] > 0),
  show(byCode),
);
expect(
  'Check Workspace no longer counts the fixed typo or the silenced timeline-order',
  summary !== undefined && !(byCode['name-typo'] > 0) && !(byCode['timeline-order'] > 0),
  show(byCode),
);
const workspaceDiagnostics = facts.workspaceDiagnostics ?? {};
expect(
  'after Check Workspace, files never opened have their diagnostics too',
  (workspaceDiagnostics['Story/Scenes/SCN-the-arrival.md'] ?? []).includes('unknown-reference') &&
    (workspaceDiagnostics['Story/Scenes/SCN-the-gate.md'] ?? []).includes('attribute-mismatch'),
  show(workspaceDiagnostics),
);

// Draft Scene, through the fake model.
expect('the outline reported the missing scene before the draft', codes(facts.outlineBeforeDraft).includes('missing-scene'), show(facts.outlineBeforeDraft));
const runId = facts.draftResult?.run_id;
expect('Draft Scene started a run and answered its id', typeof runId === 'string' && runId !== '', show(facts.draftResult));
const polishParagraphs = scripted.polish
  .split(/\n\s*\n/)
  .map((paragraph) => paragraph.trim())
  .filter((paragraph) => paragraph !== '' && !paragraph.startsWith('#'));
const missing = polishParagraphs.filter((paragraph) => !(facts.sceneText ?? '').includes(paragraph));
expect(
  'SCN-the-reckoning.md holds the polished draft the editor agent returned',
  polishParagraphs.length > 0 && missing.length === 0,
  `missing ${show(missing)} in ${show(facts.sceneText)}`,
);
expect('the new scene file exists on disk', facts.sceneExistsOnDisk === true, show(facts.sceneExistsOnDisk));
expect(
  'the outline no longer reports the scene missing',
  facts.outlineAfterDraft !== undefined && !codes(facts.outlineAfterDraft).includes('missing-scene'),
  show(facts.outlineAfterDraft),
);

// The status bar followed the run.
const statusTexts = facts.statusBarTexts ?? [];
const shown = statusTexts.filter((text) => typeof text === 'string');
expect(
  'the status bar showed the run with a spinner and its step',
  shown.some((text) => text.startsWith('$(sync~spin) ') && text.includes('SCN-the-reckoning') && text.includes('writer: draft')),
  show(statusTexts),
);
expect(
  'the status bar item hid when the run ended',
  statusTexts.length > 0 && statusTexts[statusTexts.length - 1] === null && facts.statusBarAfter === null,
  `texts ${show(statusTexts)}, after ${show(facts.statusBarAfter)}`,
);

// Runs and the report.
const run = (facts.runs ?? []).find((entry) => entry.run_id === runId);
expect('listRuns has the run, done and no longer in flight', run?.status === 'done' && run?.in_flight === false, show(facts.runs));
const runItem = (facts.runItems ?? []).find((item) => item.id === runId);
expect(
  'the Runs view shows the run, done, with no Cancel Run',
  runItem !== undefined && runItem.description.startsWith('done') && runItem.label !== '' && !runItem.cancellable,
  show(facts.runItems),
);
expect(
  'Open Run Report showed the run report',
  typeof facts.reportPath === 'string' && facts.reportPath.includes(runId ?? '\u0000') && (facts.reportText ?? '').trim() !== '',
  `${show(facts.reportPath)}: ${show((facts.reportText ?? '').slice(0, 200))}`,
);

// Cancel Run stops a run that waits on the model, and nothing is written.
expect(
  'while the run waited on the model, the status bar showed its planner step',
  typeof facts.statusWhileHeld === 'string' && facts.statusWhileHeld.includes('SCN-the-gate') && facts.statusWhileHeld.includes('planner: brief'),
  show(facts.statusWhileHeld),
);
const heldItem = (facts.runItemsWhileHeld ?? []).find((item) => item.id === facts.heldRunId);
expect(
  'while the run waited, the Runs view showed it running at its step, with Cancel Run offered',
  heldItem !== undefined && heldItem.cancellable && /planner/.test(heldItem.description),
  show(facts.runItemsWhileHeld),
);
expect(
  'Cancel Run cancelled the run it was given',
  typeof facts.heldRunId === 'string' && facts.cancelAnswer === facts.heldRunId && facts.cancelledStatus === 'cancelled',
  `run ${show(facts.heldRunId)}, answer ${show(facts.cancelAnswer)}, status ${show(facts.cancelledStatus)}`,
);
expect(
  'the cancelled run left SCN-the-gate.md as it was',
  typeof facts.gateBefore === 'string' && facts.gateAfter === facts.gateBefore && facts.gateDirty === false,
  `changed: ${facts.gateAfter !== facts.gateBefore}, dirty: ${show(facts.gateDirty)}`,
);

// What the model server was asked: every agent of the recipe, with the model from the settings.
for (const step of ['brief', 'draft', 'polish', 'continuity', 'critique']) {
  expect(`the fake model answered the ${step} step`, requests.some((request) => request.step === step && request.answered), `${requests.length} requests`);
}
expect('the cancelled run did ask the model (and was held)', requests.some((request) => request.held === true), `${requests.length} requests`);
expect('the server counted the prompts with the model server\'s tokenizer', requests.some((request) => request.tokenizer === true), `${requests.length} requests`);
const unanswered = requests.filter((request) => !request.answered && request.held !== true);
expect('the fake model got no request it could not answer', unanswered.length === 0, show(unanswered));
// `GET /props` (how many replies the server writes at once) names no model.
const models = [...new Set(requests.filter((request) => request.props !== true).map((request) => request.model))];
expect('every request named the model from the settings (llama3.1:8b)', models.length === 1 && models[0] === 'llama3.1:8b', show(models));

// Inlay hints from the story clock: at the gate's heading, the day in the
// calendar and Iria Vell's age (born 1175-08-30; the scene is 1203-04-12);
// and after each line of dialogue, its speaker as the checks read it.
const gateHints = facts.gateInlayHints ?? [];
expect(
  'SCN-the-gate.md\'s first inlay hint is "12 April 1203 · Iria Vell, 27"',
  gateHints.length >= 1 && gateHints[0].label === '12 April 1203 · Iria Vell, 27',
  show(gateHints),
);
expect(
  'the hint sits at the end of the heading line ("# The Gate", line 9)',
  gateHints.length >= 1 &&
    gateHints[0].line === 9 &&
    gateHints[0].lineText === '# The Gate' &&
    gateHints[0].character === '# The Gate'.length,
  show(gateHints),
);
expect(
  'Kael\'s "Thank you" has its speaker\'s hint at the end of its line: "— Kael Maren"',
  gateHints.some(
    (hint) =>
      hint.label === '— Kael Maren' &&
      hint.line === 19 &&
      hint.lineText === '"Thank you," Kael said.' &&
      hint.character === hint.lineText.length,
  ),
  show(gateHints),
);
const outlineHints = facts.outlineInlayHints ?? [];
expect(
  "the outline's SCN-the-saltmaster entry has its day after its id",
  outlineHints.some(
    (hint) => hint.label === '13 April 1203 · Kael Maren, 34' && /^\s*[-*]\s+SCN-the-saltmaster$/.test(hint.before),
  ),
  show(outlineHints),
);

// Compile Manuscript: from the palette (DOCX, the quick pick's first
// format) and with its format given (Markdown); the scenes in outline order.
const normalise = (text) =>
  (text ?? '')
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/\s+/g, ' ');
const outlineScenes = facts.outlineScenes ?? [];
/** Where each outline scene's first words are in `text` (-1: not there). */
const positions = (text) => outlineScenes.map((scene) => normalise(text).indexOf(normalise(scene.firstWords)));
const inOrder = (found) => found.length > 0 && found.every((at, i) => at >= 0 && (i === 0 || at > found[i - 1]));
expect(
  'the outline lists the scenes to look for, the drafted one too',
  outlineScenes.length >= 6 && outlineScenes.some((scene) => scene.id === 'SCN-the-reckoning'),
  show(outlineScenes),
);
const docx = facts.compiledDocx;
expect(
  'Compile Manuscript from the palette, DOCX picked, wrote a DOCX file that exists',
  docx?.format === 'docx' && docx?.exists === true && /\.docx$/.test(docx?.output ?? ''),
  show(docx && { ...docx, text: undefined }),
);
expect(
  "the DOCX is a zip whose word/document.xml holds the first scene's first words",
  docx?.isZip === true &&
    outlineScenes.length > 0 &&
    normalise(docx?.text).includes(normalise(outlineScenes[0].firstWords)),
  `${show(outlineScenes[0])} in ${show((docx?.text ?? '').slice(0, 300))}`,
);
expect(
  "the DOCX holds every outline scene's text, in outline order",
  inOrder(positions(docx?.text)),
  show(positions(docx?.text)),
);
expect(
  'the DOCX counts the scenes and leaves out only the unlisted one',
  docx?.scenes === outlineScenes.length && (docx?.missing ?? []).length === 0 && show(docx?.unlisted) === show(['SCN-deleted-dream']),
  show(docx && { scenes: docx.scenes, missing: docx.missing, unlisted: docx.unlisted }),
);
const md = facts.compiledMarkdown;
expect(
  'Compile Manuscript with { format: "md" } wrote a Markdown file that exists',
  md?.format === 'md' && md?.exists === true && /\.md$/.test(md?.output ?? ''),
  show(md && { ...md, text: undefined }),
);
expect(
  "the Markdown holds every outline scene's text, in outline order, without front matter",
  inOrder(positions(md?.text)) && !(md?.text ?? '').includes('pov:'),
  `${show(positions(md?.text))} in ${show((md?.text ?? '').slice(0, 300))}`,
);
const outsideStory = (output) => typeof output === 'string' && !output.startsWith('..') && !/^Story(\/|$)/.test(output);
expect(
  "the compiled files are inside the workspace but not in the manuscript's Story/ folder",
  outsideStory(docx?.output) && outsideStory(md?.output),
  `${show(docx?.output)}, ${show(md?.output)}`,
);
expect(
  'compiling wrote nothing into Story/',
  Array.isArray(facts.storyFilesBeforeCompile) && show(facts.storyFilesAfterCompile) === show(facts.storyFilesBeforeCompile),
  `before ${show(facts.storyFilesBeforeCompile)}, after ${show(facts.storyFilesAfterCompile)}`,
);

// The Foreman: the mode in the status bar, and a turn at the desk from the palette.
expect(
  'the status bar shows the mode and its gate (the Story Bible complete)',
  facts.modeText === '$(compass) ARCHITECT 100%',
  show(facts.modeText),
);
expect('Ask the Foreman answered a turn', typeof facts.askAnswer?.turn === 'number', show(facts.askAnswer));
const desk = facts.deskText ?? '';
expect(
  "the writer's message and the Foreman's reply are in Notes/foreman.md, with what its action did",
  desk.includes('## Writer\n\nE2E: what comes after the Story Bible?') &&
    desk.includes('## Foreman\n\nYour Story Bible is complete: calibrate the voice next.') &&
    desk.includes('- Done: saved voice/e2e'),
  show(desk),
);

// Voice calibration: a tournament from the palette, its lenses, a pick.
expect(
  'Voice Tournament from the palette started two contestants',
  typeof facts.tournamentAnswer?.tournament === 'string' && facts.tournamentAnswer?.contestants === 2,
  show(facts.tournamentAnswer),
);
const tournament = facts.tournamentText ?? '';
expect(
  "the tournament's file holds both versions of the selected paragraph side by side",
  tournament.includes('passage: "Story/Scenes/SCN-the-gate.md:12-12"') &&
    tournament.includes('## 1. sparse') &&
    tournament.includes('The bar held. Iria set her shoulder to it.') &&
    tournament.includes('## 2. lyrical') &&
    tournament.includes('like the arm of an old sleeper'),
  show(tournament),
);
expect(
  'each version has its lenses: Pick this voice, Why does this work?',
  (facts.tournamentLenses ?? []).filter((title) => title === 'Pick this voice').length === 2 &&
    (facts.tournamentLenses ?? []).filter((title) => title === 'Why does this work?').length === 2,
  show(facts.tournamentLenses),
);
expect(
  'Pick this voice wrote the gold standard from the first version',
  facts.pickAnswer?.picked === true &&
    (facts.goldText ?? '').includes('The bar held. Iria set her shoulder to it.') &&
    (facts.goldText ?? '').includes('locked: false'),
  `${show(facts.pickAnswer)} ${show(facts.goldText)}`,
);

// The presence chart from the palette, in a webview.
const presence = facts.presenceChart ?? {};
expect(
  'Show Presence Chart opens a webview whose SVG has a cell for each appearance, with its tooltip',
  typeof presence.panel === 'string' && presence.panel.startsWith('Presence: ') && presence.cells > 0 && presence.cellRects === presence.cells && presence.gateTooltip === true && presence.scenes >= 7,
  show(presence),
);

// The timeline from the palette: the vigil, told after the fall though dated before it.
const health = facts.health ?? {};
expect(
  'Show Story Health opens the report of the seven checks, four of them from the text',
  typeof health.score === 'number' && health.deterministic === 4 && health.checks?.join(' ') === 'A1:deterministic A2:deterministic A3:model B1:model B2:deterministic C1:deterministic C2:model' && typeof health.document === 'string' && health.document.startsWith("# The story's health"),
  show(health),
);
expect(
  "Override a Health Check keeps the writer's verdict on a scene, and the report shows it",
  health.override === 'not challenged' && health.writersReading === true,
  show(health),
);

const timeline = facts.timelineChart ?? {};
expect(
  'Show Timeline opens a webview with each dated scene, the vigil marked as going back in time',
  typeof timeline.panel === 'string' && timeline.panel.startsWith('Timeline: ') && timeline.figures?.back === 1 && timeline.figures?.dated >= 6 && timeline.vigilBack === true,
  show(timeline),
);

let failures = 0;
for (const result of results) {
  if (result.ok) {
    console.log(`PASS  ${result.name}`);
  } else {
    failures += 1;
    console.log(`FAIL  ${result.name}${result.detail === undefined ? '' : `\n      saw: ${result.detail}`}`);
  }
}
console.log(`\n${results.length - failures} of ${results.length} expectations met.`);
if (failures > 0) {
  console.log('\nProbe log:');
  for (const line of report.log ?? []) {
    console.log(`  ${line}`);
  }
}
process.exit(failures === 0 ? 0 : 1);
