//! The model interface phase B agents call. Real providers over HTTP live in
//! `crate::llm`; here is the scripted model, which answers from a file keyed
//! by step id so a writer can dry-run a recipe (`--model scripted:FILE`) and
//! tests can drive the runner.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What [`Model::complete`] returns: the model's reply, in time.
pub type Completion<'a> = BoxFuture<'a, Result<ModelReply, ModelError>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Message {
        Message {
            role: Role::System,
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }

    pub fn assistant(content: impl Into<String>) -> Message {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// One agent call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelRequest {
    pub step_id: String,
    pub agent_archetype: String,
    pub prompt_type: String,
    pub messages: Vec<Message>,
    /// Whether the reply must be one JSON object.
    pub json_reply: bool,
    /// The JSON Schema the reply must follow, for providers that can
    /// enforce it (the runner validates the reply either way).
    pub schema: Option<Value>,
    /// The reply's token limit when the writer set none: the room the
    /// prompt's tier holds back for the reply. A model server asked without
    /// a limit writes until its context is full.
    pub reply_limit: Option<u32>,
    /// The context window the prompt was fitted to, for a server that must
    /// be told it (Ollama's `num_ctx`; others know their model's).
    pub context_window: Option<u32>,
    /// The model to ask on the step's server instead of the one configured
    /// for it (a voice tournament's contestant that names a model).
    pub model: Option<String>,
}

/// The roles a phase B step of a recipe may give an agent; each may have
/// an endpoint of its own (`[llm.agents.<role>]`). A conference asks all
/// but the first and the last (see `conference::AGENTS`).
pub const ARCHETYPES: &[&str] = &[
    "chief",
    "planner",
    "writer",
    "editor",
    "continuity",
    "critic",
    "librarian",
    "reviewer",
];

/// Who answered: the provider and the model that served the reply (which
/// may name a snapshot of the model asked for).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    pub provider: String,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_model: Option<String>,
}

/// Decoding parameters: those asked for (configuration and step) and those
/// in effect (what was sent after the provider's limits, what it reported).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Decoding {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// `text`, `json_schema` (enforced by the server) or `json_prompt`
    /// (asked for in the prompt only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ModelReply {
    pub text: String,
    pub actor: Actor,
    pub requested: Decoding,
    pub effective: Decoding,
    /// The server stopped the reply at its length limit (`finish_reason:
    /// length`, `stop_reason: max_tokens`): the text is unfinished and
    /// must never pass for a finished reply.
    pub cut_off: bool,
    /// What the call cost, as the server counted it where it said.
    pub usage: Usage,
}

/// The tokens one call cost, or several calls summed: from the server's
/// usage figures, or estimated from the text (at the measured characters
/// per token, else four) where it gave none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// The prompt's tokens, cached or not.
    pub prompt: u64,
    /// The reply's tokens.
    pub reply: u64,
    /// Of the prompt, the tokens the server read from its prompt cache,
    /// where it says (OpenAI's `cached_tokens`, llama.cpp's `cache_n`,
    /// Anthropic's `cache_read_input_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<u64>,
    /// Calls summed.
    #[serde(default)]
    pub calls: u32,
    /// Calls whose figures were estimated, not counted by the server.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub estimated: u32,
}

fn is_zero(count: &u32) -> bool {
    *count == 0
}

impl Usage {
    /// One call's usage estimated from its prompt and reply at
    /// `chars_per_token` (four when not measured).
    pub fn estimate(request: &ModelRequest, reply: &str, chars_per_token: Option<f32>) -> Usage {
        let per_token = f64::from(chars_per_token.unwrap_or(4.0)).max(1.0);
        let count = |chars: usize| (chars as f64 / per_token).ceil() as u64;
        let prompt: usize = request
            .messages
            .iter()
            .map(|m| m.content.chars().count())
            .sum();
        Usage {
            prompt: count(prompt),
            reply: count(reply.chars().count()),
            cached: None,
            calls: 1,
            estimated: 1,
        }
    }

    /// `self` and `other` summed; the cached tokens are known if either
    /// says them.
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            prompt: self.prompt + other.prompt,
            reply: self.reply + other.reply,
            cached: match (self.cached, other.cached) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            },
            calls: self.calls + other.calls,
            estimated: self.estimated + other.estimated,
        }
    }
}

/// Sums the usage of every call made through it: a step's model, metered.
pub struct Metered<'m> {
    inner: &'m dyn Model,
    total: std::sync::Mutex<Usage>,
}

impl<'m> Metered<'m> {
    pub fn new(inner: &'m dyn Model) -> Metered<'m> {
        Metered {
            inner,
            total: std::sync::Mutex::new(Usage::default()),
        }
    }

    /// What the calls so far cost; `None` when none was made.
    pub fn total(&self) -> Option<Usage> {
        let total = *self
            .total
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (total.calls > 0).then_some(total)
    }
}

impl Model for Metered<'_> {
    fn ask<'a>(
        &'a self,
        request: &'a ModelRequest,
        on_text: Option<&'a OnText<'a>>,
    ) -> Completion<'a> {
        Box::pin(async move {
            let reply = self.inner.ask(request, on_text).await?;
            let mut total = self
                .total
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *total = total.plus(reply.usage);
            Ok(reply)
        })
    }

    fn target(&self, archetype: &str) -> Option<ModelTarget> {
        self.inner.target(archetype)
    }

    fn calibrate<'a>(&'a self, archetype: &'a str) -> BoxFuture<'a, ()> {
        self.inner.calibrate(archetype)
    }
}

impl ModelReply {
    /// Why the reply cannot be used as it is, when it was cut off.
    pub fn cut_off_message(&self) -> Option<String> {
        self.cut_off_error().map(|error| error.to_string())
    }

    /// [`ModelError::CutOff`], when the reply was cut off.
    pub fn cut_off_error(&self) -> Option<ModelError> {
        self.cut_off.then_some(ModelError::CutOff {
            max_tokens: self.effective.max_tokens,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("the model failed: {0}")]
    Failed(String),
    #[error("{file} has no reply for step `{step_id}`")]
    NoScriptedReply { file: String, step_id: String },
    /// The reply stopped at its length limit before it finished.
    #[error(
        "the model stopped at its length limit{} before it finished; raise max_tokens under [llm] in control-room.toml, or ask for less",
        .max_tokens.map_or(String::new(), |limit| format!(" of {limit} tokens"))
    )]
    CutOff { max_tokens: Option<u32> },
}

impl ModelError {
    pub fn failed(message: impl Into<String>) -> ModelError {
        ModelError::Failed(message.into())
    }
}

/// Where an archetype's steps go: it picks the prompt's tier.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelTarget {
    pub provider: String,
    pub model: String,
    /// The reply's token limit from the configuration, if set.
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    /// The context window the settings give the model, over the matrix's.
    pub context_window: Option<u32>,
    /// The prompt tier the settings give the model, over the matrix's.
    pub tier: Option<String>,
    /// Characters per token of the model's tokenizer, as measured on its
    /// server (its tokenizer, or its count of an earlier prompt); `None`
    /// until measured, when prompts are counted at four.
    pub chars_per_token: Option<f32>,
}

/// A reply being written: how many words so far, the end of the text (its
/// last words) and the whole text so far, secrets removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written<'a> {
    pub words: usize,
    pub tail: &'a str,
    pub text: &'a str,
}

/// Told how a reply grows as the model writes it.
pub type OnText<'a> = dyn Fn(Written<'_>) + Send + Sync + 'a;

/// Who is told how a reply grows, if anyone.
pub type Listener<'a> = Option<&'a OnText<'a>>;

/// A language model, as the step runner sees it. Dropping the future cancels
/// the call.
pub trait Model: Send + Sync {
    /// Asks `request`, telling `on_text` (when given) how the reply grows
    /// as it is written, where the model streams.
    fn ask<'a>(
        &'a self,
        request: &'a ModelRequest,
        on_text: Option<&'a OnText<'a>>,
    ) -> Completion<'a>;

    fn complete<'a>(&'a self, request: &'a ModelRequest) -> Completion<'a> {
        self.ask(request, None)
    }

    /// [`Model::complete`], telling `on_text` how the reply grows as it is
    /// written, where the model streams (otherwise nothing until the end).
    fn complete_streaming<'a>(
        &'a self,
        request: &'a ModelRequest,
        on_text: &'a OnText<'a>,
    ) -> Completion<'a> {
        self.ask(request, Some(on_text))
    }

    /// The provider and model `archetype`'s steps go to, when known.
    fn target(&self, archetype: &str) -> Option<ModelTarget> {
        let _ = archetype;
        None
    }

    /// Measures, once, what the server of `archetype`'s model can tell of
    /// its tokenizer, so that [`Model::target`] gives it; later calls
    /// return at once.
    fn calibrate<'a>(&'a self, archetype: &'a str) -> BoxFuture<'a, ()> {
        let _ = archetype;
        Box::pin(async {})
    }
}

/// What the scripted model does for one step.
#[derive(Clone, Debug, PartialEq)]
enum Scripted {
    Reply { text: String, delay: Duration },
    Error { message: String, delay: Duration },
}

/// Why a file of scripted replies cannot be used; each message names the
/// file. The underlying error is part of the message rather than a source,
/// so a chain printed with `{:#}` says it once.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("cannot read the scripted replies {}: {error}", path.display())]
    Unreadable {
        path: std::path::PathBuf,
        error: std::io::Error,
    },
    #[error("{file}:{}:{}: not valid JSON: {error}", error.line(), error.column())]
    NotJson {
        file: String,
        error: serde_json::Error,
    },
    #[error("{file}: expected an object of replies keyed by step id")]
    NotAnObject { file: String },
    #[error("{file}: `{step_id}.delay_ms` must be a whole number")]
    BadDelay { file: String, step_id: String },
}

/// Answers each step from a JSON file: `{"step_id": reply, …}` (a
/// micro-step's reply under `"step_id/prompt_type"`, else the step's) where a reply
/// is text; or `{"reply": text-or-JSON, "delay_ms": N}`; or `{"error":
/// "message", "delay_ms": N}` to fail the step; any other JSON value is sent
/// as its JSON text (handy for steps that answer JSON).
#[derive(Clone, Debug)]
pub struct ScriptedModel {
    file: String,
    replies: BTreeMap<String, Scripted>,
}

impl ScriptedModel {
    pub fn load(path: &Path) -> Result<ScriptedModel, ScriptError> {
        let text = std::fs::read_to_string(path).map_err(|error| ScriptError::Unreadable {
            path: path.to_path_buf(),
            error,
        })?;
        ScriptedModel::parse(&path.display().to_string(), &text)
    }

    pub fn parse(file: &str, text: &str) -> Result<ScriptedModel, ScriptError> {
        let value: Value = serde_json::from_str(text).map_err(|error| ScriptError::NotJson {
            file: file.to_owned(),
            error,
        })?;
        let Value::Object(entries) = value else {
            return Err(ScriptError::NotAnObject {
                file: file.to_owned(),
            });
        };
        let mut replies = BTreeMap::new();
        for (step_id, entry) in entries {
            let delay = |object: &serde_json::Map<String, Value>| -> Result<Duration, ScriptError> {
                match object.get("delay_ms") {
                    None => Ok(Duration::ZERO),
                    Some(value) => value.as_u64().map(Duration::from_millis).ok_or_else(|| {
                        ScriptError::BadDelay {
                            file: file.to_owned(),
                            step_id: step_id.clone(),
                        }
                    }),
                }
            };
            let scripted = match &entry {
                Value::String(text) => Scripted::Reply {
                    text: text.clone(),
                    delay: Duration::ZERO,
                },
                Value::Object(object) if object.contains_key("error") => Scripted::Error {
                    message: match &object["error"] {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    },
                    delay: delay(object)?,
                },
                Value::Object(object) if object.contains_key("reply") => Scripted::Reply {
                    text: match &object["reply"] {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    },
                    delay: delay(object)?,
                },
                other => Scripted::Reply {
                    text: other.to_string(),
                    delay: Duration::ZERO,
                },
            };
            replies.insert(step_id, scripted);
        }
        Ok(ScriptedModel {
            file: file.to_owned(),
            replies,
        })
    }
}

impl Model for ScriptedModel {
    fn ask<'a>(&'a self, request: &'a ModelRequest, _on_text: Listener<'a>) -> Completion<'a> {
        Box::pin(async move {
            // A micro-step's reply is keyed `step/prompt_type` (the step
            // `continuity` of a t1 model asks `continuity/check_continuity_triage`).
            let micro = format!("{}/{}", request.step_id, request.prompt_type);
            let scripted = self
                .replies
                .get(&micro)
                .or_else(|| self.replies.get(&request.step_id))
                .ok_or_else(|| ModelError::NoScriptedReply {
                    file: self.file.clone(),
                    step_id: request.step_id.clone(),
                })?;
            let (Scripted::Reply { delay, .. } | Scripted::Error { delay, .. }) = scripted;
            if !delay.is_zero() {
                tokio::time::sleep(*delay).await;
            }
            match scripted {
                Scripted::Reply { text, .. } => Ok(ModelReply {
                    text: text.clone(),
                    actor: Actor {
                        provider: "scripted".into(),
                        model: self.file.clone(),
                        requested_model: None,
                    },
                    requested: Decoding::default(),
                    effective: Decoding::default(),
                    cut_off: false,
                    usage: Usage::estimate(request, text, None),
                }),
                Scripted::Error { message, .. } => Err(ModelError::Failed(message.clone())),
            }
        })
    }
}
