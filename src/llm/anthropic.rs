//! Anthropic's Messages API (`POST {base_url}/messages`).

use serde_json::{Value, json};

use super::config::EndpointConfig;
use super::sse::{Delta, StreamError};
use super::{UnreadableReply, sse};
use crate::llm::model::{Decoding, ModelRequest, Role};

pub const API_VERSION: &str = "2023-06-01";
/// The Messages API requires `max_tokens`; a scene fits in this.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

pub fn url(endpoint: &EndpointConfig) -> String {
    format!("{}/messages", endpoint.base_url)
}

/// The request body, and the decoding in effect: temperature is capped at 1
/// (the API's range), `max_tokens` always set, JSON asked for in the prompt.
pub fn body(endpoint: &EndpointConfig, request: &ModelRequest) -> (Value, Decoding) {
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter(|message| message.role == Role::System)
        .map(|message| message.content.as_str())
        .collect();
    let messages: Vec<Value> = request
        .messages
        .iter()
        .filter(|message| message.role != Role::System)
        .map(|message| json!({"role": message.role, "content": message.content}))
        .collect();
    let temperature = endpoint.temperature.min(1.0);
    let max_tokens = endpoint
        .max_tokens
        .or(request.reply_limit)
        .unwrap_or(DEFAULT_MAX_TOKENS);
    let mut body = json!({
        "model": endpoint.model,
        "max_tokens": max_tokens,
        "messages": messages,
        "temperature": temperature,
        "stream": endpoint.stream,
    });
    if !system.is_empty() {
        let system = system.join("\n\n");
        // The system prompt holds the stable layers: cached, the next
        // call with the same prefix reads them at a tenth of the price.
        body["system"] = if endpoint.prompt_cache {
            json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}])
        } else {
            json!(system)
        };
    }
    let effective = Decoding {
        temperature: Some(temperature),
        max_tokens: Some(max_tokens),
        response_format: Some(
            if request.json_reply {
                "json_prompt"
            } else {
                "text"
            }
            .into(),
        ),
    };
    (body, effective)
}

/// What one event of a streamed reply adds: `message_start` names the
/// model, `content_block_delta` carries text, `message_delta` the
/// `stop_reason`, `message_stop` ends it; an `error` event is a failure.
pub fn delta(event: &sse::Event) -> Result<Delta, StreamError> {
    let value: Value = serde_json::from_str(&event.data).map_err(|error| StreamError::NotJson {
        what: "an event",
        error,
    })?;
    let kind = event
        .event
        .as_deref()
        .or_else(|| value["type"].as_str())
        .unwrap_or_default();
    Ok(match kind {
        "message_start" => Delta {
            model: value["message"]["model"].as_str().map(str::to_owned),
            usage: value["message"]["usage"].as_object().cloned(),
            ..Delta::default()
        },
        "content_block_delta" => Delta {
            text: value["delta"]["text"].as_str().map(str::to_owned),
            ..Delta::default()
        },
        "message_delta" => Delta {
            stop: value["delta"]["stop_reason"].as_str().map(str::to_owned),
            usage: value["usage"].as_object().cloned(),
            ..Delta::default()
        },
        "message_stop" => Delta {
            done: true,
            ..Delta::default()
        },
        "error" => {
            return Err(StreamError::Reported {
                said: value["error"]["message"]
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_owned),
            });
        }
        _ => Delta::default(),
    })
}

/// A streamed reply in the shape of an unstreamed one.
pub fn streamed_value(text: &str, model: Option<&str>, stop: Option<&str>) -> Value {
    json!({
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop,
    })
}

/// The reply's text (its text blocks joined) and the model that served it.
pub fn reply(value: &Value) -> Result<(String, Option<String>), UnreadableReply> {
    let blocks = value["content"]
        .as_array()
        .ok_or(UnreadableReply::Missing("content"))?;
    let text: String = blocks
        .iter()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .collect();
    if text.is_empty() && value["stop_reason"] == "refusal" {
        return Err(UnreadableReply::Refused);
    }
    Ok((text, value["model"].as_str().map(str::to_owned)))
}
