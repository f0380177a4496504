//! One POST to a model server, with the retry policy: connect errors, 429
//! (honouring `Retry-After`) and 5xx are retried up to `max_retries` times
//! with exponential backoff and jitter; a timeout or any other status fails
//! at once. A streamed reply (server-sent events) is read as it comes, its
//! timeout the longest wait for the next chunk rather than for the whole. Every error names the server (without credentials) and says what
//! to do; none repeats a key (messages pass through [`super::redact`]).
//!
//! Dropping the future drops the connection: that is how a run is cancelled.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use super::{Secret, redact, sse};
use crate::llm::model::ModelError;

/// First backoff; doubled on every retry, with jitter, up to [`MAX_BACKOFF`].
const BASE_BACKOFF: Duration = Duration::from_millis(400);
const MAX_BACKOFF: Duration = Duration::from_secs(20);
/// A `Retry-After` longer than this is reported instead of waited out.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

pub struct Post<'a> {
    pub http: &'a reqwest::Client,
    pub url: String,
    /// The server as shown to the writer (no credentials, no path).
    pub shown_url: &'a str,
    pub headers: Vec<(&'static str, String)>,
    pub body: &'a Value,
    pub timeout: Duration,
    pub max_retries: u32,
    /// What to add to "no model server at …".
    pub unreachable_hint: &'a str,
    pub secret: Option<&'a Secret>,
    /// Reads a streamed reply's events, when the request asks for a stream.
    pub stream: Option<&'a dyn StreamHandler>,
}

/// What reads a streamed reply: the provider's events, into its text.
pub trait StreamHandler: Sync {
    /// An attempt starts: what an earlier one streamed is forgotten.
    fn restart(&self);
    /// How the stream's events are framed (server-sent events, or one JSON
    /// object a line).
    fn framing(&self) -> sse::Framing {
        sse::Framing::Events
    }
    /// One event of the stream; `Ok(true)` when it ends the reply, an error
    /// when it cannot be read or the server reports one inside the stream.
    fn event(&self, event: &sse::Event) -> Result<bool, sse::StreamError>;
}

/// Why a POST got no reply to use.
#[derive(Debug)]
pub enum PostError {
    /// The server refused the request's `response_format`: asking again
    /// the same way will never work, asking another way may.
    FormatRefused(ModelError),
    Failed(ModelError),
}

impl From<PostError> for ModelError {
    fn from(error: PostError) -> ModelError {
        match error {
            PostError::FormatRefused(error) | PostError::Failed(error) => error,
        }
    }
}

impl Post<'_> {
    /// The reply's JSON, or `None` when it was streamed to the handler.
    pub async fn send(&self) -> Result<Option<Value>, PostError> {
        let mut attempt = 0;
        loop {
            let wait = match self.once().await {
                Ok(value) => return Ok(value),
                Err(Failure::Final(message)) => {
                    return Err(PostError::Failed(self.error(message)));
                }
                Err(Failure::FormatRefused(message)) => {
                    return Err(PostError::FormatRefused(self.error(message)));
                }
                Err(Failure::Retry { message, after }) => {
                    if attempt >= self.max_retries {
                        let tries = attempt + 1;
                        return Err(PostError::Failed(self.error(format!(
                            "{message} (after {tries} attempt{})",
                            if tries == 1 { "" } else { "s" }
                        ))));
                    }
                    after.unwrap_or_else(|| backoff(attempt))
                }
            };
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    fn error(&self, message: String) -> ModelError {
        let secrets: Vec<&Secret> = self.secret.into_iter().collect();
        ModelError::Failed(redact(&message, &secrets).into_owned())
    }

    /// Sends the request and waits for the response's head.
    async fn dispatch(&self) -> Result<reqwest::Response, Failure> {
        let mut request = self.http.post(&self.url).json(self.body);
        if self.stream.is_none() {
            request = request.timeout(self.timeout);
        }
        for (name, value) in &self.headers {
            request = request.header(*name, value);
        }
        let shown = self.shown_url;
        let sent = match self.stream {
            None => request.send().await,
            Some(_) => match tokio::time::timeout(self.timeout, request.send()).await {
                Ok(sent) => sent,
                Err(_) => {
                    return Err(Failure::Final(format!(
                        "the model server at {shown} did not answer within {} s (timeout_s)",
                        self.timeout.as_secs_f64()
                    )));
                }
            },
        };
        match sent {
            Ok(response) => Ok(response),
            Err(error) if error.is_timeout() => Err(Failure::Final(format!(
                "the model server at {shown} did not answer within {} s (timeout_s)",
                self.timeout.as_secs_f64()
            ))),
            Err(error) if error.is_connect() => Err(Failure::Retry {
                message: format!("no model server at {shown}: {}", self.unreachable_hint),
                after: None,
            }),
            Err(error) => Err(Failure::Retry {
                message: format!(
                    "the connection to the model server at {shown} failed: {}",
                    without_url(&error)
                ),
                after: None,
            }),
        }
    }

    async fn once(&self) -> Result<Option<Value>, Failure> {
        let shown = self.shown_url;
        let response = self.dispatch().await?;
        let status = response.status();
        let streamed = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| {
                value.starts_with("text/event-stream") || value.starts_with("application/x-ndjson")
            });
        if let Some(handler) = self.stream
            && status.is_success()
            && streamed
        {
            return self.read_stream(response, handler).await.map(|()| None);
        }
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(parse_retry_after);
        let body = match read_capped(response, MAX_REPLY_BYTES).await {
            Ok(Some(body)) => body,
            Ok(None) => {
                return Err(Failure::Final(format!(
                    "the model server at {shown} sent a reply of more than {} MiB; it was not kept (a step's reply is a few kilobytes: is max_tokens set?)",
                    MAX_REPLY_BYTES / (1024 * 1024)
                )));
            }
            Err(error) if error.is_timeout() => {
                return Err(Failure::Final(format!(
                    "the model server at {shown} did not finish its reply within {} s (timeout_s)",
                    self.timeout.as_secs_f64()
                )));
            }
            Err(error) => {
                return Err(Failure::Retry {
                    message: format!(
                        "the reply from the model server at {shown} broke off: {}",
                        without_url(&error)
                    ),
                    after: None,
                });
            }
        };
        if status.is_success() {
            return serde_json::from_str(&body).map(Some).map_err(|error| {
                Failure::Final(format!(
                    "the model server at {shown} answered with something that is not JSON ({error}): {}",
                    excerpt(&body)
                ))
            });
        }
        let detail = error_detail(&body);
        if self.body.get("response_format").is_some() && refuses_format(status, &body) {
            return Err(Failure::FormatRefused(format!(
                "the model server at {shown} refused the request's response_format (HTTP {}){detail}",
                status.as_u16()
            )));
        }
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            if let Some(after) = retry_after
                && after > MAX_RETRY_AFTER
            {
                return Err(Failure::Final(format!(
                    "the model server at {shown} is rate-limiting (HTTP {}) and asks to wait {} s; try again later{detail}",
                    status.as_u16(),
                    after.as_secs()
                )));
            }
            return Err(Failure::Retry {
                message: format!(
                    "the model server at {shown} answered HTTP {}{detail}",
                    status.as_u16()
                ),
                after: retry_after,
            });
        }
        let hint = match status.as_u16() {
            401 | 403 => "; check the API key in the variable named by [llm] api_key_env",
            404 => "; check [llm] base_url and model",
            _ => "",
        };
        Err(Failure::Final(format!(
            "the model server at {shown} refused the request: HTTP {}{detail}{hint}",
            status.as_u16()
        )))
    }
}

impl Post<'_> {
    /// Reads a streamed reply into `handler`, waiting at most the timeout
    /// for each chunk.
    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        handler: &dyn StreamHandler,
    ) -> Result<(), Failure> {
        let shown = self.shown_url;
        handler.restart();
        let mut decoder = sse::Decoder::new(handler.framing());
        let mut read = 0;
        loop {
            let chunk = match tokio::time::timeout(self.timeout, response.chunk()).await {
                Err(_) => {
                    return Err(Failure::Final(format!(
                        "the model server at {shown} sent nothing more of its reply for {} s (timeout_s)",
                        self.timeout.as_secs_f64()
                    )));
                }
                Ok(Err(error)) => {
                    return Err(Failure::Retry {
                        message: format!(
                            "the reply from the model server at {shown} broke off: {}",
                            without_url(&error)
                        ),
                        after: None,
                    });
                }
                Ok(Ok(None)) => {
                    if let Some(event) = decoder.finish() {
                        handler.event(&event).map_err(|problem| {
                            Failure::Final(format!(
                                "the model server at {shown} reported in its stream: {problem}"
                            ))
                        })?;
                    }
                    return Ok(());
                }
                Ok(Ok(Some(chunk))) => chunk,
            };
            read += chunk.len();
            if read > MAX_REPLY_BYTES {
                return Err(Failure::Final(format!(
                    "the model server at {shown} sent a reply of more than {} MiB; it was not kept (a step's reply is a few kilobytes: is max_tokens set?)",
                    MAX_REPLY_BYTES / (1024 * 1024)
                )));
            }
            let events = decoder.push(&chunk).map_err(|problem| {
                Failure::Final(format!(
                    "the model server at {shown} streamed badly: {problem}"
                ))
            })?;
            for event in events {
                let ended = handler.event(&event).map_err(|problem| {
                    Failure::Final(format!(
                        "the model server at {shown} reported in its stream: {problem}"
                    ))
                })?;
                if ended {
                    return Ok(());
                }
            }
        }
    }
}

enum Failure {
    Final(String),
    FormatRefused(String),
    Retry {
        message: String,
        after: Option<Duration>,
    },
}

/// Whether an error answer is the server refusing `response_format` (a
/// validation error that names it), which no retry will change: llama-cpp-
/// python answers 500 for a `json_schema` it does not take, others 400 or 422.
fn refuses_format(status: StatusCode, body: &str) -> bool {
    (status.is_client_error() && status != StatusCode::TOO_MANY_REQUESTS
        || status.is_server_error())
        && body.to_ascii_lowercase().contains("response_format")
}

/// `BASE_BACKOFF × 2^attempt`, scaled by a random factor in [0.5, 1).
fn backoff(attempt: u32) -> Duration {
    let full = BASE_BACKOFF
        .saturating_mul(1 << attempt.min(16))
        .min(MAX_BACKOFF);
    let random = getrandom::u64().unwrap_or(0);
    let factor = 0.5 + (random % 1000) as f64 / 2000.0;
    full.mul_f64(factor)
}

/// `Retry-After`: seconds, or an HTTP date.
fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = jiff::fmt::rfc2822::parse(value).ok()?;
    let wait = date.timestamp().duration_since(jiff::Timestamp::now());
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

/// The largest reply body kept. A step's reply is prose or JSON of a few
/// kilobytes; a model that runs away is stopped here rather than stored.
const MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// The response's body as text, read chunk by chunk; `None` when it runs
/// past `limit` bytes (what was read is dropped, and the connection with it).
async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Option<String>, reqwest::Error> {
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Ok(None);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > limit {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(String::from_utf8_lossy(&body).into_owned()))
}

/// The server's own error message, when its body has one.
fn error_detail(body: &str) -> String {
    let value: Option<Value> = serde_json::from_str(body).ok();
    let message = value.as_ref().and_then(|value| {
        value
            .pointer("/error/message")
            .or_else(|| value.get("error"))
            .or_else(|| value.get("message"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    match message {
        Some(message) => format!(": {}", excerpt(&message)),
        None if body.trim().is_empty() => String::new(),
        None => format!(": {}", excerpt(body)),
    }
}

/// The first 200 characters of a text, on one line.
pub fn excerpt(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// reqwest's error text without the URL it carries (which may hold a query
/// string or credentials).
fn without_url(error: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(error);
    let mut deepest = None;
    while let Some(error) = source {
        deepest = Some(error.to_string());
        source = error.source();
    }
    deepest.unwrap_or_else(|| "connection error".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn backoff_grows_with_jitter_and_a_ceiling() {
        for attempt in 0..20 {
            let full = BASE_BACKOFF
                .saturating_mul(1 << attempt.min(16))
                .min(MAX_BACKOFF);
            let wait = backoff(attempt);
            assert!(wait >= full / 2 && wait <= full, "{attempt}: {wait:?}");
        }
    }

    #[test]
    fn server_messages_are_kept_short() {
        assert_eq!(
            error_detail(r#"{"error": {"message": "model not found"}}"#),
            ": model not found"
        );
        assert_eq!(error_detail(""), "");
        assert_eq!(excerpt(&"word ".repeat(100)).chars().count(), 201);
    }
}
