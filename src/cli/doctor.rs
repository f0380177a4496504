//! `control-room doctor`: what an editor plugin's health check asks. Which
//! version runs, which manuscript root a folder lies in, and, for every
//! model endpoint the `[llm]` settings give, whether its key variable is set,
//! whether its server accepts a connection and, for an OpenAI-compatible
//! server, whether `GET /models` lists the model and how the server takes a
//! JSON step's schema (one call of one token finds out). The key itself is
//! never put in the report, only whether its variable has a value.

use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::index::find_root;
use crate::llm::config::{EndpointConfig, LlmLayer, Provider};

/// How long one endpoint may take to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// The report, and whether everything a run needs is in place.
pub struct Report {
    pub json: Value,
    pub healthy: bool,
}

/// Examines the manuscript around `dir`. `editor_llm` is the editor's
/// `controlRoom.llm` layer (JSON), as the language server would get it.
pub fn examine(dir: &Path, editor_llm: Option<&Value>) -> anyhow::Result<Report> {
    let start = dir
        .canonicalize()
        .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", dir.display()))?;
    let root = find_root(&start);
    let mut healthy = root.is_some();
    let env = |name: &str| std::env::var(name).ok();
    let editor = editor_llm
        .map(|value| {
            serde_json::from_value::<LlmLayer>(value.clone())
                .map_err(|error| anyhow::anyhow!("editor settings (controlRoom.llm): {error}"))
        })
        .transpose();
    let config = editor.and_then(|editor| {
        crate::llm::workspace_config(root.as_deref().unwrap_or(&start), editor.as_ref(), &env)
            .map_err(Into::into)
    });
    let llm = match config {
        Ok(config) => {
            let mut endpoints = vec![endpoint("default", &config.default, &env)];
            endpoints.extend(
                config
                    .agents
                    .iter()
                    .map(|(agent, config)| endpoint(agent, config, &env)),
            );
            healthy &= endpoints.iter().all(|endpoint| {
                endpoint["reachable"] != false
                    && endpoint["key_set"] != false
                    && endpoint["problem"].is_null()
            });
            json!({"endpoints": endpoints})
        }
        Err(error) => {
            healthy = false;
            json!({"error": format!("{error:#}")})
        }
    };
    Ok(Report {
        json: json!({
            "version": env!("CARGO_PKG_VERSION"),
            "root": root.map(|root| root.display().to_string()),
            "llm": llm,
        }),
        healthy,
    })
}

/// One endpoint: where it is, its key variable, and whether it answers.
fn endpoint(agent: &str, config: &EndpointConfig, env: &dyn Fn(&str) -> Option<String>) -> Value {
    let key_set = config
        .api_key_env
        .as_deref()
        .map(|name| env(name).is_some_and(|value| !value.trim().is_empty()));
    let (mut reachable, mut detail) = match config.provider {
        Provider::Replay => (None, "replays a recorded cassette".to_owned()),
        _ => match reach(&config.base_url) {
            Ok(detail) => (Some(true), detail),
            Err(detail) => (Some(false), detail),
        },
    };
    let mut structured_output = None;
    let mut chars_per_token = None;
    let mut problem = None;
    let local = matches!(config.provider, Provider::OpenAi | Provider::Ollama);
    if local && reachable == Some(true) && key_set != Some(false) {
        match served(config, env) {
            Ok(Served {
                models,
                format,
                measured,
                ollama_behind_openai,
            }) => {
                detail = format!("{detail}; serves {models}");
                structured_output = Some(format);
                chars_per_token = measured;
                problem = ollama_behind_openai.then(|| {
                    format!(
                        "this is Ollama's OpenAI-compatible API, which cuts every prompt at Ollama's default window without a word: set provider = \"ollama\" and base_url = \"{}\"",
                        config.base_url.trim_end_matches('/').trim_end_matches("/v1")
                    )
                });
            }
            Err(problem) => {
                reachable = Some(false);
                detail = format!("{detail}, but {problem}");
            }
        }
    }
    json!({
        "structured_output": structured_output,
        "chars_per_token": chars_per_token,
        "problem": problem,
        "agent": agent,
        "provider": config.provider.name(),
        "base_url": config.base_url,
        "model": config.model,
        "api_key_env": config.api_key_env,
        "key_set": key_set,
        "reachable": reachable,
        "detail": detail,
    })
}

/// Asks an OpenAI-compatible server which models it serves and, when it
/// serves the configured one, how it takes a JSON step's schema: the names
/// it lists, the structured-output format a run will use, and the
/// characters a token of the model holds when its tokenizer can say.
fn served(config: &EndpointConfig, env: &dyn Fn(&str) -> Option<String>) -> Result<Served, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| error.to_string())?;
    let endpoint =
        crate::llm::Endpoint::new(config.clone(), env).map_err(|error| error.to_string())?;
    runtime.block_on(async {
        let models = endpoint
            .models(MODELS_TIMEOUT)
            .await
            .map_err(|error| error.to_string())?;
        let listed = |name: &str| {
            name == config.model
                || name.rsplit(['/', '\\']).next() == Some(config.model.as_str())
                || name.strip_suffix(":latest") == Some(config.model.as_str())
        };
        if !models.iter().any(|name| listed(name)) {
            return Err(format!(
                "it does not serve `{}` (it serves {}): check [llm] model",
                config.model,
                shown(&models)
            ));
        }
        let format = endpoint
            .probe_structured_output()
            .await
            .map_err(|error| error.to_string())?;
        let measured = endpoint.calibrate().await;
        Ok(Served {
            models: shown(&models),
            format: format.name().to_owned(),
            measured,
            ollama_behind_openai: endpoint.is_ollama_behind_openai().await,
        })
    })
}

/// What a server that answers says of itself.
struct Served {
    /// The models it lists, for a line.
    models: String,
    /// The structured-output format a run will use.
    format: String,
    /// Characters per token, when its tokenizer can say.
    measured: Option<f32>,
    /// It is Ollama, reached through its OpenAI-compatible API.
    ollama_behind_openai: bool,
}

/// How long `GET /models` may take.
const MODELS_TIMEOUT: Duration = Duration::from_secs(5);

fn shown(models: &[String]) -> String {
    match models {
        [] => "no model".to_owned(),
        _ => models
            .iter()
            .map(|model| format!("`{model}`"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Opens (and closes) a TCP connection to the URL's host and port.
fn reach(base_url: &str) -> Result<String, String> {
    let url = reqwest::Url::parse(base_url).map_err(|error| format!("{base_url}: {error}"))?;
    let host = url
        .host_str()
        .ok_or_else(|| format!("{base_url} names no host"))?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| format!("{base_url} names no port"))?;
    let addresses: Vec<_> = (host, port)
        .to_socket_addrs()
        .map_err(|error| format!("cannot resolve {host}: {error}"))?
        .collect();
    let mut last = format!("{host} has no address");
    for address in addresses {
        let started = Instant::now();
        match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
            Ok(_) => {
                return Ok(format!(
                    "{host}:{port} accepted a connection in {} ms",
                    started.elapsed().as_millis()
                ));
            }
            Err(error) => last = format!("{host}:{port}: {error}"),
        }
    }
    Err(last)
}

/// The report for people: one line per finding.
pub fn human(report: &Value) -> String {
    let mut lines = vec![format!(
        "control-room {}",
        report["version"].as_str().unwrap_or("?")
    )];
    match report["root"].as_str() {
        Some(root) => lines.push(format!("ok: manuscript root {root}")),
        None => lines.push(
            "problem: no manuscript root here or above (a folder with control-room.toml, or Story/ and Compendium/)".to_owned(),
        ),
    }
    if let Some(error) = report["llm"]["error"].as_str() {
        lines.push(format!("problem: the [llm] settings: {error}"));
    }
    for endpoint in report["llm"]["endpoints"].as_array().into_iter().flatten() {
        let name = format!(
            "{} model {} ({} at {})",
            endpoint["agent"].as_str().unwrap_or_default(),
            endpoint["model"].as_str().unwrap_or_default(),
            endpoint["provider"].as_str().unwrap_or_default(),
            endpoint["base_url"].as_str().unwrap_or_default(),
        );
        let detail = endpoint["detail"].as_str().unwrap_or_default();
        let verdict = if endpoint["reachable"] == false {
            "problem"
        } else {
            "ok"
        };
        lines.push(format!("{verdict}: {name}: {detail}"));
        if let Some(format) = endpoint["structured_output"].as_str() {
            lines.push(format!(
                "ok: {name}: JSON steps send their schema as {format}"
            ));
        }
        if let Some(problem) = endpoint["problem"].as_str() {
            lines.push(format!("problem: {name}: {problem}"));
        }
        if let Some(cpt) = endpoint["chars_per_token"].as_f64() {
            lines.push(format!(
                "ok: {name}: prompts are counted by the server's tokenizer, {cpt:.2} characters a token"
            ));
        }
        if endpoint["key_set"] == false {
            lines.push(format!(
                "problem: {name}: the variable {} holding its API key is not set",
                endpoint["api_key_env"].as_str().unwrap_or_default()
            ));
        }
    }
    lines.join("\n")
}
