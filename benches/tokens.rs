//! The price of a drafted scene, read from the recorded example
//! (`examples/cassettes/draft-the-reckoning.jsonl`: every request a run of
//! `creative_draft_scene` sent, and its reply).
//!
//! Run with `cargo bench --bench tokens`. It prints, per call and per
//! drafted scene:
//! - the prompt's and the reply's tokens (the server's figures where the
//!   cassette recorded them, else four characters a token);
//! - the share of each prompt a prefix cache can serve: the longest prefix
//!   it shares byte for byte with an earlier prompt of the run (a second
//!   run on the same manuscript is served at least 90% from the cache:
//!   `tests/models.rs`, `each_step_says_what_its_calls_cost…`);
//! - the prompt tokens a server evaluates without a prompt cache (before)
//!   and with one (after: only what no earlier prompt began with).
//!
//! Pass another cassette with `CONTROL_ROOM_BENCH_CASSETTE=path` (one
//! recorded with `--record` against a real server carries its figures).

#[path = "../tests/support/model_server/prefix.rs"]
mod prefix;

use std::path::PathBuf;

use serde_json::Value;

/// One recorded call.
struct Call {
    step: String,
    prompt_text: String,
    prompt: u64,
    reply: u64,
    /// Whether the figures are the server's.
    counted: bool,
}

fn calls(path: &PathBuf) -> Vec<Call> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str::<Value>(line).expect("a cassette line is JSON"))
        .filter(|exchange| exchange.get("messages").is_some())
        .map(|exchange| {
            let prompt_text: String = exchange["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|message| message["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let reply_text = exchange["reply"]["text"].as_str().unwrap_or_default();
            let usage = &exchange["reply"]["usage"];
            let estimate = |text: &str| text.chars().count().div_ceil(4) as u64;
            let counted = usage["prompt"].is_u64() && usage["estimated"].as_u64().unwrap_or(0) == 0;
            Call {
                step: format!(
                    "{} ({})",
                    exchange["step_id"].as_str().unwrap_or("?"),
                    exchange["prompt_type"].as_str().unwrap_or("?")
                ),
                prompt: if counted {
                    usage["prompt"].as_u64().unwrap_or(0)
                } else {
                    estimate(&prompt_text)
                },
                reply: if counted {
                    usage["reply"].as_u64().unwrap_or(0)
                } else {
                    estimate(reply_text)
                },
                prompt_text,
                counted,
            }
        })
        .collect()
}

fn main() {
    let path = std::env::var("CONTROL_ROOM_BENCH_CASSETTE").map_or_else(
        |_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("examples/cassettes/draft-the-reckoning.jsonl")
        },
        PathBuf::from,
    );
    let calls = calls(&path);
    assert!(!calls.is_empty(), "{} records no call", path.display());
    println!("\nThe price of a drafted scene: {}\n", path.display());
    println!("| call | prompt tokens | reply tokens | shared with an earlier prompt of the run |");
    println!("|---|---|---|---|");
    let mut earlier: Vec<&str> = Vec::new();
    let (mut prompt, mut reply, mut cacheable) = (0u64, 0u64, 0u64);
    for call in &calls {
        let shared = prefix::shared_prefix(&call.prompt_text, &earlier);
        let share = shared as f64 / call.prompt_text.len().max(1) as f64;
        let cached = (call.prompt as f64 * share).floor() as u64;
        println!(
            "| {} | {} | {} | {:.0}% |",
            call.step,
            call.prompt,
            call.reply,
            share * 100.0
        );
        prompt += call.prompt;
        reply += call.reply;
        cacheable += cached;
        earlier.push(&call.prompt_text);
    }
    let counted = calls.iter().filter(|call| call.counted).count();
    let percent = |part: u64| part as f64 * 100.0 / prompt.max(1) as f64;
    println!();
    println!(
        "| per drafted scene | {} calls | figures: {} |",
        calls.len(),
        if counted == calls.len() {
            "the server's".to_owned()
        } else {
            format!(
                "{counted} of {} the server's, the rest estimated",
                calls.len()
            )
        }
    );
    println!("|---|---|---|");
    println!("| prompt tokens sent | {prompt} | |");
    println!("| reply tokens | {reply} | |");
    println!("| prompt tokens evaluated, no prompt cache (before) | {prompt} | 100% |");
    println!(
        "| prompt tokens evaluated with a prefix cache (after) | {} | {:.0}% |",
        prompt - cacheable,
        100.0 - percent(cacheable)
    );
    println!(
        "| cache hit rate (prompt tokens a prefix cache serves) | {:.0}% | |",
        percent(cacheable)
    );
}
