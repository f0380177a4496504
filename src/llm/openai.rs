//! OpenAI-compatible Chat Completions (`POST {base_url}/chat/completions`):
//! OpenAI, OpenRouter, Ollama, vLLM, llama.cpp's server, LM Studio.

use serde_json::{Value, json};

use super::config::{EndpointConfig, StructuredOutput};
use super::sse::{Delta, StreamError};
use super::{UnreadableReply, sse};
use crate::llm::model::{Decoding, ModelRequest};

pub fn url(endpoint: &EndpointConfig) -> String {
    format!("{}/chat/completions", endpoint.base_url)
}

/// The request body, with a JSON step's schema sent as `format` says, and
/// the decoding it asks for.
pub fn body(
    endpoint: &EndpointConfig,
    request: &ModelRequest,
    format: StructuredOutput,
) -> (Value, Decoding) {
    let mut body = json!({
        "model": endpoint.model,
        "messages": request.messages,
        "temperature": endpoint.temperature,
        "stream": endpoint.stream,
    });
    if endpoint.stream {
        // The usage figures come in the last chunk only when asked for.
        body["stream_options"] = json!({"include_usage": true});
    }
    // llama.cpp's server keeps the prompt's evaluated prefix for the next
    // call with `cache_prompt`; a hosted API would refuse the unknown
    // field, and caches a byte-identical prefix by itself.
    if endpoint.prompt_cache && is_local(&endpoint.base_url) {
        body["cache_prompt"] = json!(true);
    }
    // The writer's limit, else the room the prompt's tier keeps for the
    // reply: a server asked without one writes until its context is full.
    let max_tokens = endpoint.max_tokens.or(request.reply_limit);
    if let Some(max_tokens) = max_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    let response_format = match (&request.schema, request.json_reply) {
        (Some(schema), _) => match format {
            StructuredOutput::JsonSchema => {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": {"name": request.prompt_type, "schema": schema, "strict": is_strict(schema)},
                });
                "json_schema"
            }
            StructuredOutput::JsonObject => {
                body["response_format"] = json!({"type": "json_object", "schema": schema});
                "json_object"
            }
            StructuredOutput::Prompt => "json_prompt",
        },
        (None, true) => "json_prompt",
        (None, false) => "text",
    };
    let effective = Decoding {
        temperature: Some(endpoint.temperature),
        max_tokens,
        response_format: Some(response_format.into()),
    };
    (body, effective)
}

/// What one event of a streamed reply adds: `data: [DONE]` ends it, a
/// chunk carries `choices[0].delta.content` and at last its
/// `finish_reason`; an `error` object is the server's failure.
pub fn delta(event: &sse::Event) -> Result<Delta, StreamError> {
    if event.data.trim() == "[DONE]" {
        return Ok(Delta {
            done: true,
            ..Delta::default()
        });
    }
    let value: Value = serde_json::from_str(&event.data).map_err(|error| StreamError::NotJson {
        what: "a chunk",
        error,
    })?;
    if let Some(error) = value.get("error") {
        return Err(StreamError::Reported {
            said: error["message"]
                .as_str()
                .map_or_else(|| error.to_string(), str::to_owned),
        });
    }
    let choice = &value["choices"][0];
    Ok(Delta {
        text: choice["delta"]["content"].as_str().map(str::to_owned),
        model: value["model"].as_str().map(str::to_owned),
        stop: choice["finish_reason"].as_str().map(str::to_owned),
        usage: usage_of(&value),
        done: false,
    })
}

/// A chunk's usage figures: its `usage` (the last chunk's, when asked for
/// with `stream_options`), with llama.cpp's `timings` beside them.
fn usage_of(chunk: &Value) -> Option<serde_json::Map<String, Value>> {
    let mut usage = chunk["usage"].as_object().cloned().unwrap_or_default();
    if let Some(timings) = chunk.get("timings").filter(|timings| timings.is_object()) {
        usage.insert("timings".to_owned(), timings.clone());
    }
    (!usage.is_empty()).then_some(usage)
}

/// A streamed reply in the shape of an unstreamed one.
pub fn streamed_value(text: &str, model: Option<&str>, stop: Option<&str>) -> Value {
    json!({
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": stop}],
    })
}

/// The reply's text and the model that served it.
pub fn reply(value: &Value) -> Result<(String, Option<String>), UnreadableReply> {
    let choice = value
        .pointer("/choices/0")
        .ok_or(UnreadableReply::Missing("choices"))?;
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
            Some(refusal) => return Err(UnreadableReply::RefusedBecause(refusal.to_owned())),
            None => return Err(UnreadableReply::Missing("choices[0].message.content")),
        },
    };
    Ok((text, value["model"].as_str().map(str::to_owned)))
}

/// Whether `base_url` is a server on this machine or its network (a
/// loopback or private address, or a `.local` name): a llama.cpp, vLLM or
/// LM Studio server, not a hosted API.
pub fn is_local(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    match host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
    {
        Ok(std::net::IpAddr::V4(address)) => address.is_loopback() || address.is_private(),
        Ok(std::net::IpAddr::V6(address)) => address.is_loopback(),
        Err(_) => host == "localhost" || host.ends_with(".local"),
    }
}

/// Whether OpenAI's strict structured outputs accept `schema`: every object
/// closes its properties and requires all of them. Strict mode refuses
/// other schemas outright, so those are sent as guidance (`strict: false`);
/// local servers (Ollama, vLLM, llama.cpp, LM Studio) enforce either, and
/// the runner validates every reply regardless.
fn is_strict(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = map.get("properties") {
                let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
                let required: Vec<&str> = map
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|names| names.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if !closed
                    || properties
                        .keys()
                        .any(|key| !required.contains(&key.as_str()))
                {
                    return false;
                }
            }
            map.values().all(is_strict)
        }
        Value::Array(items) => items.iter().all(is_strict),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_server_on_this_machine_or_its_network_is_asked_to_keep_its_prompt_cache() {
        for local in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "http://192.168.1.20:8000/v1",
            "http://[::1]:8080/v1",
            "http://studio.local:1234/v1",
        ] {
            assert!(is_local(local), "{local}");
        }
        for hosted in [
            "https://api.openai.com/v1",
            "https://openrouter.ai/api/v1",
            "not a url",
        ] {
            assert!(!is_local(hosted), "{hosted}");
        }
        let request = ModelRequest {
            step_id: "draft".into(),
            agent_archetype: "writer".into(),
            prompt_type: "draft_scene".into(),
            messages: Vec::new(),
            json_reply: false,
            schema: None,
            reply_limit: None,
            context_window: None,
            model: None,
        };
        let mut endpoint = crate::llm::config::LlmConfig::resolve(&[]).unwrap().default;
        endpoint.base_url = "http://127.0.0.1:8080/v1".into();
        let (body, _) = body(&endpoint, &request, StructuredOutput::Prompt);
        assert_eq!(body["cache_prompt"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
        endpoint.base_url = "https://api.openai.com/v1".into();
        let (body, _) = super::body(&endpoint, &request, StructuredOutput::Prompt);
        assert!(body.get("cache_prompt").is_none(), "{body}");
        endpoint.base_url = "http://127.0.0.1:8080/v1".into();
        endpoint.prompt_cache = false;
        endpoint.stream = false;
        let (body, _) = super::body(&endpoint, &request, StructuredOutput::Prompt);
        assert!(
            body.get("cache_prompt").is_none() && body.get("stream_options").is_none(),
            "{body}"
        );
    }

    #[test]
    fn only_closed_fully_required_schemas_are_strict() {
        assert!(is_strict(&json!({
            "type": "object", "additionalProperties": false, "required": ["a"],
            "properties": {"a": {"type": "array", "items": {"type": "object", "additionalProperties": false, "required": ["b"], "properties": {"b": {"type": "string"}}}}}
        })));
        assert!(!is_strict(&json!({
            "type": "object", "additionalProperties": false, "required": ["a"],
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}}
        })));
        assert!(!is_strict(
            &json!({"type": "object", "required": ["a"], "properties": {"a": {}}})
        ));
    }
}
