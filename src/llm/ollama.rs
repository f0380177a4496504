//! Ollama's own chat API (`POST {base_url}/api/chat`). Its OpenAI-compatible
//! `/v1` cannot be told a context window, and Ollama cuts every prompt
//! longer than its default one (2,048 to 4,096 tokens) without a word; here
//! each call carries the window its prompt was fitted to (`num_ctx`) and its
//! reply limit (`num_predict`). A JSON step's schema goes in `format`.
//! Streamed replies are lines of JSON, the last one `done`.

use serde_json::{Value, json};

use super::config::{EndpointConfig, StructuredOutput};
use super::sse::{Delta, StreamError};
use super::{UnreadableReply, sse};
use crate::llm::model::{Decoding, ModelRequest};

/// The server's root: the base URL without a `/v1` a writer may have
/// copied from the OpenAI-compatible setup.
pub fn root(endpoint: &EndpointConfig) -> &str {
    let base = endpoint.base_url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base)
}

pub fn url(endpoint: &EndpointConfig) -> String {
    format!("{}/api/chat", root(endpoint))
}

/// How long Ollama keeps the model loaded after a call (its default is
/// five minutes; a writer reads a draft for longer than that).
pub const KEEP_ALIVE: &str = "30m";

/// The request body, with a JSON step's schema sent as `format` says, and
/// the decoding it asks for.
pub fn body(
    endpoint: &EndpointConfig,
    request: &ModelRequest,
    format: StructuredOutput,
) -> (Value, Decoding) {
    let max_tokens = endpoint.max_tokens.or(request.reply_limit);
    let mut options = json!({"temperature": endpoint.temperature});
    if let Some(max_tokens) = max_tokens {
        options["num_predict"] = json!(max_tokens);
    }
    if let Some(window) = endpoint.context_window.or(request.context_window) {
        options["num_ctx"] = json!(window);
    }
    let mut body = json!({
        "model": endpoint.model,
        "messages": request.messages,
        "stream": endpoint.stream,
        "options": options,
    });
    // The model stays loaded between a run's steps, its prompt's evaluated
    // prefix with it.
    if endpoint.prompt_cache {
        body["keep_alive"] = json!(KEEP_ALIVE);
    }
    let response_format = match (&request.schema, request.json_reply, format) {
        (Some(schema), _, StructuredOutput::JsonSchema) => {
            body["format"] = schema.clone();
            "json_schema"
        }
        (_, true, StructuredOutput::JsonSchema | StructuredOutput::JsonObject) => {
            body["format"] = json!("json");
            "json_object"
        }
        (_, true, StructuredOutput::Prompt) => "json_prompt",
        (_, false, _) => "text",
    };
    let effective = Decoding {
        temperature: Some(endpoint.temperature),
        max_tokens,
        response_format: Some(response_format.into()),
    };
    (body, effective)
}

/// What one line of a streamed reply adds: `message.content`, the model,
/// and on the last (`done`) why it stopped; an `error` is the server's
/// failure.
pub fn delta(event: &sse::Event) -> Result<Delta, StreamError> {
    let value: Value = serde_json::from_str(&event.data).map_err(|error| StreamError::NotJson {
        what: "a line",
        error,
    })?;
    if let Some(error) = value.get("error") {
        return Err(StreamError::Reported {
            said: error
                .as_str()
                .map_or_else(|| error.to_string(), str::to_owned),
        });
    }
    let done = value["done"].as_bool().unwrap_or(false);
    Ok(Delta {
        text: value["message"]["content"].as_str().map(str::to_owned),
        model: value["model"].as_str().map(str::to_owned),
        stop: value["done_reason"].as_str().map(str::to_owned),
        usage: done
            .then(|| {
                ["prompt_eval_count", "eval_count"]
                    .into_iter()
                    .filter_map(|key| Some((key.to_owned(), value.get(key)?.clone())))
                    .collect::<serde_json::Map<String, Value>>()
            })
            .filter(|usage| !usage.is_empty()),
        done,
    })
}

/// A streamed reply in the shape of an unstreamed one.
pub fn streamed_value(text: &str, model: Option<&str>, stop: Option<&str>) -> Value {
    json!({
        "model": model,
        "message": {"role": "assistant", "content": text},
        "done": true,
        "done_reason": stop,
    })
}

/// The reply's text and the model that served it.
pub fn reply(value: &Value) -> Result<(String, Option<String>), UnreadableReply> {
    let text = value["message"]["content"]
        .as_str()
        .ok_or(UnreadableReply::Missing("message.content"))?;
    Ok((text.to_owned(), value["model"].as_str().map(str::to_owned)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::config::{LlmConfig, Provider};

    fn endpoint() -> EndpointConfig {
        let mut config = LlmConfig::resolve(&[]).unwrap().default;
        config.provider = Provider::Ollama;
        config.base_url = "http://localhost:11434/v1/".into();
        config
    }

    #[test]
    fn a_call_carries_its_window_its_limit_and_its_schema() {
        let request = ModelRequest {
            step_id: "continuity".into(),
            agent_archetype: "continuity".into(),
            prompt_type: "check_continuity".into(),
            messages: Vec::new(),
            json_reply: true,
            schema: Some(json!({"type": "object"})),
            reply_limit: Some(900),
            context_window: Some(8192),
            model: None,
        };
        assert_eq!(url(&endpoint()), "http://localhost:11434/api/chat");
        let (body, effective) = body(&endpoint(), &request, StructuredOutput::JsonSchema);
        assert_eq!(body["options"]["num_ctx"], 8192);
        assert_eq!(body["options"]["num_predict"], 900);
        assert_eq!(body["format"], json!({"type": "object"}));
        assert_eq!(body["keep_alive"], KEEP_ALIVE, "the model stays loaded");
        assert_eq!(effective.response_format.as_deref(), Some("json_schema"));
        let (body, _) = super::body(&endpoint(), &request, StructuredOutput::JsonObject);
        assert_eq!(body["format"], "json");
        let (body, _) = super::body(&endpoint(), &request, StructuredOutput::Prompt);
        assert!(body.get("format").is_none());
    }

    #[test]
    fn a_streamed_line_and_a_whole_reply_are_read() {
        let line = |data: Value| sse::Event {
            event: None,
            data: data.to_string(),
        };
        let delta = delta(&line(
            json!({"model": "m", "message": {"content": "The tide"}, "done": false}),
        ))
        .unwrap();
        assert_eq!(delta.text.as_deref(), Some("The tide"));
        assert!(!delta.done);
        let last = super::delta(&line(
            json!({"model": "m", "message": {"content": ""}, "done": true, "done_reason": "length", "prompt_eval_count": 812}),
        ))
        .unwrap();
        assert!(last.done);
        assert_eq!(last.stop.as_deref(), Some("length"));
        assert_eq!(
            last.usage
                .as_ref()
                .and_then(|usage| usage["prompt_eval_count"].as_u64()),
            Some(812)
        );
        assert!(super::delta(&line(json!({"error": "model not found"}))).is_err());
        let value = streamed_value("The tide", Some("m"), Some("stop"));
        assert_eq!(
            reply(&value).unwrap(),
            ("The tide".into(), Some("m".into()))
        );
    }
}
