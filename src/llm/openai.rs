//! OpenAI-compatible Chat Completions (`POST {base_url}/chat/completions`):
//! OpenAI, OpenRouter, Ollama, vLLM, llama.cpp's server, LM Studio.

use serde_json::{Value, json};

use super::config::EndpointConfig;
use crate::engine::model::{Decoding, ModelRequest};

pub fn url(endpoint: &EndpointConfig) -> String {
    format!("{}/chat/completions", endpoint.base_url)
}

/// The request body, and the decoding it asks for.
pub fn body(endpoint: &EndpointConfig, request: &ModelRequest) -> (Value, Decoding) {
    let mut body = json!({
        "model": endpoint.model,
        "messages": request.messages,
        "temperature": endpoint.temperature,
        "stream": false,
    });
    if let Some(max_tokens) = endpoint.max_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    let response_format = match (&request.schema, request.json_reply) {
        (Some(schema), _) => {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": request.prompt_type, "schema": schema, "strict": true},
            });
            "json_schema"
        }
        (None, true) => "json_prompt",
        (None, false) => "text",
    };
    let effective = Decoding {
        temperature: Some(endpoint.temperature),
        max_tokens: endpoint.max_tokens,
        response_format: Some(response_format.into()),
    };
    (body, effective)
}

/// The reply's text and the model that served it.
pub fn reply(value: &Value) -> Result<(String, Option<String>), String> {
    let choice = value
        .pointer("/choices/0")
        .ok_or("the reply has no `choices`")?;
    let message = &choice["message"];
    let text = match &message["content"] {
        Value::String(text) => text.clone(),
        // Some servers send content as parts.
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => match message["refusal"].as_str() {
            Some(refusal) => return Err(format!("the model refused: {refusal}")),
            None => return Err("the reply has no `choices[0].message.content`".into()),
        },
    };
    Ok((text, value["model"].as_str().map(str::to_owned)))
}
