//! Record and replay: `--record FILE.jsonl` appends every exchange (the
//! request's key, the request, the reply); provider `replay` answers from
//! such a file and fails clearly on a request it has never seen. Runs become
//! reproducible offline, and tests drive whole recipes from real exchanges.
//!
//! The key is the SHA-256 of the canonical JSON of the provider, the model
//! asked for, the messages and the decoding parameters, so any change to a
//! prompt, a slot or a setting is a different request.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::llm::model::{
    Actor, Completion, Decoding, Listener, Message, Model, ModelError, ModelReply, ModelRequest,
    ModelTarget, Usage,
};
use crate::storage::Disk;
use crate::storage::sha256_hex;

/// What a request was sent to, as far as the key is concerned.
#[derive(Clone, Debug, PartialEq, PartialOrd, Eq, Ord, Serialize, Deserialize)]
pub struct KeyEndpoint {
    pub provider: String,
    pub model: String,
    /// The requested decoding, as canonical JSON.
    pub decoding: String,
}

/// One recorded exchange: a line of the cassette.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Exchange {
    pub key: String,
    pub provider: String,
    pub model: String,
    pub requested: Decoding,
    pub step_id: String,
    #[serde(default)]
    pub agent_archetype: String,
    pub prompt_type: String,
    pub json_reply: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    pub messages: Vec<Message>,
    pub reply: RecordedReply,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RecordedReply {
    pub text: String,
    pub actor: Actor,
    pub effective: Decoding,
    /// The server stopped the reply at its length limit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_off: bool,
    /// What the call cost when it was recorded (estimated on replay from
    /// a cassette recorded without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// The key of a request sent to `provider`/`model` with `requested` decoding.
pub fn request_key(
    provider: &str,
    model: &str,
    requested: &Decoding,
    request: &ModelRequest,
) -> String {
    // `json!` objects keep keys sorted: this is canonical JSON.
    let canonical = json!({
        "provider": provider,
        "model": model,
        "messages": request.messages,
        "parameters": {
            "decoding": requested,
            "json_reply": request.json_reply,
            "schema": request.schema,
        },
    });
    sha256_hex(canonical.to_string().as_bytes())
}

/// Why a cassette cannot be recorded to or replayed; each message names the
/// file. The underlying error is part of the message rather than a source,
/// so a chain printed with `{:#}` says it once.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    #[error("cannot create {} for the recording: {error}", dir.display())]
    NoFolder { dir: PathBuf, error: std::io::Error },
    #[error("cannot read the replay file {file}: {error}")]
    Unreadable { file: String, error: std::io::Error },
    #[error("{file}:{line}: not a recorded exchange: {error}")]
    NotAnExchange {
        file: String,
        line: usize,
        error: serde_json::Error,
    },
    #[error("the replay file {file} holds no exchanges")]
    Empty { file: String },
}

/// Wraps a model and appends each successful exchange to a cassette.
pub struct Recording {
    inner: Arc<dyn Model>,
    path: PathBuf,
    disk: Disk,
}

impl Recording {
    pub fn new(inner: Arc<dyn Model>, path: &Path) -> Result<Recording, CassetteError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|error| CassetteError::NoFolder {
                dir: parent.to_path_buf(),
                error,
            })?;
        }
        Ok(Recording {
            inner,
            path: path.to_path_buf(),
            disk: Disk::default(),
        })
    }
}

impl Recording {
    fn record<'a>(&'a self, request: &'a ModelRequest, on_text: Listener<'a>) -> Completion<'a> {
        Box::pin(async move {
            let reply = match on_text {
                Some(on_text) => self.inner.complete_streaming(request, on_text).await?,
                None => self.inner.complete(request).await?,
            };
            let model = reply
                .actor
                .requested_model
                .clone()
                .unwrap_or_else(|| reply.actor.model.clone());
            let exchange = Exchange {
                key: request_key(&reply.actor.provider, &model, &reply.requested, request),
                provider: reply.actor.provider.clone(),
                model,
                requested: reply.requested.clone(),
                step_id: request.step_id.clone(),
                agent_archetype: request.agent_archetype.clone(),
                prompt_type: request.prompt_type.clone(),
                json_reply: request.json_reply,
                schema: request.schema.clone(),
                messages: request.messages.clone(),
                reply: RecordedReply {
                    text: reply.text.clone(),
                    actor: reply.actor.clone(),
                    effective: reply.effective.clone(),
                    cut_off: reply.cut_off,
                    usage: Some(reply.usage),
                },
            };
            let mut line = serde_json::to_vec(&exchange)
                .map_err(|error| ModelError::failed(format!("cannot record: {error}")))?;
            line.push(b'\n');
            self.disk.append_line(&self.path, &line).map_err(|error| {
                ModelError::failed(format!(
                    "cannot record the reply in {}: {error}",
                    self.path.display()
                ))
            })?;
            Ok(reply)
        })
    }
}

impl Model for Recording {
    fn ask<'a>(&'a self, request: &'a ModelRequest, on_text: Listener<'a>) -> Completion<'a> {
        self.record(request, on_text)
    }

    fn target(&self, archetype: &str) -> Option<ModelTarget> {
        self.inner.target(archetype)
    }
}

/// Answers from a cassette.
pub struct Replay {
    file: String,
    exchanges: HashMap<String, RecordedReply>,
    /// Every distinct endpoint recorded, to compute a request's key against.
    endpoints: BTreeSet<(String, String, String)>,
    requested: HashMap<(String, String, String), Decoding>,
    /// The model each archetype's steps were recorded from (first seen).
    targets: HashMap<String, ModelTarget>,
    first_target: Option<ModelTarget>,
}

impl Replay {
    pub fn load(path: &Path) -> Result<Replay, CassetteError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| CassetteError::Unreadable {
            file: file.clone(),
            error,
        })?;
        let mut replay = Replay {
            file: file.clone(),
            exchanges: HashMap::new(),
            endpoints: BTreeSet::new(),
            requested: HashMap::new(),
            targets: HashMap::new(),
            first_target: None,
        };
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let exchange: Exchange =
                serde_json::from_str(line).map_err(|error| CassetteError::NotAnExchange {
                    file: file.clone(),
                    line: number + 1,
                    error,
                })?;
            let decoding = serde_json::to_string(&exchange.requested).unwrap_or_default();
            let endpoint = (exchange.provider.clone(), exchange.model.clone(), decoding);
            replay
                .requested
                .insert(endpoint.clone(), exchange.requested.clone());
            replay.endpoints.insert(endpoint);
            let target = ModelTarget {
                provider: exchange.provider.clone(),
                model: exchange.model.clone(),
                max_tokens: exchange.requested.max_tokens,
                temperature: exchange.requested.temperature,
                context_window: None,
                tier: None,
                chars_per_token: None,
            };
            replay.first_target.get_or_insert_with(|| target.clone());
            replay
                .targets
                .entry(exchange.agent_archetype.clone())
                .or_insert(target);
            replay.exchanges.insert(exchange.key, exchange.reply);
        }
        if replay.exchanges.is_empty() {
            return Err(CassetteError::Empty { file });
        }
        Ok(replay)
    }

    fn find(&self, request: &ModelRequest) -> Option<(&RecordedReply, &Decoding)> {
        self.endpoints.iter().find_map(|endpoint| {
            let requested = &self.requested[endpoint];
            let key = request_key(&endpoint.0, &endpoint.1, requested, request);
            self.exchanges.get(&key).map(|reply| (reply, requested))
        })
    }
}

impl Model for Replay {
    fn ask<'a>(&'a self, request: &'a ModelRequest, _on_text: Listener<'a>) -> Completion<'a> {
        Box::pin(async move {
            let (reply, requested) = self.find(request).ok_or_else(|| {
                ModelError::failed(format!(
                    "{} has no recorded reply for step `{}` ({}): its prompt, a slot or a setting differs from every recorded request; record the run again with --record",
                    self.file, request.step_id, request.prompt_type
                ))
            })?;
            Ok(ModelReply {
                text: reply.text.clone(),
                actor: Actor {
                    provider: format!("replay:{}", reply.actor.provider),
                    ..reply.actor.clone()
                },
                requested: requested.clone(),
                effective: reply.effective.clone(),
                cut_off: reply.cut_off,
                usage: reply
                    .usage
                    .unwrap_or_else(|| Usage::estimate(request, &reply.text, None)),
            })
        })
    }

    /// The model the archetype was recorded with, so the prompt is
    /// assembled for the same tier as when it was recorded.
    fn target(&self, archetype: &str) -> Option<ModelTarget> {
        self.targets
            .get(archetype)
            .or(self.first_target.as_ref())
            .cloned()
    }
}
