//! Reply contracts and the path guard (prompt-hardening v0.1, PH-3).
//!
//! A prose step's reply is read through the XML protocol ([`crate::llm::protocol`]):
//! its artifact is the `<content_update>` text or the `<message>` (or the
//! whole reply), never the `<thinking>`. A JSON step's reply, reasoning
//! removed and fences unwrapped, must be one JSON object that follows the
//! prompt type's schema. Either way every file path the reply names must be
//! inside the workspace and among the step's expected artifacts.
//!
//! A reply that breaks its contract is a [`Violation::Contract`] (the runner
//! asks again, quoting the error, at most twice); a path outside the
//! workspace or not expected is a [`Violation::Path`], which stops the step
//! at once (STOP_HOOK) with nothing written. Text in a path field that is
//! not shaped like a path at all (a small model's "one thing that works" in
//! a finding's `file`) names no file: it breaks the contract instead.

use std::collections::BTreeSet;
use std::path::{Component, Path};

use serde_json::Value;

use crate::llm::protocol;
use crate::llm::protocol::schema::schema_errors;
use crate::receipts::Check;
use crate::runs::prompts::Output;

/// Keys of a JSON reply whose string values are file paths.
mod prose;
mod receipt;

use prose::talk_not_prose;
pub use prose::{echo_of_prompt, finished, not_an_echo};
pub use receipt::{RUNNER_FIELDS, ReceiptReply};

const PATH_KEYS: &[&str] = &["file", "path", "canon", "target"];

/// Why a reply cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Violation {
    /// The reply breaks its output contract; asking again may help.
    Contract(String),
    /// The reply names a path it must not; the step stops.
    Path(String),
}

impl Violation {
    pub fn message(&self) -> &str {
        match self {
            Violation::Contract(message) | Violation::Path(message) => message,
        }
    }
}

/// A reply that passed its contract.
#[derive(Clone, Debug, PartialEq)]
pub struct Accepted {
    /// The artifact's text: the prose, or the JSON as the model wrote it.
    pub text: String,
    /// What `$ref` sees: the JSON object, or the prose as a string.
    pub value: Value,
    /// The `<message>` of a prose reply that also carried content updates
    /// (what the agent said about its work), for the receipt.
    pub message: Option<String>,
    /// Repairs and skipped parts of the XML protocol, in words.
    pub warnings: Vec<String>,
    /// The reply's `<action>`s (prose replies only).
    pub actions: Vec<crate::llm::protocol::Action>,
}

/// The files a step may name.
#[derive(Clone, Debug, Default)]
pub struct PathGuard {
    expected: BTreeSet<String>,
}

impl PathGuard {
    pub fn new(expected: impl IntoIterator<Item = String>) -> PathGuard {
        PathGuard {
            expected: expected
                .into_iter()
                .filter_map(|path| normalise(&path))
                .collect(),
        }
    }

    pub fn expected(&self) -> impl Iterator<Item = &str> {
        self.expected.iter().map(String::as_str)
    }

    /// `Ok` when `path` is an expected artifact inside the workspace.
    pub fn check(&self, path: &str) -> Result<(), Violation> {
        let shown: String = path.chars().take(200).collect();
        if !path_shaped(path) {
            return Err(Violation::Contract(format!(
                "`{shown}` stands where a file's path goes, but it is not a path: give the workspace path of a file you were given, or leave the field out"
            )));
        }
        let Some(normal) = normalise(path) else {
            return Err(Violation::Path(format!(
                "the reply names `{shown}`, which is outside the workspace"
            )));
        };
        if self.expected.contains(&normal) {
            return Ok(());
        }
        let expected: Vec<&str> = self.expected().collect();
        Err(Violation::Path(format!(
            "the reply names `{shown}`, which is not among the step's expected artifacts ({})",
            if expected.is_empty() {
                "none".to_owned()
            } else {
                expected.join(", ")
            }
        )))
    }
}

/// Whether `text` looks like a file's path: a folder separator, or a file
/// name with an extension, and no line breaks.
fn path_shaped(text: &str) -> bool {
    let text = text.trim();
    let name = text.rsplit(['/', '\\']).next().unwrap_or(text);
    !text.contains('\n')
        && (text.contains(['/', '\\'])
            || name.rsplit_once('.').is_some_and(|(stem, ext)| {
                !stem.is_empty() && !ext.is_empty() && !ext.contains(' ')
            }))
}

/// A workspace-relative path in normal form (`a/b.md`), or `None` when the
/// path is absolute, climbs out of the workspace, or is empty.
pub fn normalise(path: &str) -> Option<String> {
    let path = path.trim();
    if path.is_empty() || path.contains('\0') || path.contains('\\') {
        return None;
    }
    // A Windows drive (`C:`) or a URL scheme is never a workspace path.
    if path
        .split('/')
        .next()
        .is_some_and(|first| first.contains(':'))
    {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("/"))
    }
}

/// The JSON object in a reply: reasoning removed, a code fence unwrapped.
fn json_text(raw: &str) -> String {
    let text = protocol::strip_reasoning(raw);
    let trimmed = text.trim();
    if let Some(rest) = trimmed.strip_prefix("```")
        && let Some(body) = rest.trim_end().strip_suffix("```")
    {
        return body
            .trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .trim()
            .to_owned();
    }
    trimmed.to_owned()
}

/// The JSON value a stored JSON artifact stands for (`None` if it is not).
pub fn stored_json(text: &str) -> Option<Value> {
    serde_json::from_str(&json_text(text)).ok()
}

/// Removes every path field (`file`, `path`, `canon`, `target`) whose text
/// is not shaped like a path, saying which in `dropped`.
fn drop_non_paths(value: &mut Value, dropped: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            map.retain(|key, value| {
                let prose = PATH_KEYS.contains(&key.as_str())
                    && value
                        .as_str()
                        .is_some_and(|text| !text.trim().is_empty() && !path_shaped(text));
                if prose {
                    let shown = crate::text::clip(value.as_str().unwrap_or_default(), 80);
                    dropped.push(format!("`{key}`: “{shown}”"));
                }
                !prose
            });
            map.values_mut()
                .for_each(|value| drop_non_paths(value, dropped));
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| drop_non_paths(item, dropped)),
        _ => {}
    }
}

fn collect_paths<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                if let Value::String(text) = value
                    && PATH_KEYS.contains(&key.as_str())
                    && !text.trim().is_empty()
                {
                    out.push(text);
                } else {
                    collect_paths(value, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_paths(item, out)),
        _ => {}
    }
}

/// Checks a reply against its step's contract; `checks` receives what was
/// checked, passed or not.
pub fn check_reply(
    raw: &str,
    output: Output,
    schema: Option<&(String, Value)>,
    guard: &PathGuard,
    checks: &mut Vec<Check>,
) -> Result<Accepted, Violation> {
    match output {
        // A recipe step that borrows the Foreman's template is read as
        // prose; the desk checks the Foreman's own replies
        // (`foreman::contract`).
        Output::Prose | Output::Foreman => check_prose(raw, guard, checks),
        Output::Json => check_json(raw, schema, guard, checks),
        Output::Receipt => receipt::check_receipt(raw, schema, guard, checks),
    }
}

fn check_paths<'p>(
    paths: impl IntoIterator<Item = &'p str>,
    guard: &PathGuard,
    checks: &mut Vec<Check>,
) -> Result<(), Violation> {
    let mut named = Vec::new();
    for path in paths {
        if let Err(violation) = guard.check(path) {
            checks.push(Check::new("path_guard", false, violation.message()));
            return Err(violation);
        }
        named.push(path.to_owned());
    }
    let detail = if named.is_empty() {
        "names no file".to_owned()
    } else {
        format!("names only expected artifacts: {}", named.join(", "))
    };
    checks.push(Check::new("path_guard", true, detail));
    Ok(())
}

fn check_prose(
    raw: &str,
    guard: &PathGuard,
    checks: &mut Vec<Check>,
) -> Result<Accepted, Violation> {
    let parsed = protocol::parse(raw);
    check_paths(
        parsed
            .paths()
            .into_iter()
            .filter(|path| !path.trim().is_empty()),
        guard,
        checks,
    )?;
    let text = parsed.prose().trim().to_owned();
    if let Some(message) = talk_not_prose(&text) {
        checks.push(Check::new("prose", false, &message));
        return Err(Violation::Contract(message));
    }
    if text.is_empty() {
        let message = "the reply has no prose: put the text inside <content_update target=\"…\">…</content_update> or reply with the prose alone, outside <thinking>".to_owned();
        checks.push(Check::new("xml_protocol", false, &message));
        return Err(Violation::Contract(message));
    }
    let detail = if parsed.warnings.is_empty() {
        "read through the XML protocol".to_owned()
    } else {
        format!("read with repairs: {}", parsed.warnings.join("; "))
    };
    checks.push(Check::new("xml_protocol", true, detail));
    let message = (!parsed.content_updates.is_empty() && !parsed.message.trim().is_empty())
        .then(|| parsed.message.trim().to_owned());
    Ok(Accepted {
        value: Value::String(text.clone()),
        text,
        message,
        warnings: parsed.warnings,
        actions: parsed.actions,
    })
}

/// The one JSON object a JSON reply must be, with its text.
fn json_object(raw: &str, checks: &mut Vec<Check>) -> Result<(String, Value), Violation> {
    let text = json_text(raw);
    let value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) => {
            let begins: String = text.chars().take(120).collect();
            let message = format!(
                "the reply is not valid JSON ({error}); it must be one JSON object and nothing else, but it begins: {begins}"
            );
            checks.push(Check::new("json", false, &message));
            return Err(Violation::Contract(message));
        }
    };
    if !value.is_object() {
        let message =
            "the reply must be one JSON object, not an array or a single value".to_owned();
        checks.push(Check::new("json", false, &message));
        return Err(Violation::Contract(message));
    }
    checks.push(Check::new("json", true, "one JSON object"));
    Ok((text, value))
}

fn check_json(
    raw: &str,
    schema: Option<&(String, Value)>,
    guard: &PathGuard,
    checks: &mut Vec<Check>,
) -> Result<Accepted, Violation> {
    let (mut text, mut value) = json_object(raw, checks)?;
    // Prose where a path goes names no file: the field goes (a finding
    // without `file` is about the run's scene) and the receipt says so.
    let mut dropped = Vec::new();
    drop_non_paths(&mut value, &mut dropped);
    if !dropped.is_empty() {
        checks.push(Check::new(
            "path_fields",
            true,
            format!("left out, for they name no file: {}", dropped.join("; ")),
        ));
        text = serde_json::to_string(&value).unwrap_or(text);
    }
    if let Some((source, schema)) = schema {
        let errors = schema_errors(schema, &value);
        if !errors.is_empty() {
            let message = format!(
                "the reply does not follow the schema {source}: {}",
                errors.join("; ")
            );
            checks.push(Check::new("json_schema", false, &message));
            return Err(Violation::Contract(message));
        }
        checks.push(Check::new("json_schema", true, format!("follows {source}")));
    }
    let mut paths = Vec::new();
    collect_paths(&value, &mut paths);
    check_paths(paths, guard, checks)?;
    Ok(Accepted {
        text,
        value,
        message: None,
        warnings: Vec::new(),
        actions: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_is_compiled_by_its_text_so_a_changed_one_checks_as_changed() {
        let loose = json!({"type": "object"});
        let strict = json!({"type": "object", "required": ["findings"]});
        let reply = json!({"verdict": "holds"});
        for _ in 0..2 {
            assert!(schema_errors(&loose, &reply).is_empty());
            let errors = schema_errors(&strict, &reply);
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(errors[0].contains("findings"), "{errors:?}");
        }
        let broken = json!({"type": "no such type"});
        assert!(schema_errors(&broken, &reply)[0].starts_with("the schema itself is invalid"));
    }

    fn guard() -> PathGuard {
        PathGuard::new([
            "Story/Scenes/SCN-the-gate.md".to_owned(),
            "./Compendium/Characters/CHAR-kael-maren.md".to_owned(),
        ])
    }

    #[test]
    fn paths_are_normalised_and_escapes_refused() {
        assert_eq!(normalise("./a/b/../c.md").as_deref(), Some("a/c.md"));
        for bad in [
            "../../etc/passwd",
            "/etc/passwd",
            "a/../../b",
            "C:/x",
            "a\\b",
            "",
            ".",
        ] {
            assert_eq!(normalise(bad), None, "{bad}");
        }
        let guard = guard();
        assert!(
            guard
                .check("Compendium/Characters/CHAR-kael-maren.md")
                .is_ok()
        );
        let Err(Violation::Path(message)) = guard.check("../../etc/passwd") else {
            panic!("not refused")
        };
        assert_eq!(
            message,
            "the reply names `../../etc/passwd`, which is outside the workspace"
        );
        let Err(Violation::Path(message)) = guard.check("Story/Scenes/SCN-other.md") else {
            panic!("not refused")
        };
        assert!(message.contains("not among the step's expected artifacts (Compendium/Characters/CHAR-kael-maren.md, Story/Scenes/SCN-the-gate.md)"), "{message}");
        for named in ["notes.md", "/etc/passwd", "..\\secret", "Story/x"] {
            assert!(
                matches!(guard.check(named), Err(Violation::Path(_))),
                "{named} names a file"
            );
        }
    }

    #[test]
    fn a_path_field_holding_prose_is_asked_again_not_stopped() {
        let Err(Violation::Contract(message)) = guard().check("one thing that works") else {
            panic!("prose in a path field is a broken contract")
        };
        assert!(message.contains("is not a path"), "{message}");
        // In a JSON reply the field goes: the finding is about the scene.
        let mut checks = Vec::new();
        let reply = r#"{"pass": true, "findings": [{"quote": "the gate", "file": "the whole scene. It works."}]}"#;
        let accepted = check_reply(reply, Output::Json, None, &guard(), &mut checks).unwrap();
        assert_eq!(accepted.value["findings"][0].get("file"), None);
        assert_eq!(stored_json(&accepted.text).unwrap(), accepted.value);
        assert!(checks.iter().any(|check| check.check == "path_fields"
            && check.detail.contains("“the whole scene. It works.”")));
    }

    fn schema() -> (String, Value) {
        (
            "schemas/test.json".to_owned(),
            json!({
                "type": "object",
                "required": ["pass", "findings"],
                "additionalProperties": false,
                "properties": {
                    "pass": {"type": "boolean"},
                    "findings": {"type": "array", "items": {
                        "type": "object",
                        "required": ["quote"],
                        "properties": {"quote": {"type": "string", "minLength": 6}, "file": {"type": "string"}}
                    }}
                }
            }),
        )
    }

    #[test]
    fn json_replies_are_unwrapped_validated_and_guarded() {
        let mut checks = Vec::new();
        let reply = "<think>let me see</think>\n```json\n{\"pass\": true, \"findings\": []}\n```";
        let accepted =
            check_reply(reply, Output::Json, Some(&schema()), &guard(), &mut checks).unwrap();
        assert_eq!(accepted.value, json!({"pass": true, "findings": []}));
        assert!(!accepted.text.contains("think"));
        assert!(checks.iter().all(|check| check.passed), "{checks:?}");

        let mut checks = Vec::new();
        let Err(Violation::Contract(message)) = check_reply(
            r#"{"pass": "yes", "findings": [{"quote": "abc"}]}"#,
            Output::Json,
            Some(&schema()),
            &guard(),
            &mut checks,
        ) else {
            panic!("accepted")
        };
        assert!(
            message.starts_with("the reply does not follow the schema schemas/test.json: at /"),
            "{message}"
        );
        assert!(
            message.contains("/pass") && message.contains("/findings/0/quote"),
            "{message}"
        );

        let mut checks = Vec::new();
        let Err(Violation::Contract(message)) = check_reply(
            "Sure! Here it is.",
            Output::Json,
            None,
            &guard(),
            &mut checks,
        ) else {
            panic!("accepted")
        };
        assert!(
            message.starts_with("the reply is not valid JSON"),
            "{message}"
        );

        let mut checks = Vec::new();
        let reply =
            r#"{"pass": false, "findings": [{"quote": "the gate", "file": "../../etc/passwd"}]}"#;
        let Err(Violation::Path(message)) =
            check_reply(reply, Output::Json, Some(&schema()), &guard(), &mut checks)
        else {
            panic!("accepted")
        };
        assert!(message.contains("../../etc/passwd"));
        assert!(
            checks
                .iter()
                .any(|check| check.check == "path_guard" && !check.passed)
        );
    }

    #[test]
    fn prose_replies_drop_thinking_and_guard_their_targets() {
        let mut checks = Vec::new();
        let reply = "<thinking>plan it</thinking>\n<message>Here is the scene.</message>\n<content_update target=\"Story/Scenes/SCN-the-gate.md\">\nThe gate stood open.\n</content_update>";
        let accepted = check_reply(reply, Output::Prose, None, &guard(), &mut checks).unwrap();
        assert_eq!(accepted.text, "The gate stood open.");
        assert_eq!(accepted.message.as_deref(), Some("Here is the scene."));

        let mut checks = Vec::new();
        let reply = "<content_update target=\"../../etc/passwd\">root::0:0</content_update>";
        assert!(matches!(
            check_reply(reply, Output::Prose, None, &guard(), &mut checks),
            Err(Violation::Path(_))
        ));

        let mut checks = Vec::new();
        assert!(matches!(
            check_reply(
                "<thinking>only thoughts</thinking>",
                Output::Prose,
                None,
                &guard(),
                &mut checks
            ),
            Err(Violation::Contract(_))
        ));
    }

    #[test]
    fn a_draft_in_an_unclosed_markdown_fence_after_a_preamble_is_read_as_its_prose() {
        let prose = "The tide had left the yard strewn with wrack. Kael walked to the gate.\n\n\"Open it,\" Ysolde said.";
        let reply = format!("Here is the scene you asked for:\n```markdown\n{prose}\n");
        let mut checks = Vec::new();
        let accepted = check_reply(&reply, Output::Prose, None, &guard(), &mut checks).unwrap();
        assert_eq!(accepted.text, prose, "the gates see the prose, all of it");
        let closed =
            format!("Sure! Here it is:\n\n~~~\n{prose}\n~~~\n\nI hope this captures the mood.");
        let accepted =
            check_reply(&closed, Output::Prose, None, &guard(), &mut Vec::new()).unwrap();
        assert_eq!(accepted.text, prose);
    }

    #[test]
    fn a_line_that_introduces_the_prose_and_one_that_comments_on_it_are_dropped() {
        let reply = "Here is the scene:\nThe gate stood open.\n\nKael went through.\n\nLet me know if you want changes.";
        let accepted = check_reply(reply, Output::Prose, None, &guard(), &mut Vec::new()).unwrap();
        assert_eq!(accepted.text, "The gate stood open.\n\nKael went through.");
        // A first line of prose that happens to end in a colon stays.
        let reply = "She said only this:\n\"Bar the gate.\"";
        let accepted = check_reply(reply, Output::Prose, None, &guard(), &mut Vec::new()).unwrap();
        assert_eq!(accepted.text, reply);
    }

    #[test]
    fn a_reply_that_talks_about_the_task_is_a_broken_contract() {
        let mut checks = Vec::new();
        let result = check_reply(
            "I'm sorry, but I can't write that scene without more context.",
            Output::Prose,
            None,
            &guard(),
            &mut checks,
        );
        assert!(
            matches!(result, Err(Violation::Contract(message)) if message.contains("talks about the task"))
        );
        assert!(
            checks
                .iter()
                .any(|check| check.check == "prose" && !check.passed)
        );
    }
}
