//! How many characters one token of a model holds, measured on its server,
//! so that prompts are fitted to the window with the model's own count
//! rather than a guess of four.
//!
//! Two measures, the later one winning: the server's tokenizer on a sample
//! of manuscript-like text, asked once per endpoint before its first prompt
//! (llama-cpp-python's `/extras/tokenize/count`, llama.cpp's `/tokenize`);
//! and the server's own count of each prompt it was sent (`usage` of a
//! reply), which includes the chat template's tokens and so is what a
//! prompt really costs.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

use super::config::Provider;
use crate::llm::model::Usage;

/// Text like a prompt's: instructions, a scene with dialogue, front matter
/// and JSON, so that the measure holds for what is sent.
const SAMPLE: &str = r#"## What to write
Draft the scene from the brief. Keep the point of view and every canon fact.

---
id: SCN-the-gate
pov: Iria Vell
characters: [Iria, Kael, Ysolde]
---
The Warden turned sideways and came through. He was taller than he had looked from above,
and thinner, with black hair plastered flat by the wind. "They've never had to. The wards
have never failed." He looked up at the dark bulk of the keep. "Who keeps yours?"
She thought of the Commander asleep in the tower with the keys on a cord around her neck,
and put her shoulder to the bar again; it did not move.
{"pass": false, "findings": [{"severity": "error", "quote": "Kael's blue eyes", "message": "grey on the card"}]}
"#;

/// The fewest and most characters a token may hold for a measure to be
/// believed (a broken count is not a calibration).
const PLAUSIBLE: std::ops::RangeInclusive<f32> = 1.0..=12.0;

/// The shortest prompt whose count by the server is learned from.
const MIN_PROMPT_CHARS: usize = 1_000;

/// What is known of an endpoint's tokenizer.
#[derive(Debug, Default)]
pub struct Calibration {
    chars_per_token: Mutex<Option<f32>>,
    probed: tokio::sync::OnceCell<()>,
}

impl Calibration {
    /// Characters per token as measured, if measured.
    pub fn chars_per_token(&self) -> Option<f32> {
        *self
            .chars_per_token
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Learns from the server's count of `chars` characters as `tokens`.
    pub fn learn(&self, chars: usize, tokens: u64) {
        if tokens == 0 {
            return;
        }
        let measured = chars as f32 / tokens as f32;
        if PLAUSIBLE.contains(&measured) {
            *self
                .chars_per_token
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(measured);
        }
    }

    /// Learns from the server's count of a whole prompt of `chars`
    /// characters; a short one (a probe) says more of the chat template
    /// than of the tokenizer, and is not learned from.
    pub fn learn_from_prompt(&self, chars: usize, tokens: u64) {
        if chars >= MIN_PROMPT_CHARS {
            self.learn(chars, tokens);
        }
    }

    /// Asks the server's tokenizer to count [`SAMPLE`], once per endpoint
    /// (later calls return at once); a server without one is left alone.
    pub async fn probe(&self, http: &reqwest::Client, base_url: &str, model: &str) {
        self.probed
            .get_or_init(|| async {
                if self.chars_per_token().is_some() {
                    return;
                }
                if let Some(tokens) = count_on_server(http, base_url, model, SAMPLE).await {
                    self.learn(SAMPLE.chars().count(), tokens);
                }
            })
            .await;
    }
}

/// The tokens of `text` by the server's tokenizer, where it has one.
pub async fn count_on_server(
    http: &reqwest::Client,
    base_url: &str,
    model: &str,
    text: &str,
) -> Option<u64> {
    let root = base_url
        .trim_end_matches('/')
        .trim_end_matches("/v1")
        .trim_end_matches('/');
    // Where to ask, what to send, and how to read the count.
    type Ask = (String, Value, fn(&Value) -> Option<u64>);
    let asks: [Ask; 2] = [
        (
            format!("{root}/extras/tokenize/count"),
            json!({"input": text, "model": model}),
            |value| value["count"].as_u64(),
        ),
        (
            format!("{root}/tokenize"),
            json!({"content": text}),
            |value| value["tokens"].as_array().map(|tokens| tokens.len() as u64),
        ),
    ];
    for (url, body, count) in asks {
        let sent = http
            .post(&url)
            .json(&body)
            .timeout(Duration::from_secs(10))
            .send()
            .await;
        let Ok(response) = sent else {
            // No server there at all: the second address will not answer either.
            return None;
        };
        if !response.status().is_success() {
            continue;
        }
        if let Some(tokens) = response.json::<Value>().await.ok().as_ref().and_then(count) {
            return Some(tokens);
        }
    }
    None
}

/// The server's count of a reply's prompt (`usage.prompt_tokens`,
/// Anthropic's `usage.input_tokens`, Ollama's `prompt_eval_count`), when
/// the reply has one.
pub fn prompt_tokens(reply: &Value) -> Option<u64> {
    let usage = &reply["usage"];
    usage["prompt_tokens"]
        .as_u64()
        .or_else(|| usage["input_tokens"].as_u64())
        .or_else(|| reply["prompt_eval_count"].as_u64())
        .filter(|tokens| *tokens > 0)
}

/// What a reply (unstreamed, or streamed and reassembled) says the call
/// cost: OpenAI's `usage` (with `prompt_tokens_details.cached_tokens`, or
/// llama.cpp's `timings.cache_n`), Anthropic's (whose `input_tokens` leave
/// out what was read from or written to the cache), or Ollama's counts.
/// `None` when the server said nothing of the prompt.
pub fn usage(provider: Provider, reply: &Value) -> Option<Usage> {
    let figures = &reply["usage"];
    let count = |value: &Value| value.as_u64();
    let (prompt, answer, cached) = match provider {
        Provider::Anthropic => {
            let read = count(&figures["cache_read_input_tokens"]);
            let written = count(&figures["cache_creation_input_tokens"]).unwrap_or(0);
            let prompt = count(&figures["input_tokens"])? + read.unwrap_or(0) + written;
            (prompt, count(&figures["output_tokens"]), read)
        }
        Provider::Ollama => (
            count(&reply["prompt_eval_count"])?,
            count(&reply["eval_count"]),
            None,
        ),
        Provider::OpenAi | Provider::Replay => {
            let timings = figures
                .get("timings")
                .or_else(|| reply.get("timings"))
                .unwrap_or(&Value::Null);
            (
                count(&figures["prompt_tokens"]).or_else(|| {
                    // llama.cpp's own figures: evaluated and cached.
                    Some(count(&timings["prompt_n"])? + count(&timings["cache_n"]).unwrap_or(0))
                })?,
                count(&figures["completion_tokens"]).or_else(|| count(&timings["predicted_n"])),
                count(&figures["prompt_tokens_details"]["cached_tokens"])
                    .or_else(|| count(&timings["cache_n"])),
            )
        }
    };
    Some(Usage {
        prompt,
        reply: answer.unwrap_or(0),
        cached,
        calls: 1,
        estimated: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_servers_usage_figures_are_read_with_its_cached_tokens() {
        let openai = json!({"usage": {"prompt_tokens": 1200, "completion_tokens": 80,
            "prompt_tokens_details": {"cached_tokens": 1024}}});
        let of_openai = usage(Provider::OpenAi, &openai).unwrap();
        assert_eq!(
            (of_openai.prompt, of_openai.reply, of_openai.cached),
            (1200, 80, Some(1024))
        );
        assert_eq!((of_openai.calls, of_openai.estimated), (1, 0));
        // llama.cpp's own figures, beside a usage without cached tokens.
        let llama = json!({"usage": {"prompt_tokens": 900, "completion_tokens": 40},
            "timings": {"prompt_n": 100, "cache_n": 800, "predicted_n": 40}});
        assert_eq!(usage(Provider::OpenAi, &llama).unwrap().cached, Some(800));
        let timings_only = json!({"timings": {"prompt_n": 100, "cache_n": 800, "predicted_n": 40}});
        let usage_of_timings = usage(Provider::OpenAi, &timings_only).unwrap();
        assert_eq!((usage_of_timings.prompt, usage_of_timings.reply), (900, 40));
        // Anthropic's input leaves out what the cache read and wrote.
        let anthropic = json!({"usage": {"input_tokens": 50, "output_tokens": 300,
            "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 150}});
        let usage_of_anthropic = usage(Provider::Anthropic, &anthropic).unwrap();
        assert_eq!(
            (
                usage_of_anthropic.prompt,
                usage_of_anthropic.reply,
                usage_of_anthropic.cached
            ),
            (1200, 300, Some(1000))
        );
        let ollama = json!({"prompt_eval_count": 700, "eval_count": 90});
        let usage_of_ollama = usage(Provider::Ollama, &ollama).unwrap();
        assert_eq!(
            (
                usage_of_ollama.prompt,
                usage_of_ollama.reply,
                usage_of_ollama.cached
            ),
            (700, 90, None)
        );
        // A server that says nothing: none, and the caller estimates.
        assert_eq!(usage(Provider::OpenAi, &json!({"choices": []})), None);
    }

    #[test]
    fn a_count_is_believed_only_when_plausible() {
        let calibration = Calibration::default();
        assert_eq!(calibration.chars_per_token(), None);
        calibration.learn(1000, 0);
        calibration.learn(1000, 5);
        assert_eq!(calibration.chars_per_token(), None, "200 a token is broken");
        calibration.learn(1000, 270);
        let measured = calibration.chars_per_token().unwrap();
        assert!((measured - 3.7).abs() < 0.01, "{measured}");
        assert_eq!(
            prompt_tokens(&json!({"usage": {"prompt_tokens": 12}})),
            Some(12)
        );
        assert_eq!(
            prompt_tokens(&json!({"usage": {"input_tokens": 7}})),
            Some(7)
        );
        assert_eq!(prompt_tokens(&json!({"choices": []})), None);
    }
}
