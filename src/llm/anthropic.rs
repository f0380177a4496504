//! Anthropic's Messages API (`POST {base_url}/messages`).

use serde_json::{Value, json};

use super::UnreadableReply;
use super::config::EndpointConfig;
use crate::engine::model::{Decoding, ModelRequest, Role};

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
    });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
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
