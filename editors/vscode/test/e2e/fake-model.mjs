// A fake OpenAI-compatible model server for the end-to-end test, on
// 127.0.0.1 (port 0: the system picks one).
//
//   node fake-model.mjs SCRIPTED.json PORT_FILE REQUESTS.jsonl
//
// `POST /v1/chat/completions` answers each agent of the draft recipe with its
// entry of SCRIPTED.json (examples/scripted/draft-the-reckoning.json): a text
// is the reply, `{"reply": value}` replies with the value as JSON. Agents are
// told apart by `<current_step>STEP (ARCHETYPE)</current_step>` in the
// request, as tests/model_server/mod.rs does. Each request is logged to
// REQUESTS.jsonl (its step, model and whether it was answered); a request no
// step matches gets 400, so the test sees it. The port is written to PORT_FILE
// once the server listens. `POST /extras/tokenize/count` counts tokens, as
// llama-cpp-python's server does, for the server to measure the model's.
//
// `POST /control/hold` makes the model requests that follow wait (logged as
// held) until `POST /control/release`, so a test can cancel a run while it
// waits on the model.

import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [scriptedPath, portFile, requestsLog] = process.argv.slice(2);
if (!scriptedPath || !portFile || !requestsLog) {
  console.error('usage: node fake-model.mjs SCRIPTED.json PORT_FILE REQUESTS.jsonl');
  process.exit(2);
}

const scripted = JSON.parse(readFileSync(scriptedPath, 'utf8'));

/** Step id → archetype, for the steps of creative_draft_scene. */
const STEPS = {
  brief: 'planner',
  draft: 'writer',
  polish: 'editor',
  continuity: 'continuity',
  critique: 'critic',
  foreman: 'foreman',
  'tournament-1': 'writer',
  'tournament-2': 'writer',
};

/** The voice tournament's two contestants. */
const TOURNAMENT_REPLIES = {
  'tournament-1':
    'The bar held. Iria set her shoulder to it. It did not move. She tried again, and the wood groaned at last. ' +
    'She hauled the wicket open a hand\'s width. The wind came through first, then the smell of the road. ' +
    'Nobody was there. She looked along the wall. No lamp in the keep. Good. She waited. The tide was turning ' +
    'out on the flats; she could hear it. A gull cried once and went quiet. Her hands were cold. She put them ' +
    'in her sleeves and kept watching the dark. Then a shape came up the road, slow, a man with a pack, and ' +
    'behind him nothing. She did not call out. He stopped at the gate. He said her name. She let him in. ' +
    'She dropped the bar back. The sound went through the stones and into the ground, and she stood there ' +
    'until it had gone, and then a little longer, because the night was not done with her yet.',
  'tournament-2': 'The bar lay across the gate like the arm of an old sleeper, and Iria leaned into it as into a wind off the flats.',
};

/** The Foreman's reply at the desk: a message and one action. */
const FOREMAN_REPLY =
  '<message>Your Story Bible is complete: calibrate the voice next.</message>' +
  '<action type="save_decision"><category>voice</category><key>e2e</key><value>Close third, short lines.</value></action>';

/**
 * A finding step's reply at any tier: a t1 model is asked in micro-steps (a
 * triage, then a finding per problem, then its evidence), each answered from
 * the step's whole reply, told apart by the schema its packet names and the
 * problem it carries (as `finding_step` in tests/model_server/mod.rs).
 */
function microReply(full, body) {
  const key = 'concerns' in full ? 'concerns' : 'findings';
  const findings = full[key] ?? [];
  // A finding's message as the request's JSON body carries it.
  const about = () => findings.find((finding) => body.includes(JSON.stringify(finding.message).slice(1, -1)));
  if (body.includes('micro_triage')) {
    const { [key]: _findings, pass: _pass, ...rest } = full;
    return JSON.stringify({ ...rest, problems: findings.map((finding) => finding.message) });
  }
  if (body.includes('micro_finding')) {
    const { quote: _quote, file: _file, ...finding } = about() ?? {};
    return JSON.stringify(finding);
  }
  if (body.includes('micro_evidence')) {
    return JSON.stringify({ quote: about()?.quote });
  }
  return JSON.stringify(full);
}

/** The reply text for a step, as the scripted file gives it. */
function replyFor(step, body = '') {
  if (step === 'foreman') {
    return FOREMAN_REPLY;
  }
  if (step in TOURNAMENT_REPLIES) {
    return TOURNAMENT_REPLIES[step];
  }
  const entry = scripted[step];
  if (typeof entry === 'string') {
    return entry;
  }
  if (entry !== null && typeof entry === 'object' && 'reply' in entry) {
    return step === 'continuity' || step === 'critique' ? microReply(entry.reply, body) : JSON.stringify(entry.reply);
  }
  throw new Error(`the scripted file has no usable reply for step ${step}`);
}

function send(response, status, body) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain' : 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

let counter = 0;
/** While holding, the model requests waiting for release. */
let held = null;

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const entry = { at: new Date().toISOString(), method: request.method, path: request.url };
    if (request.method === 'POST' && request.url === '/control/hold') {
      held = held ?? [];
      send(response, 200, { holding: true });
      return;
    }
    if (request.method === 'POST' && request.url === '/control/release') {
      const waiting = held ?? [];
      held = null;
      waiting.forEach((release) => release());
      send(response, 200, { released: waiting.length });
      return;
    }
    if (request.method === 'POST' && request.url === '/extras/tokenize/count') {
      // A tokenizer, as llama-cpp-python's server has: four characters a token.
      let input = '';
      let model;
      try {
        ({ input, model } = JSON.parse(body));
      } catch {
        // Answered below with a count of nothing.
      }
      appendFileSync(requestsLog, JSON.stringify({ ...entry, tokenizer: true, model, answered: true }) + '\n');
      send(response, 200, { count: Math.ceil([...String(input ?? '')].length / 4) });
      return;
    }
    if (request.method === 'GET' && request.url === '/props') {
      // How many replies it writes at once, as llama.cpp's server says: one.
      appendFileSync(requestsLog, JSON.stringify({ ...entry, props: true, answered: true }) + '\n');
      send(response, 200, { total_slots: 1 });
      return;
    }
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      appendFileSync(requestsLog, JSON.stringify({ ...entry, answered: false }) + '\n');
      send(response, 404, `no route for ${request.method} ${request.url}`);
      return;
    }
    let model = 'unknown';
    try {
      model = JSON.parse(body).model ?? model;
    } catch {
      // Logged below as unanswered.
    }
    const step = Object.keys(STEPS).find((id) => body.includes(`<current_step>${id} (${STEPS[id]})</current_step>`));
    if (held !== null) {
      appendFileSync(requestsLog, JSON.stringify({ ...entry, step: step ?? null, model, held: true }) + '\n');
      // Answered (if its client is still there) once released.
      held.push(() => answer(response, step, model, body));
      return;
    }
    appendFileSync(requestsLog, JSON.stringify({ ...entry, step: step ?? null, model, answered: step !== undefined }) + '\n');
    answer(response, step, model, body);
  });
});

/** Answers a model request for `step` (400 when no step matched). */
function answer(response, step, model, body = '') {
  if (response.destroyed) {
    // A held request whose client gave up (the run was cancelled).
    return;
  }
  if (step === undefined) {
    send(response, 400, `no scripted step matches this request: ${body.slice(0, 2000)}`);
    return;
  }
  counter += 1;
  send(response, 200, {
    id: `chatcmpl-fake-${counter}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: `${model}-20260101`,
    choices: [{ index: 0, message: { role: 'assistant', content: replyFor(step, body) }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
  });
}

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  writeFileSync(portFile, String(port));
  console.log(`fake model server on http://127.0.0.1:${port}/v1`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
