//! Model providers over real HTTP, against the fake model server.

use crate::support::model_server;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use control_room::llm::config::Layer;
use control_room::llm::model::{Message, Model, ModelRequest, Written};
use control_room::llm::{self, LlmConfig};
use model_server::{Answer, FakeModelServer};
use serde_json::{Value, json};

const KEY: &str = "sk-test-0123456789abcdefghijklmnop";

fn env(name: &str) -> Option<String> {
    (name == "FAKE_MODEL_KEY").then(|| KEY.to_owned())
}

fn connect(settings: Value) -> Arc<dyn Model> {
    let layer = Layer::from_json("controlRoom.llm", &settings).unwrap();
    let config = LlmConfig::resolve(&[layer]).unwrap();
    llm::connect(&config, Path::new("."), &env, None).unwrap()
}

fn request(step_id: &str, archetype: &str, json_reply: bool) -> ModelRequest {
    ModelRequest {
        step_id: step_id.into(),
        agent_archetype: archetype.into(),
        prompt_type: "check_continuity".into(),
        messages: vec![
            Message::system("You are the continuity editor."),
            Message::user(format!("Check this text ({step_id}).")),
        ],
        json_reply,
        schema: json_reply.then(|| json!({"type": "object", "required": ["pass"]})),
        reply_limit: None,
        context_window: None,
        model: None,
    }
}

fn block_on<T>(future: impl Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

#[test]
fn both_wire_formats_carry_the_request_and_the_reply() {
    let server = FakeModelServer::start();
    server.on("", vec![Answer::text("{\"pass\": true, \"findings\": []}")]);
    let model = connect(json!({
        "provider": "openai",
        "baseUrl": server.url,
        "model": "llama3.1:8b",
        "apiKeyEnv": "FAKE_MODEL_KEY",
        "temperature": 1.5,
        "agents": {"critic": {"provider": "anthropic", "base_url": server.url, "model": "claude-x", "api_key_env": "FAKE_MODEL_KEY"}},
    }));

    let reply = block_on(model.complete(&request("continuity", "continuity", true))).unwrap();
    assert_eq!(reply.text, "{\"pass\": true, \"findings\": []}");
    assert_eq!(reply.actor.provider, "openai");
    assert_eq!(
        reply.actor.model, "llama3.1:8b-20260101",
        "the served model"
    );
    assert_eq!(reply.actor.requested_model.as_deref(), Some("llama3.1:8b"));
    assert_eq!(
        reply.effective.response_format.as_deref(),
        Some("json_schema")
    );
    assert_eq!(reply.effective.temperature, Some(1.5));

    let reply = block_on(model.complete(&request("critique", "critic", true))).unwrap();
    assert_eq!(reply.actor.provider, "anthropic");
    assert_eq!(reply.actor.model, "claude-x-20260101");
    assert_eq!(reply.requested.temperature, Some(1.5));
    assert_eq!(
        reply.effective.temperature,
        Some(1.0),
        "Anthropic's range ends at 1"
    );
    assert_eq!(
        reply.effective.response_format.as_deref(),
        Some("json_prompt")
    );

    let received = server.received();
    assert_eq!(received.len(), 2);
    let openai = &received[0];
    assert_eq!(openai.path, "/v1/chat/completions");
    assert_eq!(openai.headers["authorization"], format!("Bearer {KEY}"));
    assert_eq!(openai.body["stream"], true, "replies are streamed");
    assert_eq!(openai.body["messages"][0]["role"], "system");
    assert_eq!(
        openai.body["response_format"]["json_schema"]["schema"]["required"],
        json!(["pass"])
    );
    assert_eq!(
        openai.body["response_format"]["json_schema"]["strict"],
        true
    );
    let anthropic = &received[1];
    assert_eq!(anthropic.path, "/v1/messages");
    assert_eq!(anthropic.headers["x-api-key"], KEY);
    assert_eq!(anthropic.headers["anthropic-version"], "2023-06-01");
    assert!(anthropic.headers.get("authorization").is_none());
    // The system prompt (the stable layers) is marked for Anthropic's cache.
    assert_eq!(
        anthropic.body["system"],
        json!([{"type": "text", "text": "You are the continuity editor.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(anthropic.body["messages"].as_array().unwrap().len(), 1);
    assert_eq!(anthropic.body["messages"][0]["role"], "user");
    assert!(anthropic.body["max_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn rate_limits_and_server_errors_are_retried_with_backoff() {
    let server = FakeModelServer::start();
    server.on(
        "(limited)",
        vec![
            Answer::Status {
                code: 429,
                retry_after: Some("1".into()),
                body: "{\"error\": {\"message\": \"slow down\"}}".into(),
            },
            Answer::text("after the wait"),
        ],
    );
    server.on(
        "(flaky)",
        vec![
            Answer::status(500),
            Answer::status(503),
            Answer::text("third time"),
        ],
    );
    server.on("(down)", vec![Answer::status(502)]);
    server.on(
        "(refused)",
        vec![Answer::Status {
            code: 401,
            retry_after: None,
            body: format!("{{\"error\": {{\"message\": \"bad key {KEY}\"}}}}"),
        }],
    );
    let model =
        connect(json!({"baseUrl": server.url, "apiKeyEnv": "FAKE_MODEL_KEY", "maxRetries": 2}));

    let started = Instant::now();
    let reply = block_on(model.complete(&request("limited", "writer", false))).unwrap();
    assert_eq!(reply.text, "after the wait");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was honoured"
    );

    let reply = block_on(model.complete(&request("flaky", "writer", false))).unwrap();
    assert_eq!(reply.text, "third time");
    let flaky: Vec<Instant> = server
        .received()
        .iter()
        .filter(|r| r.body.to_string().contains("(flaky)"))
        .map(|r| r.at)
        .collect();
    assert_eq!(flaky.len(), 3);
    let (first_wait, second_wait) = (flaky[1] - flaky[0], flaky[2] - flaky[1]);
    assert!(first_wait >= Duration::from_millis(200), "{first_wait:?}");
    assert!(second_wait >= Duration::from_millis(400), "{second_wait:?}");

    let error = block_on(model.complete(&request("down", "writer", false)))
        .unwrap_err()
        .to_string();
    assert!(error.contains("HTTP 502"), "{error}");
    assert!(error.contains("after 3 attempts"), "{error}");

    let before = server.received().len();
    let error = block_on(model.complete(&request("refused", "writer", false)))
        .unwrap_err()
        .to_string();
    assert_eq!(server.received().len(), before + 1, "a 401 is not retried");
    assert!(error.contains("HTTP 401"), "{error}");
    assert!(error.contains("api_key_env"), "{error}");
    assert!(
        !error.contains(KEY),
        "the key never reaches an error: {error}"
    );
}

#[test]
fn timeouts_malformed_replies_and_missing_servers_say_what_happened() {
    let server = FakeModelServer::start();
    server.on("(hang)", vec![Answer::Hang]);
    server.on("(garbled)", vec![Answer::Raw("{\"choices\": [".into())]);
    server.on("(shapeless)", vec![Answer::Raw("{\"answer\": 42}".into())]);
    let model = connect(json!({"baseUrl": server.url, "timeout_s": 0.5, "max_retries": 0}));

    let started = Instant::now();
    let error = block_on(model.complete(&request("hang", "writer", false)))
        .unwrap_err()
        .to_string();
    assert!(error.contains("did not answer within 0.5 s"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(3));

    let error = block_on(model.complete(&request("garbled", "writer", false)))
        .unwrap_err()
        .to_string();
    assert!(error.contains("not JSON"), "{error}");
    let error = block_on(model.complete(&request("shapeless", "writer", false)))
        .unwrap_err()
        .to_string();
    assert!(error.contains("no `choices`"), "{error}");

    // A port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/v1",
        closed.local_addr().unwrap().port()
    );
    drop(closed);
    let model = connect(json!({"baseUrl": url, "max_retries": 1}));
    let error = block_on(model.complete(&request("nobody", "writer", false)))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(&format!("no model server at {url}")),
        "{error}"
    );
    assert!(error.contains("control-room.toml"), "{error}");
    assert!(error.contains("after 2 attempts"), "{error}");
}

#[test]
fn cancelling_drops_the_request_promptly() {
    let server = FakeModelServer::start();
    server.on("", vec![Answer::Hang]);
    let model = connect(json!({"baseUrl": server.url, "timeout_s": 600}));
    let request = request("draft", "writer", false);
    let started = Instant::now();
    block_on(async {
        tokio::select! {
            _ = model.complete(&request) => panic!("the hung server answered"),
            () = tokio::time::sleep(Duration::from_millis(300)) => {}
        }
    });
    assert_eq!(server.received().len(), 1);
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.dropped() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(server.dropped(), 1, "the server saw the client go");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[test]
fn replies_lose_keys_and_key_shaped_text() {
    let server = FakeModelServer::start();
    server.on(
        "",
        vec![Answer::text(format!(
            "The key is {KEY}; another is sk-ant-api03-ZZZZZZZZZZZZZZZZZZZZZZZZZZ."
        ))],
    );
    let model = connect(json!({"baseUrl": server.url, "apiKeyEnv": "FAKE_MODEL_KEY"}));
    let reply = block_on(model.complete(&request("draft", "writer", false))).unwrap();
    assert_eq!(reply.text, "The key is [redacted]; another is [redacted].");
}

#[test]
fn a_missing_key_variable_is_named_and_a_pasted_key_refused() {
    let layer =
        Layer::from_json("controlRoom.llm", &json!({"apiKeyEnv": "NOT_SET_ANYWHERE"})).unwrap();
    let config = LlmConfig::resolve(&[layer]).unwrap();
    let error = llm::connect(&config, Path::new("."), &|_| None, None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("NOT_SET_ANYWHERE") && error.contains("not set"),
        "{error}"
    );
}

/// llama-cpp-python's answer to a `response_format` it does not take.
fn refuses(kind: &str) -> Answer {
    Answer::Status {
        code: 500,
        retry_after: None,
        body: format!(
            "{{\"error\": {{\"message\": \"1 validation error: ('body', 'response_format', 'type') Input should be 'text' or 'json_object', input: '{kind}'\"}}}}"
        ),
    }
}

#[test]
fn a_server_that_refuses_json_schema_is_asked_with_a_json_object_schema_and_remembers_it() {
    let server = FakeModelServer::start();
    server.on("\"type\":\"json_schema\"", vec![refuses("json_schema")]);
    server.on("", vec![Answer::text("{\"pass\": true}")]);
    // Retries allowed: a refused format is still asked once, not three times.
    let model = connect(json!({"provider": "openai", "baseUrl": server.url, "maxRetries": 2}));
    let reply = block_on(model.complete(&request("one", "continuity", true))).unwrap();
    assert_eq!(reply.text, "{\"pass\": true}");
    assert_eq!(
        reply.effective.response_format.as_deref(),
        Some("json_object")
    );
    let received = server.received();
    assert_eq!(received.len(), 2, "refused once, then asked another way");
    assert_eq!(received[0].body["response_format"]["type"], "json_schema");
    assert_eq!(received[1].body["response_format"]["type"], "json_object");
    assert_eq!(
        received[1].body["response_format"]["schema"]["required"],
        json!(["pass"])
    );
    // Learned: the next JSON step goes straight to the format that works.
    block_on(model.complete(&request("two", "continuity", true))).unwrap();
    let received = server.received();
    assert_eq!(received.len(), 3);
    assert_eq!(received[2].body["response_format"]["type"], "json_object");
    // Prose steps never carry a response_format.
    block_on(model.complete(&request("three", "writer", false))).unwrap();
    assert!(server.received()[3].body.get("response_format").is_none());
}

#[test]
fn a_server_that_refuses_every_response_format_is_asked_for_json_in_the_prompt() {
    let server = FakeModelServer::start();
    server.on("\"response_format\"", vec![refuses("json_object")]);
    server.on("", vec![Answer::text("{\"pass\": false}")]);
    let model = connect(json!({"provider": "openai", "baseUrl": server.url}));
    let reply = block_on(model.complete(&request("one", "continuity", true))).unwrap();
    assert_eq!(
        reply.effective.response_format.as_deref(),
        Some("json_prompt")
    );
    let received = server.received();
    assert_eq!(received.len(), 3, "json_schema, json_object, then none");
    assert!(received[2].body.get("response_format").is_none());
}

#[test]
fn a_forced_structured_output_is_never_stepped_down_nor_retried() {
    let server = FakeModelServer::start();
    server.on("\"type\":\"json_schema\"", vec![refuses("json_schema")]);
    server.on("", vec![Answer::text("{\"pass\": true}")]);
    let model = connect(json!({
        "provider": "openai", "baseUrl": server.url, "maxRetries": 2,
        "structuredOutput": "json_schema",
    }));
    let error = block_on(model.complete(&request("one", "continuity", true))).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("refused the request's response_format"),
        "{error}"
    );
    assert_eq!(
        server.received().len(),
        1,
        "asked once: a retry cannot help"
    );
}

#[test]
fn a_streamed_reply_may_take_longer_than_the_timeout_while_its_words_keep_coming() {
    let server = FakeModelServer::start();
    // Eight words 300 ms apart: 2.1 s in all, never 1 s without a word.
    server.on(
        "",
        vec![Answer::Paced(
            "The tide came in over the ninth stone.".into(),
            Duration::from_millis(300),
        )],
    );
    let model = connect(json!({"baseUrl": server.url, "timeoutS": 1}));
    let told = std::sync::Mutex::new(Vec::new());
    let on_text = |written: Written<'_>| {
        told.lock().unwrap().push(written.words);
    };
    let started = Instant::now();
    let reply =
        block_on(model.complete_streaming(&request("draft", "writer", false), &on_text)).unwrap();
    assert_eq!(reply.text, "The tide came in over the ninth stone.");
    assert!(!reply.cut_off);
    assert!(started.elapsed() > Duration::from_secs(2));
    let told = told.into_inner().unwrap();
    assert_eq!(told, (1..=8).collect::<Vec<_>>(), "each word as it came");
}

#[test]
fn a_stream_that_stops_sending_fails_after_the_timeout_not_the_total() {
    let server = FakeModelServer::start();
    server.on(
        "",
        vec![Answer::Paced(
            "The tide stopped".into(),
            Duration::from_secs(30),
        )],
    );
    let model = connect(json!({"baseUrl": server.url, "timeoutS": 1, "maxRetries": 0}));
    let started = Instant::now();
    let error = block_on(model.complete(&request("draft", "writer", false))).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("sent nothing more of its reply for 1 s (timeout_s)"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_reply_longer_than_the_total_timeout_fails_however_steady() {
    let server = FakeModelServer::start();
    server.on(
        "",
        vec![Answer::Paced(
            "one two three four five six".into(),
            Duration::from_millis(400),
        )],
    );
    let model = connect(json!({"baseUrl": server.url, "timeoutS": 1, "totalTimeoutS": 1.5}));
    let error = block_on(model.complete(&request("draft", "writer", false))).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("did not finish its reply within 1.5 s (total_timeout_s)"),
        "{error}"
    );
}

#[test]
fn cancelling_a_streamed_reply_closes_the_stream() {
    let server = FakeModelServer::start();
    server.on(
        "",
        vec![Answer::Paced(
            "word ".repeat(200),
            Duration::from_millis(50),
        )],
    );
    let model = connect(json!({"baseUrl": server.url}));
    let request = request("draft", "writer", false);
    let on_text = |_: Written<'_>| {};
    block_on(async {
        tokio::select! {
            _ = model.complete_streaming(&request, &on_text) => panic!("200 words came in 300 ms"),
            () = tokio::time::sleep(Duration::from_millis(300)) => {}
        }
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.dropped() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(server.dropped(), 1, "the server saw the stream closed");
}

#[test]
fn stream_false_asks_for_the_whole_reply_at_once() {
    let server = FakeModelServer::start();
    server.on("", vec![Answer::text("whole")]);
    let model = connect(json!({"baseUrl": server.url, "stream": false}));
    let reply = block_on(model.complete(&request("draft", "writer", false))).unwrap();
    assert_eq!(reply.text, "whole");
    assert_eq!(server.received()[0].body["stream"], false);
}

/// `control-room prompt … --json` for `structural_canon`'s `extract` step,
/// on a copy of the example whose model is `server`.
fn canon_prompt(root: &Path) -> Value {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["prompt", "structural_canon", "extract", "--json", "--arg"])
        .arg("scene_path=Story/Scenes/SCN-the-gate.md")
        .arg("--dir")
        .arg(root)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

fn example_with_model(url: &str, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road"),
        dir.path(),
    );
    std::fs::write(
        dir.path().join("control-room.toml"),
        format!(
            "[llm]\nprovider = \"openai\"\nbase_url = \"{url}\"\nmodel = \"llama3.1:8b\"\nmax_retries = 0\n{extra}"
        ),
    )
    .unwrap();
    dir
}

fn copy(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn a_prompt_is_counted_by_the_servers_tokenizer_where_it_has_one() {
    let server = FakeModelServer::start();
    let dir = example_with_model(&server.url, "");
    // Without a tokenizer on the server: about four characters a token.
    let guessed = canon_prompt(dir.path());
    assert_eq!(guessed["chars_per_token"], Value::Null, "{guessed}");
    // With one that counts two characters a token, the same prompt costs
    // twice as many tokens.
    server.count_tokens(2.0);
    let counted = canon_prompt(dir.path());
    let measured = counted["chars_per_token"].as_f64().unwrap();
    assert!((1.95..=2.0).contains(&measured), "{measured}");
    let ratio = counted["tokens"].as_f64().unwrap() / guessed["tokens"].as_f64().unwrap();
    assert!(
        (1.95..=2.1).contains(&ratio),
        "{ratio}: {counted} / {guessed}"
    );
}

#[test]
fn a_prompt_counted_at_four_characters_a_token_no_longer_overflows_a_model_that_counts_more() {
    // A window the step's prompt fits at four characters a token, and not
    // at one: counted by the server's tokenizer, the run says it is too
    // large before sending it, instead of the server cutting it.
    let server = FakeModelServer::start();
    server.on("", vec![Answer::text("- Kael's hair is black.")]);
    let dir = example_with_model(&server.url, "");
    let tokens = canon_prompt(dir.path())["tokens"].as_u64().unwrap();
    let window = tokens * 2 + 1200;
    let dir = example_with_model(&server.url, &format!("context_window = {window}\n"));
    let run = |dir: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
            .args(["run", "structural_canon", "--arg"])
            .arg("scene_path=Story/Scenes/SCN-the-gate.md")
            .arg("--dir")
            .arg(dir)
            .output()
            .unwrap()
    };
    let asked = |server: &FakeModelServer| {
        server
            .received()
            .iter()
            .filter(|r| r.path.ends_with("/chat/completions"))
            .count()
    };
    run(dir.path());
    assert!(
        asked(&server) >= 1,
        "at four a token the prompt fits and is sent"
    );

    let server = FakeModelServer::start();
    server.on("", vec![Answer::text("- Kael's hair is black.")]);
    server.count_tokens(1.0);
    let dir = example_with_model(&server.url, &format!("context_window = {window}\n"));
    let output = run(dir.path());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        asked(&server),
        0,
        "nothing sent that the model cannot take: {said}"
    );
    assert!(
        said.contains("needs about") && said.contains("even trimmed"),
        "{said}"
    );
}

#[test]
fn ollama_is_told_the_window_each_prompt_was_fitted_to_and_its_reply_limit() {
    let server = FakeModelServer::start();
    server.on(
        "\"stream\":false",
        vec![Answer::Raw(
            json!({"model": "llama3.1:8b", "message": {"role": "assistant", "content": "The tide turned and"},
                   "done": true, "done_reason": "length", "prompt_eval_count": 40})
            .to_string(),
        )],
    );
    server.on("", vec![Answer::text("{\"pass\": true, \"findings\": []}")]);
    let root = server.url.trim_end_matches("/v1").to_owned();
    // A base URL copied from the OpenAI-compatible setup works too.
    for base_url in [root.clone(), server.url.clone()] {
        let model =
            connect(json!({"provider": "ollama", "baseUrl": base_url, "model": "llama3.1:8b"}));
        let mut asked = request("continuity", "continuity", true);
        asked.reply_limit = Some(500);
        asked.context_window = Some(8192);
        let reply = block_on(model.complete(&asked)).unwrap();
        assert_eq!(
            reply.text, "{\"pass\": true, \"findings\": []}",
            "read from its stream"
        );
        assert_eq!(reply.actor.provider, "ollama");
        assert!(!reply.cut_off);
    }
    let received = server.received();
    assert_eq!(received.len(), 2);
    for call in &received {
        assert_eq!(call.path, "/api/chat");
        assert_eq!(call.body["options"]["num_ctx"], 8192);
        assert_eq!(call.body["options"]["num_predict"], 500);
        assert_eq!(call.body["format"]["required"], json!(["pass"]));
        assert_eq!(call.body["stream"], true);
    }

    // Unstreamed, a reply stopped at its limit is marked cut off.
    let model = connect(
        json!({"provider": "ollama", "baseUrl": root, "model": "llama3.1:8b", "stream": false}),
    );
    let reply = block_on(model.complete(&request("draft", "writer", false))).unwrap();
    assert_eq!(reply.text, "The tide turned and");
    assert!(reply.cut_off);
}

#[test]
fn a_run_on_ollama_sends_the_window_its_prompts_were_fitted_to() {
    let server = FakeModelServer::start();
    server.on("", vec![Answer::text("- Kael's hair is black.")]);
    let root = server.url.trim_end_matches("/v1").to_owned();
    let dir = example_with_model(&server.url, "");
    std::fs::write(
        dir.path().join("control-room.toml"),
        format!("[llm]\nprovider = \"ollama\"\nbase_url = \"{root}\"\nmodel = \"llama3.1:8b\"\nmax_retries = 0\n"),
    )
    .unwrap();
    let window = canon_prompt(dir.path())["context_window"].as_u64().unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
        .args(["run", "structural_canon", "--arg"])
        .arg("scene_path=Story/Scenes/SCN-the-gate.md")
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let calls = server.received();
    let chats: Vec<_> = calls
        .iter()
        .filter(|call| call.path == "/api/chat")
        .collect();
    assert!(!chats.is_empty());
    for call in chats {
        assert_eq!(call.body["options"]["num_ctx"], window, "{}", call.body);
    }
}

#[test]
fn doctor_names_ollamas_openai_endpoint_as_a_problem_and_checks_ollamas_own() {
    let server = FakeModelServer::start();
    server.on("", vec![Answer::text("{\"ok\": true}")]);
    server.pose_as_ollama();
    let dir = example_with_model(&server.url, "");
    let doctor = |llm: Value| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_control-room"))
            .args(["doctor", "--format", "json", "--llm", &llm.to_string()])
            .arg(dir.path())
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        (output.status.code(), report["llm"]["endpoints"][0].clone())
    };
    let (status, endpoint) = doctor(json!({"provider": "openai", "baseUrl": server.url}));
    assert_eq!(status, Some(1), "{endpoint}");
    let problem = endpoint["problem"].as_str().unwrap();
    assert!(problem.contains("set provider = \"ollama\""), "{problem}");
    let root = server.url.trim_end_matches("/v1");
    let (status, endpoint) = doctor(json!({"provider": "ollama", "baseUrl": root}));
    assert_eq!(status, Some(0), "{endpoint}");
    assert_eq!(endpoint["problem"], Value::Null);
    assert!(
        endpoint["detail"]
            .as_str()
            .unwrap()
            .contains("serves `llama3.1:8b`"),
        "{endpoint}"
    );
}
