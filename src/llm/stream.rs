//! A streamed reply as it accumulates: each provider's events (read by
//! `openai::delta` and `anthropic::delta`) add text, name the model and at
//! last say why the reply stopped; how far the reply has got (its words,
//! counted as they come, and its last words, secrets removed) is passed on
//! at most once per [`EVERY`], so a runaway stream costs no more than a
//! steady one; the whole becomes the reply an unstreamed call would give.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::config::Provider;
use super::http::StreamHandler;
use super::{Secret, anthropic, ollama, openai, redact, sse};
use crate::llm::model::{OnText, Written};

/// The most often a reply's progress is passed on: a screen's refresh, so
/// a model writing 50 words a second shows every word.
pub const EVERY: Duration = Duration::from_millis(16);

/// How much of the end of the text is looked at for the last words: more
/// than any API key, so a key is whole in it when its end is shown.
const TAIL_BYTES: usize = 1024;

/// How many words of the end are shown.
const TAIL_WORDS: usize = 12;

#[derive(Debug, Default)]
struct State {
    text: String,
    model: Option<String>,
    stop: Option<String>,
    usage: serde_json::Map<String, Value>,
    /// Words so far, counted as the text comes.
    words: usize,
    /// Whether the text so far ends inside a word.
    in_word: bool,
    /// When progress was last passed on.
    told: Option<Instant>,
}

impl State {
    fn push(&mut self, piece: &str) {
        for ch in piece.chars() {
            let space = ch.is_whitespace();
            if !space && !self.in_word {
                self.words += 1;
            }
            self.in_word = !space;
        }
        self.text.push_str(piece);
    }

    /// The last words of the text, from its last [`TAIL_BYTES`].
    fn tail(&self) -> &str {
        let mut start = self.text.len().saturating_sub(TAIL_BYTES);
        while !self.text.is_char_boundary(start) {
            start += 1;
        }
        &self.text[start..]
    }
}

pub struct Streamed<'a> {
    provider: Provider,
    on_text: Option<&'a OnText<'a>>,
    secret: Option<&'a Secret>,
    state: Mutex<State>,
}

impl<'a> Streamed<'a> {
    pub fn new(
        provider: Provider,
        on_text: Option<&'a OnText<'a>>,
        secret: Option<&'a Secret>,
    ) -> Streamed<'a> {
        Streamed {
            provider,
            on_text,
            secret,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The reply streamed so far, shaped as the provider's unstreamed reply.
    pub fn value(&self) -> Value {
        let state = self.state();
        let (text, model, stop) = (&state.text, state.model.as_deref(), state.stop.as_deref());
        let mut value = match self.provider {
            Provider::Anthropic => anthropic::streamed_value(text, model, stop),
            Provider::Ollama => ollama::streamed_value(text, model, stop),
            _ => openai::streamed_value(text, model, stop),
        };
        if !state.usage.is_empty() {
            match self.provider {
                Provider::Ollama => {
                    for (key, figure) in &state.usage {
                        value[key] = figure.clone();
                    }
                }
                _ => value["usage"] = Value::Object(state.usage.clone()),
            }
        }
        value
    }
}

impl StreamHandler for Streamed<'_> {
    fn restart(&self) {
        *self.state() = State::default();
    }

    fn framing(&self) -> sse::Framing {
        match self.provider {
            Provider::Ollama => sse::Framing::Lines,
            _ => sse::Framing::Events,
        }
    }

    fn event(&self, event: &sse::Event) -> Result<bool, sse::StreamError> {
        let delta = match self.provider {
            Provider::Anthropic => anthropic::delta(event)?,
            Provider::Ollama => ollama::delta(event)?,
            _ => openai::delta(event)?,
        };
        let mut state = self.state();
        if let Some(usage) = delta.usage {
            state.usage.extend(usage);
        }
        if let Some(model) = delta.model {
            state.model.get_or_insert(model);
        }
        if let Some(stop) = delta.stop {
            state.stop = Some(stop);
        }
        if let Some(text) = delta.text.filter(|text| !text.is_empty()) {
            state.push(&text);
            let now = Instant::now();
            if let Some(on_text) = self.on_text
                && state.told.is_none_or(|told| now - told >= EVERY)
            {
                state.told = Some(now);
                let secrets: Vec<&Secret> = self.secret.into_iter().collect();
                let tail = redact(state.tail(), &secrets);
                let last: Vec<&str> = tail.split_whitespace().rev().take(TAIL_WORDS).collect();
                let tail = last.into_iter().rev().collect::<Vec<_>>().join(" ");
                let words = state.words;
                let text = redact(&state.text, &secrets).into_owned();
                drop(state);
                on_text(Written {
                    words,
                    tail: &tail,
                    text: &text,
                });
            }
        }
        Ok(delta.done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_counted_across_chunks_and_the_tail_hides_a_key() {
        let seen = Mutex::new(Vec::new());
        let on_text = |written: Written<'_>| {
            seen.lock()
                .unwrap()
                .push((written.words, written.tail.to_owned()));
        };
        let secret = Secret::new("hunter2-local-key");
        let streamed = Streamed::new(Provider::OpenAi, Some(&on_text), Some(&secret));
        let chunk = |text: &str| sse::Event {
            event: None,
            data: serde_json::json!({"choices": [{"delta": {"content": text}}]}).to_string(),
        };
        for piece in ["The ti", "de turned; ", "the key hunter2-", "local-key"] {
            streamed.event(&chunk(piece)).unwrap();
            // Each piece is told: none comes within EVERY of the last here.
            std::thread::sleep(EVERY);
        }
        let seen = seen.lock().unwrap();
        assert_eq!(
            seen.iter().map(|(words, _)| *words).collect::<Vec<_>>(),
            [2, 3, 6, 6]
        );
        assert_eq!(seen[3].1, "The tide turned; the key [redacted]");
        assert!(seen.iter().all(|(_, tail)| !tail.contains("local-key")));
        assert_eq!(
            streamed.value()["choices"][0]["message"]["content"],
            "The tide turned; the key hunter2-local-key",
            "the reply itself is redacted where every reply is"
        );
    }

    #[test]
    fn a_runaway_stream_is_told_at_most_once_per_interval() {
        let told = std::sync::atomic::AtomicUsize::new(0);
        let on_text = |_: Written<'_>| {
            told.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let streamed = Streamed::new(Provider::OpenAi, Some(&on_text), None);
        let chunk = sse::Event {
            event: None,
            data: serde_json::json!({"choices": [{"delta": {"content": "tide "}}]}).to_string(),
        };
        let started = Instant::now();
        for _ in 0..20_000 {
            streamed.event(&chunk).unwrap();
        }
        let most = started.elapsed().as_millis() / EVERY.as_millis() + 1;
        assert!(told.into_inner() as u128 <= most);
    }
}
