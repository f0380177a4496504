//! Language models over HTTP: the real implementations of
//! [`crate::llm::model::Model`].
//!
//! `model` is the trait every model implements (the runs call it, the
//! providers here and the tests' fakes implement it); `protocol` reads the
//! XML reply protocol agents answer in. `config` resolves the `[llm]`
//! settings (file, editor, environment);
//! `openai` and `anthropic` know their wire formats; `http` sends one request
//! with the retry policy; `cassette` records and replays exchanges.
//! [`connect`] builds the model a run calls: one endpoint per archetype where
//! `[llm.agents.*]` says so, the default endpoint otherwise.
//!
//! *Invariant:* an API key is read from the environment when an endpoint is
//! built, held in a [`Secret`] (whose `Debug` hides it), sent only in a
//! header, and removed from every error message and reply text.

mod anthropic;
pub mod cassette;
pub mod config;
mod http;
pub mod model;
mod ollama;
mod openai;
pub mod protocol;
mod sse;
mod stream;
mod tokens;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

pub use config::{EndpointConfig, LlmConfig, Provider, StructuredOutput};

use crate::llm::model::{
    Actor, Completion, Decoding, Listener, Model, ModelError, ModelReply, ModelRequest,
    ModelTarget, OnText, Usage,
};

/// Why no model could be built from the `[llm]` settings. Errors of other
/// modules pass through unchanged (`transparent`), so their messages and
/// sources read as they did before they were wrapped.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error(
        "[llm] api_key_env names {variable}, but that environment variable is not set; export it with the key for {provider}"
    )]
    KeyNotSet { variable: String, provider: String },
    #[error(transparent)]
    BaseUrl(<reqwest::Url as std::str::FromStr>::Err),
    #[error(transparent)]
    Client(#[from] reqwest::Error),
    /// `control-room.toml` could not be read.
    #[error(transparent)]
    Workspace(#[from] crate::index::config::ConfigError),
    #[error(transparent)]
    Config(#[from] config::LlmConfigError),
    #[error("[llm.agents.{archetype}]: provider `replay` can only be set for all agents")]
    ReplayForOneAgent { archetype: String },
    #[error(transparent)]
    Cassette(#[from] cassette::CassetteError),
}

/// Why a server's list of models could not be had (`url` is shown with
/// any key taken out).
#[derive(Debug, thiserror::Error)]
pub enum ModelsError {
    #[error("GET {url}/models failed: {why}")]
    Unreachable { url: String, why: String },
    #[error("GET {url}/models is not found: an OpenAI-compatible base_url usually ends in /v1")]
    NotFound { url: String },
    #[error("GET {url}/models answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("GET {url}/models did not answer a list of models")]
    NotAList { url: String },
}

/// Why a model server's reply holds no text this can read; the model
/// error that reports it quotes the reply beside this.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnreadableReply {
    #[error("the reply has no `{0}`")]
    Missing(&'static str),
    #[error("the model refused: {0}")]
    RefusedBecause(String),
    #[error("the model refused")]
    Refused,
}

/// An API key. Never printed: `Debug` shows a placeholder.
#[derive(Clone)]
pub struct Secret(Arc<str>);

impl Secret {
    pub fn new(value: &str) -> Secret {
        Secret(value.into())
    }

    fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// Text shaped like a provider's API key.
static KEY_SHAPED: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"\b(?:sk-(?:ant-|proj-|or-)?[A-Za-z0-9_\-]{20,}|AIza[0-9A-Za-z_\-]{35}|gh[pousr]_[A-Za-z0-9]{36,}|xai-[A-Za-z0-9]{20,})",
    )
    .expect("the key pattern compiles")
});

/// `text` with the given secrets and anything shaped like an API key
/// replaced by `[redacted]`.
pub fn redact<'t>(text: &'t str, secrets: &[&Secret]) -> Cow<'t, str> {
    let mut text = Cow::Borrowed(text);
    for secret in secrets {
        let value = secret.expose();
        if value.len() >= 4 && text.contains(value) {
            text = Cow::Owned(text.replace(value, "[redacted]"));
        }
    }
    match KEY_SHAPED.replace_all(&text, "[redacted]") {
        Cow::Borrowed(_) => text,
        Cow::Owned(replaced) => Cow::Owned(replaced),
    }
}

/// A model server, ready to call.
pub struct Endpoint {
    config: EndpointConfig,
    secret: Option<Secret>,
    http: reqwest::Client,
    /// The base URL without credentials, for messages.
    shown_url: String,
    /// How this server takes a JSON step's schema: as the settings force
    /// it, or as learned from its refusals (shared by every call).
    structured_output: std::sync::Mutex<StructuredOutput>,
    /// What its server has told of the model's tokenizer.
    calibration: tokens::Calibration,
}

impl Endpoint {
    /// Builds an endpoint, reading its API key through `env`.
    pub fn new(
        config: EndpointConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Endpoint, LlmError> {
        let secret = match &config.api_key_env {
            None => None,
            Some(name) => match env(name).filter(|value| !value.trim().is_empty()) {
                Some(value) => Some(Secret::new(value.trim())),
                None => {
                    return Err(LlmError::KeyNotSet {
                        variable: name.clone(),
                        provider: config.provider.to_string(),
                    });
                }
            },
        };
        let mut shown = reqwest::Url::parse(&config.base_url).map_err(LlmError::BaseUrl)?;
        // Credentials in a URL are secrets too.
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        let shown_url = shown.as_str().trim_end_matches('/').to_owned();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs_f64(config.timeout_s.min(10.0)))
            .build()?;
        let structured_output = config
            .structured_output
            .unwrap_or(StructuredOutput::JsonSchema);
        Ok(Endpoint {
            config,
            secret,
            http,
            shown_url,
            structured_output: std::sync::Mutex::new(structured_output),
            calibration: tokens::Calibration::default(),
        })
    }

    /// Characters per token of the model, as its server measured them.
    pub fn chars_per_token(&self) -> Option<f32> {
        self.calibration.chars_per_token()
    }

    /// Asks the server's tokenizer, once, how many characters a token of
    /// the model holds (an OpenAI-compatible server on this machine may
    /// have one; nothing is asked of Anthropic).
    pub async fn calibrate(&self) -> Option<f32> {
        if self.config.provider == Provider::OpenAi {
            self.calibration
                .probe(&self.http, &self.config.base_url, &self.config.model)
                .await;
        }
        self.chars_per_token()
    }

    pub fn config(&self) -> &EndpointConfig {
        &self.config
    }

    /// The models the server lists at `GET {base_url}/models`.
    pub async fn models(&self, timeout: Duration) -> Result<Vec<String>, ModelsError> {
        let url = match self.config.provider {
            Provider::Ollama => format!("{}/api/tags", ollama::root(&self.config)),
            _ => format!("{}/models", self.config.base_url),
        };
        let mut request = self.http.get(&url).timeout(timeout);
        if let Some(secret) = &self.secret {
            request = request.bearer_auth(secret.expose());
        }
        let secrets: Vec<&Secret> = self.secret.iter().collect();
        let shown = &self.shown_url;
        let response = request
            .send()
            .await
            .map_err(|error| ModelsError::Unreachable {
                url: shown.clone(),
                why: redact(&error.to_string(), &secrets).into_owned(),
            })?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(ModelsError::NotFound { url: shown.clone() });
        }
        if !status.is_success() {
            return Err(ModelsError::Status {
                url: shown.clone(),
                status: status.as_u16(),
            });
        }
        let not_a_list = || ModelsError::NotAList { url: shown.clone() };
        let value: serde_json::Value = response.json().await.map_err(|_| not_a_list())?;
        let models = value["data"]
            .as_array()
            .or_else(|| value["models"].as_array())
            .ok_or_else(not_a_list)?;
        Ok(models
            .iter()
            .filter_map(|model| model["id"].as_str().or_else(|| model["name"].as_str()))
            .map(str::to_owned)
            .collect())
    }

    /// Finds out how the server takes a JSON step's schema with one call
    /// for one token, stepping down as a run would; the format a run uses.
    pub async fn probe_structured_output(&self) -> Result<StructuredOutput, ModelError> {
        let probe = ModelRequest {
            step_id: "doctor".into(),
            agent_archetype: "continuity".into(),
            prompt_type: "doctor".into(),
            messages: vec![crate::llm::model::Message::user(
                "Reply with the JSON object {\"ok\": true}.",
            )],
            json_reply: true,
            schema: Some(serde_json::json!({
                "type": "object",
                "properties": {"ok": {"type": "boolean"}},
                "required": ["ok"],
                "additionalProperties": false,
            })),
            reply_limit: Some(1),
            context_window: None,
            model: None,
        };
        self.complete(&probe, None).await?;
        Ok(self.structured_output())
    }

    /// Whether the OpenAI-compatible server at the base URL is Ollama's,
    /// which cuts every prompt at its own default window without a word
    /// (`GET /api/version` answers).
    pub async fn is_ollama_behind_openai(&self) -> bool {
        if self.config.provider != Provider::OpenAi {
            return false;
        }
        let base = self.config.base_url.trim_end_matches('/');
        let Some(root) = base.strip_suffix("/v1") else {
            return false;
        };
        let answer = self
            .http
            .get(format!("{root}/api/version"))
            .timeout(Duration::from_secs(5))
            .send()
            .await;
        match answer {
            Ok(response) if response.status().is_success() => response
                .json::<serde_json::Value>()
                .await
                .is_ok_and(|value| value["version"].is_string()),
            _ => false,
        }
    }

    /// How many replies the server writes at once, where it says: llama.cpp's
    /// server answers `GET /props` with its `total_slots` (its `--parallel`).
    /// `None` from a server that does not say (llama-cpp-python, Ollama,
    /// whose parallel setting lives in its environment).
    pub async fn slots(&self) -> Option<usize> {
        if self.config.provider != Provider::OpenAi {
            return None;
        }
        let base = self.config.base_url.trim_end_matches('/');
        let root = base.strip_suffix("/v1").unwrap_or(base);
        let response = self
            .http
            .get(format!("{root}/props"))
            .timeout(Duration::from_secs(2))
            .send()
            .await
            .ok()
            .filter(|response| response.status().is_success())?;
        let props = response.json::<serde_json::Value>().await.ok()?;
        props["total_slots"]
            .as_u64()
            .and_then(|slots| usize::try_from(slots).ok())
            .filter(|slots| *slots >= 1)
    }

    /// How this endpoint sends a JSON step's schema now.
    pub fn structured_output(&self) -> StructuredOutput {
        *self
            .structured_output
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Steps down from `refused` after the server refused it, unless the
    /// settings force a format or another call already stepped down; the
    /// format to ask with next, if any.
    fn refused(&self, refused: StructuredOutput) -> Option<StructuredOutput> {
        if self.config.structured_output.is_some() {
            return None;
        }
        let mut current = self
            .structured_output
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *current == refused {
            *current = refused.fallback()?;
        }
        Some(*current)
    }

    pub async fn complete(
        &self,
        request: &ModelRequest,
        on_text: Option<&OnText<'_>>,
    ) -> Result<ModelReply, ModelError> {
        let mut format = self.structured_output();
        loop {
            match self.complete_as(request, format, on_text).await {
                Err(http::PostError::FormatRefused(error)) => match self.refused(format) {
                    Some(next) if next != format => format = next,
                    _ => return Err(error),
                },
                other => return Ok(other?),
            }
        }
    }

    /// One call, a JSON step's schema sent as `format` says.
    async fn complete_as(
        &self,
        request: &ModelRequest,
        format: StructuredOutput,
        on_text: Option<&OnText<'_>>,
    ) -> Result<ModelReply, http::PostError> {
        // A request may name another model on the same server.
        let overridden;
        let config = match &request.model {
            Some(model) if *model != self.config.model => {
                overridden = EndpointConfig {
                    model: model.clone(),
                    ..self.config.clone()
                };
                &overridden
            }
            _ => &self.config,
        };
        let failed = |message: String| http::PostError::Failed(ModelError::failed(message));
        let (url, body, effective, mut headers, hint) = match config.provider {
            Provider::OpenAi => {
                let (body, effective) = openai::body(config, request, format);
                let headers = match &self.secret {
                    Some(secret) => vec![("authorization", format!("Bearer {}", secret.expose()))],
                    None => Vec::new(),
                };
                let hint = if config.base_url == config::DEFAULT_OPENAI_URL {
                    "start Ollama or set [llm] in control-room.toml"
                } else {
                    "is the server running? check [llm] base_url in control-room.toml"
                };
                (openai::url(config), body, effective, headers, hint)
            }
            Provider::Ollama => {
                let (body, effective) = ollama::body(config, request, format);
                let headers = match &self.secret {
                    Some(secret) => vec![("authorization", format!("Bearer {}", secret.expose()))],
                    None => Vec::new(),
                };
                let hint =
                    "start Ollama (`ollama serve`), or check [llm] base_url in control-room.toml";
                (ollama::url(config), body, effective, headers, hint)
            }
            Provider::Anthropic => {
                let (body, effective) = anthropic::body(config, request);
                let mut headers = vec![("anthropic-version", anthropic::API_VERSION.to_owned())];
                if let Some(secret) = &self.secret {
                    headers.push(("x-api-key", secret.expose().to_owned()));
                }
                let hint = "check your network, or [llm] base_url in control-room.toml";
                (anthropic::url(config), body, effective, headers, hint)
            }
            Provider::Replay => {
                return Err(failed(
                    "provider `replay` answers from its cassette, not over HTTP".into(),
                ));
            }
        };
        headers.push(("content-type", "application/json".to_owned()));
        let streamed = stream::Streamed::new(config.provider, on_text, self.secret.as_ref());
        let post = http::Post {
            http: &self.http,
            url,
            shown_url: &self.shown_url,
            headers,
            body: &body,
            timeout: Duration::from_secs_f64(config.timeout_s),
            max_retries: config.max_retries,
            unreachable_hint: hint,
            secret: self.secret.as_ref(),
            stream: config
                .stream
                .then_some(&streamed as &dyn http::StreamHandler),
        };
        let total = Duration::from_secs_f64(config.total_timeout_s);
        let value = match tokio::time::timeout(total, post.send()).await {
            Ok(value) => value?.unwrap_or_else(|| streamed.value()),
            Err(_) => {
                return Err(failed(format!(
                    "the model server at {} did not finish its reply within {} s (total_timeout_s)",
                    self.shown_url,
                    total.as_secs_f64()
                )));
            }
        };
        let parsed = match config.provider {
            Provider::Anthropic => anthropic::reply(&value),
            Provider::Ollama => ollama::reply(&value),
            _ => openai::reply(&value),
        };
        let (text, served) = parsed.map_err(|problem| {
            failed(format!(
                "the model server at {} sent a reply this cannot read: {problem}: {}",
                self.shown_url,
                http::excerpt(&value.to_string())
            ))
        })?;
        // A reply cut off mid-sentence is marked so: whoever asked decides
        // (ask again for less, or fail), and it never passes for finished.
        let cut_off = stopped_at_length_limit(config.provider, &value);
        if let Some(tokens) = tokens::prompt_tokens(&value) {
            let chars = request.messages.iter().map(|m| m.content.chars().count());
            self.calibration.learn_from_prompt(chars.sum(), tokens);
        }
        let usage = tokens::usage(config.provider, &value)
            .unwrap_or_else(|| Usage::estimate(request, &text, self.calibration.chars_per_token()));
        let secrets: Vec<&Secret> = self.secret.iter().collect();
        Ok(ModelReply {
            text: redact(&text, &secrets).into_owned(),
            actor: Actor {
                provider: config.provider.name().to_owned(),
                model: served.unwrap_or_else(|| config.model.clone()),
                requested_model: Some(config.model.clone()),
            },
            requested: requested_decoding(config, request),
            effective,
            cut_off,
            usage,
        })
    }
}

/// Whether the server says it stopped the reply at its length limit
/// (OpenAI's `finish_reason: "length"`, Anthropic's `stop_reason:
/// "max_tokens"`).
fn stopped_at_length_limit(provider: Provider, value: &serde_json::Value) -> bool {
    match provider {
        Provider::Anthropic => value["stop_reason"] == "max_tokens",
        Provider::Ollama => value["done_reason"] == "length",
        _ => value.pointer("/choices/0/finish_reason") == Some(&serde_json::json!("length")),
    }
}

/// The decoding the configuration and the step ask for.
fn requested_decoding(config: &EndpointConfig, request: &ModelRequest) -> Decoding {
    Decoding {
        temperature: Some(config.temperature),
        max_tokens: config.max_tokens,
        response_format: Some(
            match (&request.schema, request.json_reply) {
                (Some(_), _) => "json_schema",
                (None, true) => "json",
                (None, false) => "text",
            }
            .into(),
        ),
    }
}

/// The model of a run: each archetype's steps go to its endpoint.
pub struct HttpModel {
    default: Endpoint,
    agents: BTreeMap<String, Endpoint>,
    /// Calls in flight per server (by base URL): a server on this machine
    /// serves one reply at a time unless it says otherwise, so it gets one
    /// call at a time, and a call's timeout starts only when it is sent, not
    /// while it waits.
    servers: BTreeMap<String, Arc<ServerQueue>>,
}

/// One server's calls in flight: as many at once as `[llm] concurrency`
/// says, else four for a hosted server, and for one on this machine as many
/// as it says it serves (llama.cpp's slots, asked once), else one.
struct ServerQueue {
    permits: tokio::sync::Semaphore,
    /// Whether to ask the server how many it serves (a local server with no
    /// configured concurrency).
    ask: bool,
    asked: tokio::sync::OnceCell<()>,
}

/// How many calls a server is sent at once unless `[llm] concurrency` says:
/// one for a server on this machine (llama.cpp, Ollama, LM Studio serve one
/// reply at a time), four for a hosted one.
fn calls_at_once(base_url: &str) -> usize {
    let host = base_url
        .split("://")
        .nth(1)
        .unwrap_or(base_url)
        .split(['/', '?'])
        .next()
        .unwrap_or_default();
    let host = host.rsplit_once('@').map_or(host, |(_, host)| host);
    let host = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    let local = host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    if local { 1 } else { 4 }
}

impl HttpModel {
    fn call<'a>(&'a self, request: &'a ModelRequest, on_text: Listener<'a>) -> Completion<'a> {
        let endpoint = self
            .agents
            .get(&request.agent_archetype)
            .unwrap_or(&self.default);
        let server = self.servers.get(&endpoint.config().base_url).cloned();
        Box::pin(async move {
            if let Some(server) = server.as_ref().filter(|server| server.ask) {
                server
                    .asked
                    .get_or_init(|| async {
                        if let Some(slots) = endpoint.slots().await {
                            server.permits.add_permits(slots.saturating_sub(1));
                        }
                    })
                    .await;
            }
            // Dropping the future while it waits gives the place up.
            let _permit = match &server {
                Some(server) => Some(
                    server
                        .permits
                        .acquire()
                        .await
                        .map_err(|_| ModelError::failed("the model's call queue was closed"))?,
                ),
                None => None,
            };
            endpoint.complete(request, on_text).await
        })
    }
}

impl Model for HttpModel {
    fn ask<'a>(&'a self, request: &'a ModelRequest, on_text: Listener<'a>) -> Completion<'a> {
        self.call(request, on_text)
    }

    fn target(&self, archetype: &str) -> Option<ModelTarget> {
        let config = self.agents.get(archetype).unwrap_or(&self.default).config();
        Some(ModelTarget {
            provider: config.provider.name().to_owned(),
            model: config.model.clone(),
            max_tokens: config.max_tokens,
            temperature: Some(config.temperature),
            context_window: config.context_window,
            tier: config.tier.clone(),
            chars_per_token: self
                .agents
                .get(archetype)
                .unwrap_or(&self.default)
                .chars_per_token(),
        })
    }

    fn calibrate<'a>(&'a self, archetype: &'a str) -> crate::llm::model::BoxFuture<'a, ()> {
        let endpoint = self.agents.get(archetype).unwrap_or(&self.default);
        Box::pin(async move {
            endpoint.calibrate().await;
        })
    }
}

/// The `[llm]` settings of the workspace at `root`: its `control-room.toml`,
/// then the editor's layer (when the server runs), then the
/// `CONTROL_ROOM_LLM_*` variables read through `env`.
pub fn workspace_config(
    root: &Path,
    editor: Option<&config::LlmLayer>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<LlmConfig, LlmError> {
    let workspace = crate::index::Workspace::new(root);
    if let Some(error) = workspace.config_error() {
        return Err(LlmError::Workspace(error.clone()));
    }
    let mut layers = Vec::new();
    if let Some(llm) = workspace.config().other.get("llm") {
        layers.push(config::Layer::from_toml("control-room.toml [llm]", llm)?);
    }
    if let Some(editor) = editor {
        layers.push(config::Layer {
            name: "editor settings (controlRoom.llm)",
            value: editor.clone(),
        });
    }
    layers.push(config::Layer::from_env(env));
    Ok(LlmConfig::resolve(&layers)?)
}

/// Builds the model the configuration describes, reading API keys through
/// `env`; a relative `replay_file` is read from `root`. With `record`, every
/// exchange is appended to that cassette.
pub fn connect(
    config: &LlmConfig,
    root: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    record: Option<&Path>,
) -> Result<Arc<dyn Model>, LlmError> {
    let model: Arc<dyn Model> = match config.default.provider {
        Provider::Replay => {
            let file = config.replay_file.as_deref().unwrap_or_default();
            Arc::new(cassette::Replay::load(&root.join(file))?)
        }
        _ => {
            let mut agents = BTreeMap::new();
            for (archetype, endpoint) in &config.agents {
                if endpoint.provider == Provider::Replay {
                    return Err(LlmError::ReplayForOneAgent {
                        archetype: archetype.clone(),
                    });
                }
                agents.insert(archetype.clone(), Endpoint::new(endpoint.clone(), env)?);
            }
            let mut servers = BTreeMap::new();
            for endpoint in std::iter::once(&config.default).chain(config.agents.values()) {
                servers.entry(endpoint.base_url.clone()).or_insert_with(|| {
                    let at_once = endpoint
                        .concurrency
                        .map_or_else(|| calls_at_once(&endpoint.base_url), |n| n as usize);
                    Arc::new(ServerQueue {
                        permits: tokio::sync::Semaphore::new(at_once),
                        ask: endpoint.concurrency.is_none() && at_once == 1,
                        asked: tokio::sync::OnceCell::new(),
                    })
                });
            }
            Arc::new(HttpModel {
                default: Endpoint::new(config.default.clone(), env)?,
                agents,
                servers,
            })
        }
    };
    match record {
        Some(path) => Ok(Arc::new(cassette::Recording::new(model, path)?)),
        None => Ok(model),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_on_this_machine_gets_one_call_at_a_time() {
        for local in [
            "http://127.0.0.1:11434/v1",
            "http://localhost:8080/v1",
            "http://[::1]:8000/v1",
            "http://user:pw@127.0.0.2/v1",
        ] {
            assert_eq!(calls_at_once(local), 1, "{local}");
        }
        for hosted in ["https://api.openai.com/v1", "https://api.anthropic.com"] {
            assert_eq!(calls_at_once(hosted), 4, "{hosted}");
        }
    }

    #[test]
    fn secrets_and_key_shaped_text_are_redacted() {
        let secret = Secret::new("hunter2-local-key");
        assert_eq!(format!("{secret:?}"), "Secret(…)");
        let text = "key hunter2-local-key and sk-proj-AbCdEfGhIjKlMnOpQrStUvWx12 end";
        assert_eq!(
            redact(text, &[&secret]),
            "key [redacted] and [redacted] end"
        );
        assert!(matches!(
            redact("a plain sentence about skiing", &[]),
            Cow::Borrowed(_)
        ));
    }
}
