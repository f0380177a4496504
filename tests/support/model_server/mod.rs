//! A fake model server for tests, on 127.0.0.1, speaking both wire formats:
//! OpenAI-compatible `POST /v1/chat/completions` and Anthropic's
//! `POST /v1/messages`. Each test scripts it with rules: the first rule whose
//! text occurs in a request's body answers, with its answers in order (the
//! last one repeats). Every request is kept for the test to inspect.

#![allow(dead_code)] // The benches include it too, each using a part.

pub mod prefix;

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

#[derive(Clone, Debug)]
pub enum Answer {
    /// A normal reply with this text.
    Text(String),
    /// An error status, with an optional `Retry-After` and a body.
    Status {
        code: u16,
        retry_after: Option<String>,
        body: String,
    },
    /// 200 with this body as it is (malformed JSON, a wrong shape…).
    Raw(String),
    /// Never answers; counts the request as dropped when the client goes.
    Hang,
    /// Waits, then answers.
    Delayed(Duration, Box<Answer>),
    /// Decides from the request's body (for replies that must echo what the
    /// request carries, such as a nonce or a receipt id).
    With(Reply),
    /// Streamed or not as the request asks, one word a chunk, a chunk every
    /// so often (a model writing at a known speed).
    Paced(String, Duration),
}

/// A reply computed from the request's body.
#[derive(Clone)]
pub struct Reply(pub Arc<dyn Fn(&str) -> Answer + Send + Sync>);

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reply(..)")
    }
}

impl Answer {
    pub fn text(text: impl Into<String>) -> Answer {
        Answer::Text(text.into())
    }

    pub fn status(code: u16) -> Answer {
        Answer::Status {
            code,
            retry_after: None,
            body: String::new(),
        }
    }
}

struct Rule {
    contains: String,
    answers: VecDeque<Answer>,
}

#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
    pub at: Instant,
}

#[derive(Default)]
struct Shared {
    rules: Mutex<Vec<Rule>>,
    received: Mutex<Vec<Received>>,
    /// Hung requests, and streams cut short, whose client went away.
    dropped: AtomicUsize,
    /// When each streamed event was handed to the connection.
    sent: Mutex<Vec<Instant>>,
    /// Characters per token of the tokenizer `/extras/tokenize/count`
    /// answers with, once a test gives the server one.
    chars_per_token: Mutex<Option<f64>>,
    /// Whether `GET /api/version` answers as Ollama's does.
    ollama: std::sync::atomic::AtomicBool,
    /// The slots `GET /props` says the server has (as llama.cpp's server
    /// does); 0 for none, when that address is not found.
    slots: AtomicUsize,
    /// The prompts asked so far, for the prefix cache the usage figures say.
    prompts: Mutex<Vec<String>>,
}

/// What a call cost, as the server says it: four characters a prompt's
/// token, a reply's word a token, and as cached the longest prefix the
/// prompt shares byte for byte with an earlier one (as a server's prefix
/// cache).
#[derive(Clone, Copy)]
struct Usage {
    prompt: u64,
    reply: u64,
    cached: u64,
}

fn usage(shared: &Shared, request: &Value, reply: &str) -> Usage {
    let text_of = |content: &Value| match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<String>(),
        _ => String::new(),
    };
    let mut prompt = text_of(&request["system"]);
    for message in request["messages"].as_array().into_iter().flatten() {
        prompt.push_str(&text_of(&message["content"]));
        prompt.push('\n');
    }
    let mut earlier = shared.prompts.lock().unwrap();
    let shared_bytes = prefix::shared_prefix(&prompt, &earlier);
    earlier.push(prompt.clone());
    Usage {
        prompt: prompt.len().div_ceil(4) as u64,
        reply: reply.split_whitespace().count() as u64,
        cached: (shared_bytes / 4) as u64,
    }
}

/// Which API a request came in by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wire {
    OpenAi,
    Anthropic,
    Ollama,
}

/// Counts a stream as dropped when it goes before its last event.
struct StreamGuard {
    shared: Arc<Shared>,
    finished: bool,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.shared.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }
}

pub struct FakeModelServer {
    /// `http://127.0.0.1:PORT/v1`
    pub url: String,
    shared: Arc<Shared>,
    _runtime: tokio::runtime::Runtime,
}

impl FakeModelServer {
    pub fn start() -> FakeModelServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .route("/v1/chat/completions", post(answer))
            .route("/v1/messages", post(answer))
            .route("/v1/models", get(models))
            .route("/extras/tokenize/count", post(count_tokens))
            .route("/api/chat", post(answer))
            .route("/api/tags", get(tags))
            .route("/api/version", get(version))
            .route("/props", get(props))
            .with_state(shared.clone());
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        runtime.spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        FakeModelServer {
            url: format!("http://127.0.0.1:{port}/v1"),
            shared,
            _runtime: runtime,
        }
    }

    /// Requests whose body contains `contains` ("" for any) get `answers`
    /// in order; the last answer repeats.
    pub fn on(&self, contains: &str, answers: Vec<Answer>) -> &Self {
        self.shared.rules.lock().unwrap().push(Rule {
            contains: contains.to_owned(),
            answers: answers.into(),
        });
        self
    }

    /// Gives the server a tokenizer (as llama-cpp-python's
    /// `/extras/tokenize/count`) that counts `chars_per_token` characters a
    /// token; without one that address is not found.
    pub fn count_tokens(&self, chars_per_token: f64) {
        *self.shared.chars_per_token.lock().unwrap() = Some(chars_per_token);
    }

    /// Makes the server say it is Ollama (`GET /api/version`), as Ollama
    /// does behind its OpenAI-compatible `/v1`.
    pub fn pose_as_ollama(&self) {
        self.shared.ollama.store(true, Ordering::SeqCst);
    }

    /// Makes the server say it writes `slots` replies at once (`GET
    /// /props`, as llama.cpp's server started with `--parallel`).
    pub fn slots(&self, slots: usize) {
        self.shared.slots.store(slots, Ordering::SeqCst);
    }

    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }

    pub fn dropped(&self) -> usize {
        self.shared.dropped.load(Ordering::SeqCst)
    }

    /// When each event of every stream so far was sent, in order.
    pub fn sent(&self) -> Vec<Instant> {
        self.shared.sent.lock().unwrap().clone()
    }
}

struct DropCounter(Arc<Shared>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

/// `POST /extras/tokenize/count`: the tokens of `input`, when the server
/// was given a tokenizer.
async fn count_tokens(state: State<Arc<Shared>>, body: String) -> Response {
    let State(shared) = state;
    let Some(chars_per_token) = *shared.chars_per_token.lock().unwrap() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let value: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let chars = value["input"].as_str().unwrap_or_default().chars().count();
    axum::Json(json!({"count": (chars as f64 / chars_per_token).ceil() as u64})).into_response()
}

/// `GET /api/tags`: Ollama's list of its models.
async fn tags() -> Response {
    axum::Json(json!({"models": [{"name": "llama3.1:8b", "model": "llama3.1:8b"}]})).into_response()
}

/// `GET /api/version`, answered only by a server posing as Ollama.
async fn version(state: State<Arc<Shared>>) -> Response {
    if state.0.ollama.load(Ordering::SeqCst) {
        axum::Json(json!({"version": "0.12.6"})).into_response()
    } else {
        StatusCode::NOT_FOUND.into_response()
    }
}

/// `GET /props`, answered only by a server given slots.
async fn props(state: State<Arc<Shared>>) -> Response {
    match state.0.slots.load(Ordering::SeqCst) {
        0 => StatusCode::NOT_FOUND.into_response(),
        slots => axum::Json(json!({"total_slots": slots})).into_response(),
    }
}

/// `GET /v1/models`: the one model tests configure.
async fn models() -> Response {
    axum::Json(json!({"object": "list", "data": [{"id": "llama3.1:8b", "object": "model"}]}))
        .into_response()
}

async fn answer(state: State<Arc<Shared>>, uri: Uri, headers: HeaderMap, body: String) -> Response {
    let State(shared) = state;
    let value: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    shared.received.lock().unwrap().push(Received {
        path: uri.path().to_owned(),
        headers,
        body: value.clone(),
        at: Instant::now(),
    });
    let answer = {
        let mut rules = shared.rules.lock().unwrap();
        rules
            .iter_mut()
            .find(|rule| body.contains(&rule.contains))
            .map(|rule| {
                if rule.answers.len() > 1 {
                    rule.answers.pop_front().unwrap()
                } else {
                    rule.answers[0].clone()
                }
            })
    };
    let mut answer = answer;
    loop {
        match answer {
            Some(Answer::Delayed(delay, then)) => {
                tokio::time::sleep(delay).await;
                answer = Some(*then);
            }
            Some(Answer::With(reply)) => answer = Some((reply.0)(&body)),
            _ => break,
        }
    }
    let wire = if uri.path().ends_with("/messages") {
        Wire::Anthropic
    } else if uri.path() == "/api/chat" {
        Wire::Ollama
    } else {
        Wire::OpenAi
    };
    let model = value["model"].as_str().unwrap_or("unknown").to_owned();
    // A request that asks for a stream gets its text as server-sent events.
    if value["stream"] == true {
        let include_usage = value["stream_options"]["include_usage"] == true;
        let streamed = |text: String, every| {
            let usage = usage(&shared, &value, &text);
            let usage = (include_usage || wire != Wire::OpenAi).then_some(usage);
            stream(shared.clone(), wire, model.clone(), text, every, usage)
        };
        match answer {
            Some(Answer::Text(text)) => return streamed(text, Duration::ZERO),
            Some(Answer::Paced(text, every)) => return streamed(text, every),
            _ => {}
        }
    }
    let answer = match answer {
        Some(Answer::Paced(text, _)) => Some(Answer::Text(text)),
        other => other,
    };
    let usage = match &answer {
        Some(Answer::Text(text)) => usage(&shared, &value, text),
        _ => Usage {
            prompt: 0,
            reply: 0,
            cached: 0,
        },
    };
    render(shared, wire, model, &body, answer, usage).await
}

/// `text` as a stream of server-sent events in the provider's format, a
/// word (with the space before it) a chunk, `every` apart.
fn stream(
    shared: Arc<Shared>,
    wire: Wire,
    model: String,
    text: String,
    every: Duration,
    usage: Option<Usage>,
) -> Response {
    let model = format!("{model}-20260101");
    let mut events: Vec<String> = Vec::new();
    let pieces: Vec<String> = text.split_inclusive(' ').map(str::to_owned).collect();
    if wire == Wire::Ollama {
        for piece in &pieces {
            events.push(format!(
                "{}\n",
                json!({"model": model, "message": {"role": "assistant", "content": piece}, "done": false})
            ));
        }
        events.push(format!(
            "{}\n",
            json!({"model": model, "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop",
                   "prompt_eval_count": usage.map(|u| u.prompt), "eval_count": usage.map(|u| u.reply)})
        ));
    } else if wire == Wire::Anthropic {
        events.push(format!(
            "event: message_start\ndata: {}\n\n",
            json!({"type": "message_start", "message": {"model": model, "usage": usage.map(|u| json!({
                "input_tokens": u.prompt - u.cached, "cache_read_input_tokens": u.cached, "output_tokens": 1,
            }))}})
        ));
        for piece in &pieces {
            events.push(format!(
                "event: content_block_delta\ndata: {}\n\n",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}})
            ));
        }
        events.push(format!(
            "event: message_delta\ndata: {}\n\n",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage.map(|u| json!({"output_tokens": u.reply}))})
        ));
        events.push("event: message_stop\ndata: {\"type\": \"message_stop\"}\n\n".to_owned());
    } else {
        for piece in &pieces {
            events.push(format!(
                "data: {}\n\n",
                json!({"model": model, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]})
            ));
        }
        events.push(format!(
            "data: {}\n\n",
            json!({"model": model, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        ));
        // Asked for with `stream_options`, as OpenAI sends it: a last chunk
        // with no choices.
        if let Some(usage) = usage {
            events.push(format!(
                "data: {}\n\n",
                json!({"model": model, "choices": [], "usage": openai_usage(usage)})
            ));
        }
        events.push("data: [DONE]\n\n".to_owned());
    }
    let guard = StreamGuard {
        shared,
        finished: false,
    };
    let chunks = futures_util::stream::unfold(
        (events.into_iter().peekable(), true, guard),
        move |(mut events, first, mut guard)| async move {
            let event = events.next()?;
            if !first && !every.is_zero() {
                tokio::time::sleep(every).await;
            }
            guard.finished = events.peek().is_none();
            guard.shared.sent.lock().unwrap().push(Instant::now());
            Some((
                Ok::<_, std::convert::Infallible>(event),
                (events, false, guard),
            ))
        },
    );
    (
        StatusCode::OK,
        [(
            "content-type",
            if wire == Wire::Ollama {
                "application/x-ndjson"
            } else {
                "text/event-stream"
            },
        )],
        axum::body::Body::from_stream(chunks),
    )
        .into_response()
}

/// The HTTP response for `answer`.
async fn render(
    shared: Arc<Shared>,
    wire: Wire,
    model: String,
    body: &str,
    answer: Option<Answer>,
    usage: Usage,
) -> Response {
    match answer {
        None => (
            StatusCode::BAD_REQUEST,
            format!("no rule matches this request: {body}"),
        )
            .into_response(),
        Some(Answer::Text(text)) if wire == Wire::Ollama => axum::Json(json!({
            "model": format!("{model}-20260101"),
            "message": {"role": "assistant", "content": text},
            "done": true,
            "done_reason": "stop",
            "prompt_eval_count": usage.prompt,
            "eval_count": usage.reply,
        }))
        .into_response(),
        Some(Answer::Text(text)) if wire == Wire::Anthropic => axum::Json(json!({
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": format!("{model}-20260101"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": usage.prompt - usage.cached, "cache_read_input_tokens": usage.cached, "output_tokens": usage.reply},
        }))
        .into_response(),
        Some(Answer::Text(text)) => axum::Json(json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": format!("{model}-20260101"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": openai_usage(usage),
        }))
        .into_response(),
        Some(Answer::Status {
            code,
            retry_after,
            body,
        }) => {
            let mut response = (StatusCode::from_u16(code).unwrap(), body).into_response();
            if let Some(after) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", after.parse().unwrap());
            }
            response
        }
        Some(Answer::Raw(body)) => (
            StatusCode::OK,
            [("content-type", "application/json")],
            body,
        )
            .into_response(),
        Some(Answer::Hang) => {
            let _counter = DropCounter(shared.clone());
            tokio::time::sleep(Duration::from_secs(3600)).await;
            StatusCode::REQUEST_TIMEOUT.into_response()
        }
        Some(Answer::Delayed(..) | Answer::With(..) | Answer::Paced(..)) => {
            unreachable!("delays and computed replies are resolved before answering")
        }
    }
}

fn openai_usage(usage: Usage) -> Value {
    json!({
        "prompt_tokens": usage.prompt,
        "completion_tokens": usage.reply,
        "total_tokens": usage.prompt + usage.reply,
        "prompt_tokens_details": {"cached_tokens": usage.cached},
    })
}

/// What the prompt of `step` (run by `archetype`) always contains.
pub fn step_marker(step: &str, archetype: &str) -> String {
    format!("<current_step>{step} ({archetype})</current_step>")
}

/// The reply of `step` in the example's scripted dry run of
/// `creative_draft_scene` (its file holds a text, or `{"reply": JSON}`).
pub fn scripted_reply(step: &str) -> String {
    let replies: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples/scripted/draft-the-reckoning.json"),
        )
        .unwrap(),
    )
    .unwrap();
    match &replies[step] {
        Value::String(text) => text.clone(),
        Value::Object(object) if object.contains_key("reply") => object["reply"].to_string(),
        other => other.to_string(),
    }
}

/// Answers a finding step (`check_continuity`, `evaluate_reader_experience`)
/// with `full`, its whole reply, at any tier: a t1 model is asked in
/// micro-steps (triage, then a finding per problem, then its evidence),
/// each answered from `full`, told apart by the schema its packet names and
/// the problem it carries.
pub fn finding_step(full: &str) -> Answer {
    let full: Value = serde_json::from_str(full).expect("a finding step's reply is JSON");
    Answer::With(Reply(Arc::new(move |body: &str| {
        let key = if full.get("concerns").is_some() {
            "concerns"
        } else {
            "findings"
        };
        let findings: Vec<Value> = full[key].as_array().cloned().unwrap_or_default();
        // A message's text as the request's JSON body carries it.
        let escaped = |text: &str| {
            let json = serde_json::to_string(text).unwrap();
            json[1..json.len() - 1].to_owned()
        };
        let about = || {
            findings
                .iter()
                .find(|finding| body.contains(&escaped(finding["message"].as_str().unwrap())))
                .cloned()
                .expect("a micro-step names one of the findings")
        };
        let reply = if body.contains("micro_triage") {
            let mut triage = full.clone();
            triage.as_object_mut().unwrap().remove(key);
            triage.as_object_mut().unwrap().remove("pass");
            triage["problems"] = findings
                .iter()
                .map(|finding| finding["message"].clone())
                .collect();
            triage
        } else if body.contains("micro_finding") {
            let mut finding = about();
            finding.as_object_mut().unwrap().remove("quote");
            finding.as_object_mut().unwrap().remove("file");
            finding
        } else if body.contains("micro_evidence") {
            json!({ "quote": about()["quote"] })
        } else {
            full.clone()
        };
        Answer::Text(reply.to_string())
    })))
}

/// Scripts the server to answer each agent of `creative_draft_scene` as the
/// example's scripted dry run does, told apart by their session state.
pub fn serve_draft_scene(server: &FakeModelServer, draft_extra: &str) {
    let reply = scripted_reply;
    // Each step's session state names it, whatever the prompt's tier.
    server.on(
        &step_marker("brief", "planner"),
        vec![Answer::text(reply("brief"))],
    );
    server.on(
        &step_marker("draft", "writer"),
        vec![Answer::text(format!("{}{draft_extra}", reply("draft")))],
    );
    server.on(
        &step_marker("polish", "editor"),
        vec![Answer::text(reply("polish"))],
    );
    server.on(
        &step_marker("continuity", "continuity"),
        vec![finding_step(&reply("continuity"))],
    );
    server.on(
        &step_marker("critique", "critic"),
        vec![finding_step(&reply("critique"))],
    );
}
