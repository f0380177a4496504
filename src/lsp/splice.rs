//! Bodies the server serialises itself, carried through the framework as a token.
//!
//! tower-lsp-server turns every result and every notification it sends into
//! a `serde_json::Value` before writing it: a tree of maps, an allocation a
//! field, built, written and freed. For the references of a character across
//! a novel (about 5,000 locations) that was most of the answer's time, and a
//! tenth of a typed sentence's for the diagnostics it publishes. So the
//! server serialises such a body itself, straight from its own data, holds
//! it here, and hands the framework a token in its place: a notification's
//! `params` ([`Splices::params`]), or a response's placeholder: one location
//! ([`Splices::location`]), or a pulled diagnostic report
//! ([`Splices::document_report`], [`Splices::workspace_report`]). The output pump
//! ([`super::framing::pump_output`]) finds the token in the small frame the
//! framework writes and puts the body in its place. Order, ids,
//! cancellation and back-pressure stay the framework's: a body is written
//! exactly where the framework writes its token.
//!
//! Tokens carry a random number drawn once a process, so no text a client
//! sends (a document, a path) can pass for one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::sync::Semaphore;
use tower_lsp_server::ls_types as lsp;

/// The largest frame that can carry a token: the framework's frame around
/// one is a hundred-odd bytes, so larger frames are not searched.
const CARRIER_MAX: usize = 512;

/// How long a body waits for its token. A body whose request was cancelled
/// after it was held never meets its token: it is dropped after this, at
/// the next body held.
const HELD_FOR: Duration = Duration::from_secs(120);

/// The members of a frame that may carry a token.
const CARRIERS: [&str; 2] = ["params", "result"];

/// How many notifications' bodies may wait for the output at once. The
/// framework queues whatever it is given (each send has a slot of its own),
/// so a pass over the whole manuscript would hold every file's diagnostics
/// at once; past this many, the next waits until one has gone out.
const IN_FLIGHT: usize = 4;

/// How long a notification waits for room before it is held all the same.
/// A notification the framework drops (one sent before the client is
/// initialised) never frees its room: this keeps such a loss from stopping
/// every later one, until the lost body expires and gives its room back.
const ROOM_WAIT: Duration = Duration::from_secs(1);

/// The bodies waiting for their tokens to reach the output.
pub struct Splices {
    /// Every token starts with it: the scheme and this process's number.
    prefix: String,
    next: AtomicU64,
    held: Mutex<HashMap<u64, Held>>,
    /// Room for notifications' bodies (see [`IN_FLIGHT`]).
    room: Arc<Semaphore>,
}

struct Held {
    body: Vec<u8>,
    since: Instant,
    /// Whether it took room, given back when it goes out or expires.
    took_room: bool,
}

/// A message on its way to the client: `head`, `body` and `tail` one after
/// the other. A spliced one is the framework's members, the held body and
/// a closing brace, so the body (the references' 800 KB) is written from
/// where it was made, never copied into a frame.
pub struct Outgoing {
    head: Vec<u8>,
    body: Vec<u8>,
    tail: &'static [u8],
}

impl Outgoing {
    /// A message as it is.
    pub fn whole(body: Vec<u8>) -> Outgoing {
        Outgoing {
            head: Vec::new(),
            body,
            tail: b"",
        }
    }

    /// Its length in bytes, the frame's `Content-Length`.
    pub fn content_length(&self) -> usize {
        self.head.len() + self.body.len() + self.tail.len()
    }

    /// Its parts, in order.
    pub fn parts(&self) -> [&[u8]; 3] {
        [&self.head, &self.body, self.tail]
    }

    /// The message in one piece.
    #[cfg(test)]
    pub fn joined(&self) -> Vec<u8> {
        let mut joined = Vec::with_capacity(self.content_length());
        for part in self.parts() {
            joined.extend_from_slice(part);
        }
        joined
    }
}

/// The notification `N` with its `params` held (see [`Splices::params`]).
pub struct SplicedNotification<N>(std::marker::PhantomData<N>);

impl<N: lsp::notification::Notification> lsp::notification::Notification
    for SplicedNotification<N>
{
    type Params = String;
    const METHOD: &'static str = N::METHOD;
}

impl Default for Splices {
    fn default() -> Splices {
        let number = getrandom::u64().unwrap_or_else(|_| {
            // No randomness from the system: the process and the time still
            // make a number a client cannot know in advance.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| since.as_nanos() as u64);
            nanos ^ (u64::from(std::process::id()) << 32)
        });
        Splices {
            prefix: format!("control-room-splice:{number:016x}-"),
            next: AtomicU64::new(0),
            held: Mutex::new(HashMap::new()),
            room: Arc::new(Semaphore::new(IN_FLIGHT)),
        }
    }
}

impl Splices {
    /// Holds the body `make` writes (a JSON value) and returns the token that
    /// stands for it as a notification's `params`: send it as
    /// [`SplicedNotification<N>`]'s params. Waits first while
    /// [`IN_FLIGHT`] notifications wait for the output (at most
    /// [`ROOM_WAIT`]), so a body is made only when there is room for it.
    pub async fn params(&self, make: impl FnOnce() -> Vec<u8>) -> String {
        let room = tokio::time::timeout(ROOM_WAIT, self.room.clone().acquire_owned()).await;
        let took_room = match room {
            Ok(Ok(permit)) => {
                permit.forget();
                true
            }
            _ => false,
        };
        self.hold_at(make(), Instant::now(), took_room)
    }

    /// Holds `body` (a JSON value) and returns the one location that stands
    /// for it in a response whose result is a list of locations.
    pub fn location(&self, body: Vec<u8>) -> lsp::Location {
        let token = self.hold(body);
        lsp::Location {
            uri: token.parse().expect("a token is a URI"),
            range: lsp::Range::default(),
        }
    }

    /// Holds `body` (a full document diagnostic report) and returns the
    /// report that stands for it: a full report whose result id is the token.
    pub fn document_report(&self, body: Vec<u8>) -> lsp::DocumentDiagnosticReportResult {
        let token = self.hold(body);
        lsp::DocumentDiagnosticReportResult::Report(lsp::DocumentDiagnosticReport::Full(
            lsp::RelatedFullDocumentDiagnosticReport {
                related_documents: None,
                full_document_diagnostic_report: lsp::FullDocumentDiagnosticReport {
                    result_id: Some(token),
                    items: Vec::new(),
                },
            },
        ))
    }

    /// Holds `body` (a workspace diagnostic report) and returns the report
    /// that stands for it: one document's, whose URI is the token.
    pub fn workspace_report(&self, body: Vec<u8>) -> lsp::WorkspaceDiagnosticReportResult {
        let token = self.hold(body);
        lsp::WorkspaceDiagnosticReportResult::Report(lsp::WorkspaceDiagnosticReport {
            items: vec![lsp::WorkspaceDocumentDiagnosticReport::Full(
                lsp::WorkspaceFullDocumentDiagnosticReport {
                    uri: token.parse().expect("a token is a URI"),
                    version: None,
                    full_document_diagnostic_report: lsp::FullDocumentDiagnosticReport::default(),
                },
            )],
        })
    }

    fn hold(&self, body: Vec<u8>) -> String {
        self.hold_at(body, Instant::now(), false)
    }

    fn hold_at(&self, body: Vec<u8>, now: Instant, took_room: bool) -> String {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let mut held = self
            .held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        held.retain(|_, held| {
            let keep = now.duration_since(held.since) < HELD_FOR;
            if !keep && held.took_room {
                self.room.add_permits(1);
            }
            keep
        });
        let entry = Held {
            body,
            since: now,
            took_room,
        };
        held.insert(number, entry);
        format!("{}{number}", self.prefix)
    }

    /// How many bodies wait for their tokens.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.held.lock().map_or(0, |held| held.len())
    }

    /// The frame body the client is sent for `body`, a frame the framework
    /// wrote: with its held body in place of the member that carries a
    /// token, or as it is. A token whose body is gone (held too long) is
    /// written as `null`. The held body is not copied: it goes out between
    /// the members written before it and the brace after it.
    pub fn splice(&self, body: Vec<u8>) -> Outgoing {
        if body.len() > CARRIER_MAX || memchr::memmem::find(&body, self.prefix.as_bytes()).is_none()
        {
            return Outgoing::whole(body);
        }
        let Ok(mut message) = serde_json::from_slice::<Map<String, Value>>(&body) else {
            return Outgoing::whole(body);
        };
        let Some((member, number)) = CARRIERS.iter().find_map(|&member| {
            let number = self.carried(message.get(member)?)?;
            Some((member, number))
        }) else {
            return Outgoing::whole(body);
        };
        message.remove(member);
        let held = self
            .held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(&number);
        let value = match held {
            Some(held) => {
                if held.took_room {
                    self.room.add_permits(1);
                }
                held.body
            }
            None => b"null".to_vec(),
        };
        let mut head = Vec::with_capacity(body.len());
        head.push(b'{');
        for (key, field) in &message {
            serde_json::to_writer(&mut head, key).expect("a string serialises");
            head.push(b':');
            serde_json::to_writer(&mut head, field).expect("a value serialises");
            head.push(b',');
        }
        serde_json::to_writer(&mut head, member).expect("a string serialises");
        head.push(b':');
        Outgoing {
            head,
            body: value,
            tail: b"}",
        }
    }

    /// The URI of the one item of `items`, if there is one alone.
    fn only_uri(items: &[Value]) -> Option<&str> {
        match items {
            [only] => only.get("uri")?.as_str(),
            _ => None,
        }
    }

    /// The number of the token `value` carries: the token itself, a list of
    /// one location whose URI is the token, a document report whose result
    /// id is the token, or a workspace report of one document whose URI is.
    fn carried(&self, value: &Value) -> Option<u64> {
        let token = match value {
            Value::String(token) => token,
            Value::Array(items) => Self::only_uri(items)?,
            Value::Object(report) => match report.get("resultId") {
                Some(id) => id.as_str()?,
                None => Self::only_uri(report.get("items")?.as_array()?)?,
            },
            _ => return None,
        };
        token.strip_prefix(&self.prefix)?.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The frame the framework writes for `message`, as its codec does.
    fn written(message: &Value) -> Vec<u8> {
        serde_json::to_vec(message).unwrap()
    }

    #[test]
    fn a_held_body_takes_the_place_of_the_params_that_carry_its_token() {
        let splices = Splices::default();
        let body = br#"{"uri":"file:///a.md","diagnostics":[]}"#.to_vec();
        let token = splices.hold(body);
        let frame = written(&json!({
            "jsonrpc": "2.0",
            "method": "textDocument/publishDiagnostics",
            "params": token,
        }));
        let spliced: Value = serde_json::from_slice(&splices.splice(frame).joined()).unwrap();
        assert_eq!(
            spliced,
            json!({
                "jsonrpc": "2.0",
                "method": "textDocument/publishDiagnostics",
                "params": {"uri": "file:///a.md", "diagnostics": []},
            })
        );
        assert_eq!(splices.waiting(), 0, "a body is written once");
    }

    #[test]
    fn a_held_body_takes_the_place_of_the_result_its_placeholder_location_stands_for() {
        let splices = Splices::default();
        let answer = json!([{"uri": "file:///b.md", "range": {
            "start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 6}}}]);
        let location = splices.location(serde_json::to_vec(&answer).unwrap());
        let frame = written(&json!({"jsonrpc": "2.0", "result": [location], "id": 7}));
        let spliced: Value = serde_json::from_slice(&splices.splice(frame).joined()).unwrap();
        assert_eq!(
            spliced,
            json!({"jsonrpc": "2.0", "result": answer, "id": 7})
        );
    }

    /// Pulled diagnostics: the placeholder reports, as the framework writes
    /// them, give way to the held ones.
    #[test]
    fn held_reports_take_the_place_of_the_pulled_reports_their_placeholders_stand_for() {
        let splices = Splices::default();
        let document = json!({"kind": "full", "items": [{"range": {
            "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 4}},
            "message": "m"}]});
        let placeholder = splices.document_report(serde_json::to_vec(&document).unwrap());
        let frame = written(&json!({"jsonrpc": "2.0", "result": placeholder, "id": 8}));
        let spliced: Value = serde_json::from_slice(&splices.splice(frame).joined()).unwrap();
        assert_eq!(
            spliced,
            json!({"jsonrpc": "2.0", "result": document, "id": 8})
        );
        let workspace = json!({"items": [
            {"kind": "full", "uri": "file:///a.md", "version": 3, "items": []},
            {"kind": "full", "uri": "file:///b.md", "version": null, "items": []},
        ]});
        let placeholder = splices.workspace_report(serde_json::to_vec(&workspace).unwrap());
        let frame = written(&json!({"jsonrpc": "2.0", "result": placeholder, "id": 9}));
        let spliced: Value = serde_json::from_slice(&splices.splice(frame).joined()).unwrap();
        assert_eq!(
            spliced,
            json!({"jsonrpc": "2.0", "result": workspace, "id": 9})
        );
        assert_eq!(splices.waiting(), 0);
    }

    #[test]
    fn frames_without_a_token_of_this_process_pass_unchanged() {
        let splices = Splices::default();
        let other = Splices::default();
        let foreign = other.hold(b"{}".to_vec());
        for frame in [
            written(&json!({"jsonrpc": "2.0", "result": null, "id": 1})),
            written(&json!({"jsonrpc": "2.0", "method": "m", "params": foreign})),
            written(&json!({"jsonrpc": "2.0", "result": "control-room-splice:", "id": 2})),
            b"not json at all".to_vec(),
        ] {
            assert_eq!(splices.splice(frame.clone()).joined(), frame);
        }
    }

    /// A token in a document's text (a client may send anything) is not
    /// where a token is carried: the frame is left as it is.
    #[test]
    fn a_token_elsewhere_in_a_frame_is_left_alone() {
        let splices = Splices::default();
        let token = splices.hold(b"[1]".to_vec());
        let frame = written(&json!({"jsonrpc": "2.0", "result": {"text": token}, "id": 3}));
        assert_eq!(splices.splice(frame.clone()).joined(), frame);
        assert_eq!(splices.waiting(), 1);
    }

    #[test]
    fn a_token_whose_body_is_gone_is_written_as_null() {
        let splices = Splices::default();
        let token = format!("{}99", splices.prefix);
        let frame = written(&json!({"jsonrpc": "2.0", "result": [{"uri": token}], "id": 4}));
        let spliced: Value = serde_json::from_slice(&splices.splice(frame).joined()).unwrap();
        assert_eq!(spliced, json!({"jsonrpc": "2.0", "result": null, "id": 4}));
    }

    #[test]
    fn a_body_held_too_long_is_dropped_when_the_next_is_held() {
        let splices = Splices::default();
        let first = Instant::now();
        splices.hold_at(b"1".to_vec(), first, true);
        splices.hold_at(b"2".to_vec(), first + HELD_FOR / 2, false);
        assert_eq!(splices.waiting(), 2);
        splices.hold_at(b"3".to_vec(), first + HELD_FOR, false);
        assert_eq!(
            splices.waiting(),
            2,
            "the first is dropped, the second kept"
        );
        assert_eq!(
            splices.room.available_permits(),
            IN_FLIGHT + 1,
            "the dropped one gives back the room it took"
        );
    }

    /// A pass over the whole manuscript publishes hundreds of files: only
    /// [`IN_FLIGHT`] bodies wait for the output at once, the next one is
    /// made when one has gone out.
    #[test]
    fn a_notification_waits_for_room_while_others_wait_for_the_output() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let splices = Arc::new(Splices::default());
            let mut tokens = Vec::new();
            for n in 0..IN_FLIGHT {
                tokens.push(splices.params(|| n.to_string().into_bytes()).await);
            }
            let made = Arc::new(AtomicU64::new(0));
            let next = tokio::spawn({
                let (splices, made) = (splices.clone(), made.clone());
                async move {
                    splices
                        .params(|| {
                            made.fetch_add(1, Ordering::SeqCst);
                            b"next".to_vec()
                        })
                        .await
                }
            });
            tokio::time::sleep(ROOM_WAIT / 4).await;
            assert_eq!(made.load(Ordering::SeqCst), 0, "no body made without room");
            let frame = written(&json!({"jsonrpc": "2.0", "method": "m", "params": tokens[0]}));
            let spliced: Value = serde_json::from_slice(&splices.splice(frame).joined()).unwrap();
            assert_eq!(spliced["params"], json!(0));
            let token = tokio::time::timeout(ROOM_WAIT / 2, next).await;
            assert!(token.is_ok(), "room made when one went out");
            assert_eq!(made.load(Ordering::SeqCst), 1);
        });
    }

    /// A notification the framework drops never frees its room: the next
    /// ones wait at most [`ROOM_WAIT`] for it, then go on.
    #[test]
    fn notifications_go_on_when_the_room_taken_is_never_given_back() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let splices = Splices::default();
            for n in 0..IN_FLIGHT {
                splices.params(|| n.to_string().into_bytes()).await;
            }
            let waited = Instant::now();
            splices.params(|| b"late".to_vec()).await;
            assert!(waited.elapsed() >= ROOM_WAIT);
            assert_eq!(splices.waiting(), IN_FLIGHT + 1);
        });
    }
}
