//! The `[llm]` settings: from `control-room.toml`, then the editor's
//! `controlRoom.llm` settings, then the environment, each overriding the one
//! before. Keys are the same everywhere (`base_url` or `baseUrl`).
//!
//! ```toml
//! [llm]
//! provider = "openai"                      # openai | anthropic | replay
//! base_url = "http://localhost:11434/v1"   # default: a local Ollama
//! model = "llama3.1:8b"
//! api_key_env = "OPENAI_API_KEY"           # the variable's name, never the key
//! timeout_s = 120                          # the longest wait for the reply's next words
//! total_timeout_s = 1800                   # the longest a whole reply may take
//! stream = true                            # read replies as they are written
//! prompt_cache = true                      # use the server's prompt cache (below)
//! max_retries = 2
//! temperature = 0.7
//! structured_output = "json_schema"        # json_schema | json_object | prompt (default: learned)
//!
//! [llm.agents.critic]                      # any key above, for one archetype
//! model = "qwen2.5:14b"
//! ```
//!
//! `prompt_cache` (default: on) marks Anthropic's system prompt (the stable
//! layers) with `cache_control`, asks a llama.cpp server on this machine
//! or its network to keep the prompt's evaluated prefix (`cache_prompt`),
//! and keeps an Ollama model loaded between steps (`keep_alive`).
//!
//! The configuration holds the *name* of the variable with the API key; the
//! key itself is read when a client is built and lives only in a
//! [`super::Secret`].

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;

use crate::llm::model::ARCHETYPES;

pub const ENV_PROVIDER: &str = "CONTROL_ROOM_LLM_PROVIDER";
pub const ENV_BASE_URL: &str = "CONTROL_ROOM_LLM_BASE_URL";
pub const ENV_MODEL: &str = "CONTROL_ROOM_LLM_MODEL";

/// The prompt tiers of the bundled model matrix.
pub const TIERS: [&str; 3] = ["full", "medium", "minimal"];

pub const DEFAULT_OPENAI_URL: &str = "http://localhost:11434/v1";
pub const DEFAULT_OPENAI_MODEL: &str = "llama3.1:8b";
/// Ollama's own API, on this machine.
pub const DEFAULT_OLLAMA_URL: &str = "http://localhost:11434";
pub const DEFAULT_ANTHROPIC_URL: &str = "https://api.anthropic.com/v1";
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
pub const DEFAULT_ANTHROPIC_KEY_ENV: &str = "ANTHROPIC_API_KEY";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Provider {
    /// Any OpenAI-compatible Chat Completions server.
    OpenAi,
    /// Anthropic's Messages API.
    Anthropic,
    /// Ollama's own chat API, which (unlike its OpenAI-compatible one)
    /// takes the context window a prompt needs (`num_ctx`).
    Ollama,
    /// Answers from a recorded cassette (`replay_file`).
    Replay,
}

impl Provider {
    pub fn parse(name: &str) -> Option<Provider> {
        match name.trim().to_ascii_lowercase().as_str() {
            "openai" => Some(Provider::OpenAi),
            "anthropic" => Some(Provider::Anthropic),
            "ollama" => Some(Provider::Ollama),
            "replay" => Some(Provider::Replay),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Ollama => "ollama",
            Provider::Replay => "replay",
        }
    }
}

/// How a JSON step's schema is sent to an OpenAI-compatible server, from
/// the most to the least enforced. Servers differ: OpenAI and vLLM take
/// `json_schema`; llama-cpp-python's server refuses it and takes
/// `json_object` with a `schema`; some take neither. Unless the settings
/// force one, each endpoint starts at the first and steps down when the
/// server refuses the format, remembering what it learned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StructuredOutput {
    /// `response_format: {type: json_schema, json_schema: {schema}}`.
    JsonSchema,
    /// `response_format: {type: json_object, schema}`.
    JsonObject,
    /// No `response_format`: the prompt asks for JSON, the reply is checked.
    Prompt,
}

impl StructuredOutput {
    pub const ALL: [StructuredOutput; 3] = [
        StructuredOutput::JsonSchema,
        StructuredOutput::JsonObject,
        StructuredOutput::Prompt,
    ];

    pub fn parse(name: &str) -> Option<StructuredOutput> {
        StructuredOutput::ALL
            .into_iter()
            .find(|format| format.name() == name.trim())
    }

    pub fn name(self) -> &'static str {
        match self {
            StructuredOutput::JsonSchema => "json_schema",
            StructuredOutput::JsonObject => "json_object",
            StructuredOutput::Prompt => "prompt",
        }
    }

    /// The next, less enforced format, if there is one.
    pub fn fallback(self) -> Option<StructuredOutput> {
        match self {
            StructuredOutput::JsonSchema => Some(StructuredOutput::JsonObject),
            StructuredOutput::JsonObject => Some(StructuredOutput::Prompt),
            StructuredOutput::Prompt => None,
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One layer of settings as written; every key optional.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmLayer {
    pub provider: Option<String>,
    #[serde(alias = "baseUrl")]
    pub base_url: Option<String>,
    pub model: Option<String>,
    #[serde(alias = "apiKeyEnv")]
    pub api_key_env: Option<String>,
    #[serde(alias = "timeoutS", alias = "timeout")]
    pub timeout_s: Option<f64>,
    /// The longest a whole reply may take, streamed or not.
    #[serde(alias = "totalTimeoutS")]
    pub total_timeout_s: Option<f64>,
    /// Whether replies are streamed (default: yes).
    pub stream: Option<bool>,
    /// Whether the server's prompt cache is used (default: yes).
    #[serde(alias = "promptCache")]
    pub prompt_cache: Option<bool>,
    #[serde(alias = "maxRetries")]
    pub max_retries: Option<u32>,
    pub temperature: Option<f64>,
    #[serde(alias = "maxTokens")]
    pub max_tokens: Option<u32>,
    /// How many calls the server is sent at once (default: 1 for a server
    /// on this machine, 4 for a hosted one).
    pub concurrency: Option<u32>,
    /// How a JSON step's schema is sent (default: learned per server).
    #[serde(alias = "structuredOutput")]
    pub structured_output: Option<String>,
    /// The model's context window in tokens, for a model the bundled
    /// matrix does not know or knows wrong.
    #[serde(alias = "contextWindow")]
    pub context_window: Option<u32>,
    /// The prompt tier (`full`, `medium`, `minimal`), for the same reason.
    pub tier: Option<String>,
    #[serde(alias = "replayFile")]
    pub replay_file: Option<String>,
    /// Per-archetype overrides (`[llm.agents.writer]`).
    #[serde(default)]
    pub agents: BTreeMap<String, LlmLayer>,
}

impl LlmLayer {
    /// This layer with `over`'s keys winning.
    fn merged(&self, over: &LlmLayer) -> LlmLayer {
        let mut agents = self.agents.clone();
        for (name, layer) in &over.agents {
            let merged = agents
                .get(name)
                .map_or_else(|| layer.clone(), |mine| mine.merged(layer));
            agents.insert(name.clone(), merged);
        }
        LlmLayer {
            provider: over.provider.clone().or_else(|| self.provider.clone()),
            base_url: over.base_url.clone().or_else(|| self.base_url.clone()),
            model: over.model.clone().or_else(|| self.model.clone()),
            api_key_env: over
                .api_key_env
                .clone()
                .or_else(|| self.api_key_env.clone()),
            timeout_s: over.timeout_s.or(self.timeout_s),
            total_timeout_s: over.total_timeout_s.or(self.total_timeout_s),
            stream: over.stream.or(self.stream),
            prompt_cache: over.prompt_cache.or(self.prompt_cache),
            max_retries: over.max_retries.or(self.max_retries),
            temperature: over.temperature.or(self.temperature),
            max_tokens: over.max_tokens.or(self.max_tokens),
            concurrency: over.concurrency.or(self.concurrency),
            structured_output: over
                .structured_output
                .clone()
                .or_else(|| self.structured_output.clone()),
            context_window: over.context_window.or(self.context_window),
            tier: over.tier.clone().or_else(|| self.tier.clone()),
            replay_file: over
                .replay_file
                .clone()
                .or_else(|| self.replay_file.clone()),
            agents,
        }
    }
}

/// Settings for one endpoint, every default filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct EndpointConfig {
    pub provider: Provider,
    pub base_url: String,
    pub model: String,
    /// The environment variable holding the API key; `None` for servers that
    /// need none (a local Ollama).
    pub api_key_env: Option<String>,
    /// The longest wait for a reply to start, or for its next chunk.
    pub timeout_s: f64,
    /// The longest a whole reply may take.
    pub total_timeout_s: f64,
    /// Whether replies are streamed.
    pub stream: bool,
    /// Whether the server's prompt cache is used.
    pub prompt_cache: bool,
    pub max_retries: u32,
    pub temperature: f64,
    pub max_tokens: Option<u32>,
    /// How many calls the server is sent at once, when the settings say.
    pub concurrency: Option<u32>,
    /// The structured-output format the settings force, if any.
    pub structured_output: Option<StructuredOutput>,
    /// The context window the settings give the model, if any.
    pub context_window: Option<u32>,
    /// The prompt tier the settings give the model, if any.
    pub tier: Option<String>,
}

/// The resolved `[llm]` settings.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmConfig {
    pub default: EndpointConfig,
    /// Archetype → its endpoint, where it differs from the default.
    pub agents: BTreeMap<String, EndpointConfig>,
    /// For `provider = "replay"`.
    pub replay_file: Option<String>,
}

/// A setting that cannot be used, named by where it was written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {message}")]
pub struct LlmConfigError {
    /// `control-room.toml [llm]`, `controlRoom.llm`, or an environment variable.
    pub source_name: String,
    pub message: String,
}

/// Where a layer came from, for error messages.
pub struct Layer<'a> {
    pub name: &'a str,
    pub value: LlmLayer,
}

impl Layer<'_> {
    /// Reads a layer from TOML (`[llm]` of `control-room.toml`).
    pub fn from_toml<'a>(name: &'a str, value: &toml::Value) -> Result<Layer<'a>, LlmConfigError> {
        let value = value
            .clone()
            .try_into::<LlmLayer>()
            .map_err(|error| LlmConfigError {
                source_name: name.to_owned(),
                message: error.message().to_owned(),
            })?;
        Ok(Layer { name, value })
    }

    /// Reads a layer from JSON (the editor's `controlRoom.llm`).
    pub fn from_json<'a>(
        name: &'a str,
        value: &serde_json::Value,
    ) -> Result<Layer<'a>, LlmConfigError> {
        let value =
            serde_json::from_value::<LlmLayer>(value.clone()).map_err(|error| LlmConfigError {
                source_name: name.to_owned(),
                message: error.to_string(),
            })?;
        Ok(Layer { name, value })
    }

    /// The `CONTROL_ROOM_LLM_*` variables, read through `env`.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Layer<'static> {
        let read = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        Layer {
            name: "the environment",
            value: LlmLayer {
                provider: read(ENV_PROVIDER),
                base_url: read(ENV_BASE_URL),
                model: read(ENV_MODEL),
                ..LlmLayer::default()
            },
        }
    }
}

impl LlmConfig {
    /// Resolves layers, later ones winning, and checks every value.
    pub fn resolve(layers: &[Layer<'_>]) -> Result<LlmConfig, LlmConfigError> {
        let mut merged = LlmLayer::default();
        for layer in layers {
            // Each value is checked in the layer that set it, so the error
            // names the right place.
            check_layer(layer.name, &layer.value)?;
            endpoint(layer.name, &layer.value, None)?;
            for (name, agent) in &layer.value.agents {
                endpoint(layer.name, agent, Some(name))?;
            }
            merged = merged.merged(&layer.value);
        }
        let source = layers
            .iter()
            .rev()
            .find(|layer| layer.value.provider.is_some())
            .map_or("[llm]", |layer| layer.name);
        let default = endpoint(source, &merged, None)?;
        let mut agents = BTreeMap::new();
        for (name, layer) in &merged.agents {
            let mut combined = merged.clone();
            combined.agents.clear();
            // A different provider starts from that provider's defaults.
            if layer.provider.is_some() && layer.provider != merged.provider {
                combined.base_url = None;
                combined.model = None;
                combined.api_key_env = None;
            }
            let agent = endpoint(source, &combined.merged(layer), Some(name))?;
            if agent != default {
                agents.insert(name.clone(), agent);
            }
        }
        if default.provider == Provider::Replay && merged.replay_file.is_none() {
            return Err(LlmConfigError {
                source_name: source.to_owned(),
                message: "provider `replay` needs `replay_file`, the cassette to answer from"
                    .into(),
            });
        }
        Ok(LlmConfig {
            default,
            agents,
            replay_file: merged.replay_file,
        })
    }

    /// The endpoint an archetype's steps call.
    pub fn for_archetype(&self, archetype: &str) -> &EndpointConfig {
        self.agents.get(archetype).unwrap_or(&self.default)
    }
}

fn check_layer(name: &str, layer: &LlmLayer) -> Result<(), LlmConfigError> {
    let error = |message: String| LlmConfigError {
        source_name: name.to_owned(),
        message,
    };
    for agent in layer.agents.keys() {
        if !ARCHETYPES.contains(&agent.as_str()) {
            return Err(error(format!(
                "`agents.{agent}` is not an agent archetype; known: {}",
                ARCHETYPES.join(", ")
            )));
        }
    }
    if let Some(env) = &layer.api_key_env
        && !env.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        // Someone pasted the key itself: say so without repeating it.
        return Err(error(
            "`api_key_env` must be the name of an environment variable (like OPENAI_API_KEY), not the key itself".into(),
        ));
    }
    Ok(())
}

fn endpoint(
    source: &str,
    layer: &LlmLayer,
    agent: Option<&str>,
) -> Result<EndpointConfig, LlmConfigError> {
    let key = |name: &str| match agent {
        Some(agent) => format!("`agents.{agent}.{name}`"),
        None => format!("`{name}`"),
    };
    let error = |message: String| LlmConfigError {
        source_name: source.to_owned(),
        message,
    };
    let provider = match &layer.provider {
        None => Provider::OpenAi,
        Some(name) => Provider::parse(name).ok_or_else(|| {
            error(format!(
                "{} is `{name}`; use openai, anthropic, ollama or replay",
                key("provider")
            ))
        })?,
    };
    let (default_url, default_model, default_key) = match provider {
        Provider::Anthropic => (
            DEFAULT_ANTHROPIC_URL,
            DEFAULT_ANTHROPIC_MODEL,
            Some(DEFAULT_ANTHROPIC_KEY_ENV),
        ),
        Provider::Ollama => (DEFAULT_OLLAMA_URL, DEFAULT_OPENAI_MODEL, None),
        Provider::OpenAi | Provider::Replay => (DEFAULT_OPENAI_URL, DEFAULT_OPENAI_MODEL, None),
    };
    let base_url = layer
        .base_url
        .clone()
        .unwrap_or_else(|| default_url.to_owned());
    let url = reqwest::Url::parse(&base_url)
        .map_err(|_| error(format!("{} is not a URL", key("base_url"))))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(error(format!(
            "{} must start with http:// or https://",
            key("base_url")
        )));
    }
    let timeout_s = layer.timeout_s.unwrap_or(120.0);
    if !(timeout_s > 0.0 && timeout_s <= 3600.0) {
        return Err(error(format!(
            "{} must be between 0 and 3600 seconds",
            key("timeout_s")
        )));
    }
    let total_timeout_s = layer.total_timeout_s.unwrap_or(1800.0).max(timeout_s);
    if total_timeout_s > 86_400.0 {
        return Err(error(format!(
            "{} must be at most 86400 seconds",
            key("total_timeout_s")
        )));
    }
    let max_retries = layer.max_retries.unwrap_or(2);
    if max_retries > 10 {
        return Err(error(format!("{} must be at most 10", key("max_retries"))));
    }
    let temperature = layer.temperature.unwrap_or(0.7);
    if !(0.0..=2.0).contains(&temperature) {
        return Err(error(format!(
            "{} must be between 0 and 2",
            key("temperature")
        )));
    }
    let model = layer
        .model
        .clone()
        .filter(|model| !model.trim().is_empty())
        .unwrap_or_else(|| default_model.to_owned());
    Ok(EndpointConfig {
        provider,
        base_url: base_url.trim_end_matches('/').to_owned(),
        model,
        api_key_env: layer
            .api_key_env
            .clone()
            .or_else(|| default_key.map(str::to_owned)),
        timeout_s,
        total_timeout_s,
        stream: layer.stream.unwrap_or(true),
        prompt_cache: layer.prompt_cache.unwrap_or(true),
        max_retries,
        temperature,
        max_tokens: layer.max_tokens,
        concurrency: match layer.concurrency {
            Some(0) => return Err(error(format!("{} must be at least 1", key("concurrency")))),
            other => other,
        },
        structured_output: match &layer.structured_output {
            None => None,
            Some(name) => Some(StructuredOutput::parse(name).ok_or_else(|| {
                error(format!(
                    "{} is `{name}`; use json_schema, json_object or prompt",
                    key("structured_output")
                ))
            })?),
        },
        context_window: match layer.context_window {
            Some(window) if window < 512 => {
                return Err(error(format!(
                    "{} must be at least 512 tokens",
                    key("context_window")
                )));
            }
            other => other,
        },
        tier: match &layer.tier {
            Some(tier) if !TIERS.contains(&tier.as_str()) => {
                return Err(error(format!(
                    "{} is `{tier}`; use {}",
                    key("tier"),
                    TIERS.join(", ")
                )));
            }
            other => other.clone(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toml_layer(text: &str) -> Layer<'static> {
        let value: toml::Value = toml::from_str(text).unwrap();
        Layer::from_toml("control-room.toml [llm]", &value["llm"]).unwrap()
    }

    #[test]
    fn defaults_are_a_local_ollama() {
        let config = LlmConfig::resolve(&[]).unwrap();
        assert_eq!(config.default.provider, Provider::OpenAi);
        assert_eq!(config.default.base_url, DEFAULT_OPENAI_URL);
        assert_eq!(config.default.model, DEFAULT_OPENAI_MODEL);
        assert_eq!(config.default.api_key_env, None);
        assert_eq!(config.default.max_retries, 2);
        assert!(config.agents.is_empty());
    }

    #[test]
    fn layers_override_in_order_and_agents_inherit() {
        let file = toml_layer(
            "[llm]\nmodel = \"llama3.1:8b\"\ntemperature = 0.4\n[llm.agents.critic]\nmodel = \"qwen2.5:14b\"\n[llm.agents.writer]\nprovider = \"anthropic\"\n",
        );
        let editor = Layer::from_json(
            "controlRoom.llm",
            &serde_json::json!({"baseUrl": "http://127.0.0.1:8000/v1/", "maxRetries": 1}),
        )
        .unwrap();
        let env = Layer::from_env(&|name| (name == ENV_MODEL).then(|| "mistral-nemo".to_owned()));
        let config = LlmConfig::resolve(&[file, editor, env]).unwrap();
        // A bad value is blamed on the layer that set it.
        let broken = toml_layer("[llm]\ntemperature = 9.0\n");
        let env = Layer::from_env(&|name| (name == ENV_MODEL).then(|| "m".to_owned()));
        let error = LlmConfig::resolve(&[broken, env]).unwrap_err();
        assert_eq!(error.source_name, "control-room.toml [llm]");
        assert_eq!(config.default.model, "mistral-nemo");
        assert_eq!(config.default.base_url, "http://127.0.0.1:8000/v1");
        assert_eq!(config.default.max_retries, 1);
        assert_eq!(config.default.temperature, 0.4);
        let critic = config.for_archetype("critic");
        assert_eq!(critic.model, "qwen2.5:14b");
        assert_eq!(critic.base_url, "http://127.0.0.1:8000/v1");
        let writer = config.for_archetype("writer");
        assert_eq!(writer.provider, Provider::Anthropic);
        assert_eq!(writer.base_url, DEFAULT_ANTHROPIC_URL);
        assert_eq!(
            writer.api_key_env.as_deref(),
            Some(DEFAULT_ANTHROPIC_KEY_ENV)
        );
        assert_eq!(writer.temperature, 0.4);
        assert_eq!(config.for_archetype("planner"), &config.default);
    }

    #[test]
    fn concurrency_is_read_and_zero_refused() {
        let config = LlmConfig::resolve(&[toml_layer("[llm]\nconcurrency = 3\n")]).unwrap();
        assert_eq!(config.default.concurrency, Some(3));
        assert_eq!(LlmConfig::resolve(&[]).unwrap().default.concurrency, None);
        let error = LlmConfig::resolve(&[toml_layer("[llm]\nconcurrency = 0\n")]).unwrap_err();
        assert!(error.to_string().contains("concurrency"), "{error}");
    }

    #[test]
    fn bad_settings_name_their_key_and_source() {
        let cases = [
            ("[llm]\nprovider = \"gpt\"\n", "`provider` is `gpt`"),
            (
                "[llm]\nbase_url = \"localhost\"\n",
                "`base_url` is not a URL",
            ),
            (
                "[llm]\ntemperature = 3.0\n",
                "`temperature` must be between 0 and 2",
            ),
            (
                "[llm.agents.judge]\nmodel = \"x\"\n",
                "`agents.judge` is not an agent archetype",
            ),
            (
                "[llm]\napi_key_env = \"sk-abc123-def\"\n",
                "not the key itself",
            ),
            ("[llm]\nprovider = \"replay\"\n", "needs `replay_file`"),
            (
                "[llm]\nstructured_output = \"grammar\"\n",
                "`structured_output` is `grammar`",
            ),
            ("[llm]\ncontext_window = 100\n", "`context_window` must be"),
            ("[llm]\ntier = \"huge\"\n", "`tier` is `huge`"),
        ];
        for (text, expected) in cases {
            let value: toml::Value = toml::from_str(text).unwrap();
            let error = Layer::from_toml("control-room.toml [llm]", &value["llm"])
                .and_then(|layer| LlmConfig::resolve(&[layer]))
                .unwrap_err();
            assert!(error.to_string().contains(expected), "{text}: {error}");
            assert!(error.to_string().starts_with("control-room.toml [llm]: "));
            assert!(!error.to_string().contains("sk-abc123"), "{error}");
        }
        let unknown: toml::Value = toml::from_str("[llm]\nmodle = \"x\"\n").unwrap();
        let error = Layer::from_toml("control-room.toml [llm]", &unknown["llm"])
            .err()
            .unwrap();
        assert!(error.message.contains("unknown field `modle`"), "{error}");
    }
}
