//! The Chief's tool calls in a conference's first phase: the strict envelope
//! `{"tool": …, "args": {…}, "nonce": …}` and the tool policy around it
//! (evidence-rules.md, "Tool-call envelope").

use serde_json::{Map, Value};

use crate::llm::protocol;
use crate::tools::TOOLS;

/// At most this many steps in the Chief's turn, rejected calls included.
pub const MAX_STEPS: usize = 6;
/// Bytes of tool output one step may inject, in a conference.
pub const STEP_BYTES: usize = 12_000;
/// Bytes of tool output the whole turn may inject, in a conference.
pub const TURN_BYTES: usize = 48_000;

/// What the server lets the Chief do in phase 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// The tools the Chief may call (enforced here, not by the prompt).
    pub allowed_tools: Vec<String>,
    /// The first step must be a tool call.
    pub require_tool_first: bool,
    pub max_steps: usize,
    pub step_bytes: usize,
    pub turn_bytes: usize,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            allowed_tools: TOOLS.iter().map(|tool| (*tool).to_owned()).collect(),
            require_tool_first: true,
            max_steps: MAX_STEPS,
            step_bytes: STEP_BYTES,
            turn_bytes: TURN_BYTES,
        }
    }
}

/// A tool the policy was asked to allow that does not exist; the message
/// lists the tools that do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool `{0}`; the tools are {tools}", tools = TOOLS.join(", "))]
pub struct UnknownTool(pub String);

impl Policy {
    /// Keeps only known tools; an unknown name is an error naming the tools.
    pub fn with_allowed(mut self, tools: &[String]) -> Result<Policy, UnknownTool> {
        if let Some(unknown) = tools.iter().find(|tool| !TOOLS.contains(&tool.as_str())) {
            return Err(UnknownTool(unknown.clone()));
        }
        if !tools.is_empty() {
            self.allowed_tools = tools.to_vec();
        }
        Ok(self)
    }

    /// The rules as the Chief's prompt states them.
    pub fn describe(&self) -> String {
        let mut lines = vec![
            format!("- Allowed tools: {}.", self.allowed_tools.join(", ")),
            format!(
                "- At most {} steps; a rejected call counts as one.",
                self.max_steps
            ),
            format!(
                "- Tool output is cut to {} bytes per step and {} for the whole turn.",
                self.step_bytes, self.turn_bytes
            ),
        ];
        if self.require_tool_first {
            lines.push("- Your first reply must be a tool call.".to_owned());
        }
        lines.join("\n")
    }
}

/// What one reply of the Chief asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// A well-formed call of an allowed tool with the right nonce; its
    /// arguments are still to be checked by the tool itself.
    Call {
        tool: String,
        args: Map<String, Value>,
    },
    /// The Chief has gathered enough (`{"done": …}`, or a reply with no call).
    Done { note: String },
    Rejected {
        /// The tool named, when one was.
        tool: Option<String>,
        reason: String,
    },
}

/// Reads one reply of the Chief under `policy`, with the turn's `nonce`.
pub fn read(reply: &str, nonce: &str, policy: &Policy) -> Request {
    let text = protocol::strip_reasoning(reply);
    let objects = json_objects(&text);
    let calls: Vec<&Map<String, Value>> = objects
        .iter()
        .filter(|object| !(object.len() == 1 && object.contains_key("done")))
        .collect();
    let rejected = |tool: Option<&str>, reason: String| Request::Rejected {
        tool: tool.map(str::to_owned),
        reason,
    };
    match calls.as_slice() {
        [] => {
            if let Some(done) = objects.iter().find_map(|object| object.get("done")) {
                let note = done
                    .as_str()
                    .map_or_else(|| done.to_string(), str::to_owned);
                return Request::Done { note };
            }
            if text.contains("\"tool\"") {
                return rejected(None, "wrong shape: the call is not valid JSON".to_owned());
            }
            Request::Done {
                note: text.trim().to_owned(),
            }
        }
        [call] => {
            let tool = call.get("tool").and_then(Value::as_str);
            let mut keys: Vec<&str> = call.keys().map(String::as_str).collect();
            keys.sort_unstable();
            if keys != ["args", "nonce", "tool"] {
                return rejected(
                    tool,
                    format!(
                        "wrong shape: a call has exactly the keys tool, args and nonce (this one has {})",
                        keys.join(", ")
                    ),
                );
            }
            let (Some(tool), Some(Value::Object(args)), Some(given)) = (
                tool,
                call.get("args"),
                call.get("nonce").and_then(Value::as_str),
            ) else {
                return rejected(
                    call.get("tool").and_then(Value::as_str),
                    "wrong shape: `tool` and `nonce` are strings and `args` an object".to_owned(),
                );
            };
            if given != nonce {
                return rejected(
                    Some(tool),
                    "wrong nonce: use the nonce this turn was given".to_owned(),
                );
            }
            if !TOOLS.contains(&tool) {
                return rejected(
                    Some(tool),
                    format!("unknown tool `{tool}`; the tools are {}", TOOLS.join(", ")),
                );
            }
            if !policy.allowed_tools.iter().any(|allowed| allowed == tool) {
                return rejected(
                    Some(tool),
                    format!(
                        "tool `{tool}` is not allowed in this round (allowed: {})",
                        policy.allowed_tools.join(", ")
                    ),
                );
            }
            Request::Call {
                tool: tool.to_owned(),
                args: args.clone(),
            }
        }
        more => rejected(
            None,
            format!(
                "more than one call ({}); make one call per reply",
                more.len()
            ),
        ),
    }
}

/// The JSON objects in `text`, outermost only, in order.
fn json_objects(text: &str) -> Vec<Map<String, Value>> {
    let mut objects = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find('{') {
        let start = from + found;
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(Value::Object(object))) => {
                objects.push(object);
                from = start + stream.byte_offset();
            }
            _ => from = start + 1,
        }
    }
    objects
}

/// `text` cut to at most `bytes` at a character boundary: a strict prefix,
/// so what quotes it can be found again.
pub fn cut(text: &str, bytes: usize) -> &str {
    if text.len() <= bytes {
        return text;
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        Policy::default()
            .with_allowed(&["file_locator".into(), "canon_checker".into()])
            .unwrap()
    }

    fn reason(request: Request) -> String {
        match request {
            Request::Rejected { reason, .. } => reason,
            other => panic!("not rejected: {other:?}"),
        }
    }

    #[test]
    fn a_call_needs_its_shape_nonce_and_an_allowed_tool() {
        let policy = policy();
        let call =
            r#"{"tool": "file_locator", "args": {"search_criteria": "gate"}, "nonce": "n1"}"#;
        assert!(
            matches!(read(call, "n1", &policy), Request::Call { ref tool, .. } if tool == "file_locator")
        );
        assert!(matches!(
            read(
                &format!("<thinking>which?</thinking>\n```json\n{call}\n```"),
                "n1",
                &policy
            ),
            Request::Call { .. }
        ));
        assert!(reason(read(call, "n2", &policy)).starts_with("wrong nonce"));
        assert!(
            reason(read(&call.replace("file_locator", "shell"), "n1", &policy))
                .starts_with("unknown tool")
        );
        assert!(
            reason(read(
                &call.replace("file_locator", "prose_analyzer"),
                "n1",
                &policy
            ))
            .contains("not allowed")
        );
        assert!(
            reason(read(&format!("{call}\n{call}"), "n1", &policy))
                .starts_with("more than one call")
        );
        assert!(
            reason(read(
                r#"{"tool": "file_locator", "args": {}}"#,
                "n1",
                &policy
            ))
            .starts_with("wrong shape")
        );
        assert!(
            reason(read(
                r#"{"tool": "file_locator", "args": [], "nonce": "n1"}"#,
                "n1",
                &policy
            ))
            .starts_with("wrong shape")
        );
        assert!(
            reason(read(r#"{"tool": "file_locator", "args": {"#, "n1", &policy))
                .starts_with("wrong shape")
        );
        assert_eq!(
            read(r#"{"done": "two scenes read"}"#, "n1", &policy),
            Request::Done {
                note: "two scenes read".into()
            }
        );
        assert_eq!(
            read("Enough.", "n1", &policy),
            Request::Done {
                note: "Enough.".into()
            }
        );
        assert!(Policy::default().with_allowed(&["rm".into()]).is_err());
    }

    #[test]
    fn every_tool_is_described_for_the_chief() {
        for tool in TOOLS {
            assert_ne!(crate::tools::describe(tool), "an unknown tool.", "{tool}");
        }
    }

    #[test]
    fn cutting_keeps_a_prefix_at_a_character_boundary() {
        assert_eq!(cut("grey—eyes", 6), "grey");
        assert_eq!(cut("grey", 10), "grey");
    }
}
