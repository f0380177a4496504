//! A receipt step's reply (prompt-hardening's task boundary rule: an agent
//! sent a task packet whose contract is a receipt answers with its receipt
//! and nothing else).
//!
//! The agent writes the part of a receipt v0.1 only it can tell (what it
//! found, decided, checked, assumed and fears, and whether it had to stop);
//! the fields only the runner can vouch for (the ids, the times, the model
//! and its decoding, the inputs' and outputs' hashes, the attempts, the
//! signature) are the runner's, and a reply that gives them has them
//! replaced, which its checks say. The reply follows the prompt type's
//! schema (`schemas/receipt_reply.v0.1.json`, whose properties are the
//! receipt's own); the completed receipt is checked against
//! `receipt.v0.1.json` before it is written. Every file a citation names
//! goes through the path guard like any other reply's.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Accepted, PathGuard, Violation, check_paths, json_object, path_shaped};
use crate::llm::protocol::schema::schema_errors;
use crate::receipts::Check;

/// The receipt's fields the runner fills, never the agent.
pub const RUNNER_FIELDS: &[&str] = &[
    "version",
    "receipt_id",
    "packet_id",
    "issue_id",
    "run_id",
    "session_id",
    "step_id",
    "actor",
    "started_at",
    "finished_at",
    "inputs_used",
    "outputs_produced",
    "attempts",
    "reused_from",
    "signature",
];

/// The agent's part of its receipt, as read from an accepted reply; lists
/// the reply leaves out are empty.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReceiptReply {
    pub reasoning_summary: String,
    pub decisions: Vec<String>,
    #[serde(default)]
    pub checks_performed: Vec<Check>,
    #[serde(default)]
    pub assumptions: Vec<String>,
    #[serde(default)]
    pub risks: Vec<String>,
    pub next_recommended_action: String,
    pub stop_hook: bool,
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub citations: Vec<String>,
    pub report_excerpt: String,
}

impl ReceiptReply {
    /// The agent's part of the receipt an accepted receipt reply holds.
    pub fn of(accepted: &Accepted) -> Option<ReceiptReply> {
        serde_json::from_value(accepted.value.clone()).ok()
    }
}

/// Whether a citation is a quotation rather than a file.
fn quoted(citation: &str) -> bool {
    citation
        .trim_start()
        .starts_with(['"', '\'', '\u{201c}', '\u{2018}', '\u{00ab}'])
}

/// The file a citation names, if it names one: a path with no spaces (a
/// line anchor, `:12` or `:12-14`, left off), not a quotation.
fn cited_file(citation: &str) -> Option<&str> {
    let citation = citation.trim();
    if quoted(citation) || citation.contains(char::is_whitespace) {
        return None;
    }
    let file = match citation.rsplit_once(':') {
        Some((file, anchor))
            if !anchor.is_empty() && anchor.bytes().all(|b| b.is_ascii_digit() || b == b'-') =>
        {
            file
        }
        _ => citation,
    };
    path_shaped(file).then_some(file)
}

pub(super) fn check_receipt(
    raw: &str,
    schema: Option<&(String, Value)>,
    guard: &PathGuard,
    checks: &mut Vec<Check>,
) -> Result<Accepted, Violation> {
    let (_, mut value) = json_object(raw, checks)?;
    let fields = value
        .as_object_mut()
        .expect("json_object returns an object");
    let replaced: Vec<&str> = RUNNER_FIELDS
        .iter()
        .copied()
        .filter(|field| fields.remove(*field).is_some())
        .collect();
    if !replaced.is_empty() {
        checks.push(Check::new(
            "receipt_fields",
            true,
            format!(
                "the runner's own values replace the reply's {}",
                replaced.join(", ")
            ),
        ));
    }
    if let Some((source, schema)) = schema {
        let errors = schema_errors(schema, &value);
        if !errors.is_empty() {
            let message = format!(
                "the reply is not a receipt as {source} asks: {}",
                errors.join("; ")
            );
            checks.push(Check::new("receipt_schema", false, &message));
            return Err(Violation::Contract(message));
        }
        checks.push(Check::new(
            "receipt_schema",
            true,
            format!("follows {source}"),
        ));
    }
    let reply: ReceiptReply = serde_json::from_value(value).map_err(|error| {
        let message = format!("the reply is not a receipt: {error}");
        checks.push(Check::new("receipt_schema", false, &message));
        Violation::Contract(message)
    })?;
    if reply.stop_hook
        && reply
            .stop_reason
            .as_deref()
            .is_none_or(|reason| reason.trim().is_empty())
    {
        let message =
            "the receipt sets stop_hook but gives no stop_reason: say in one sentence why the task cannot be done"
                .to_owned();
        checks.push(Check::new("receipt_schema", false, &message));
        return Err(Violation::Contract(message));
    }
    check_paths(
        reply
            .citations
            .iter()
            .filter_map(|citation| cited_file(citation)),
        guard,
        checks,
    )?;
    let value = serde_json::to_value(&reply).expect("a receipt reply is JSON");
    Ok(Accepted {
        text: serde_json::to_string_pretty(&value).expect("a receipt reply is JSON"),
        value,
        message: Some(reply.report_excerpt.clone()),
        warnings: Vec::new(),
        actions: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> (String, Value) {
        let text = crate::runs::prompts::registry::bundled_text("schemas/receipt_reply.v0.1.json")
            .unwrap();
        (
            "schemas/receipt_reply.v0.1.json".into(),
            serde_json::from_str(text).unwrap(),
        )
    }

    fn guard() -> PathGuard {
        PathGuard::new(["Story/Scenes/SCN-the-gate.md".to_owned()])
    }

    fn good() -> Value {
        json!({
            "reasoning_summary": "The scene delivers the crossing but not the bargain.",
            "decisions": ["verdict: partly"],
            "next_recommended_action": "Add the bargain to the scene.",
            "stop_hook": false,
            "citations": ["Story/Scenes/SCN-the-gate.md", "\u{201c}the gate held\u{201d}"],
            "report_excerpt": "Partly: the bargain is missing."
        })
    }

    #[test]
    fn the_reply_schema_is_the_receipts_own_part() {
        let (_, reply) = schema();
        let full: Value = serde_json::from_str(
            crate::runs::prompts::registry::bundled_text("schemas/receipt.v0.1.json").unwrap(),
        )
        .unwrap();
        let reply_fields: Vec<&String> = reply["properties"].as_object().unwrap().keys().collect();
        let full_fields = full["properties"].as_object().unwrap();
        for field in &reply_fields {
            let mut own = full_fields[field.as_str()].clone();
            let mut theirs = reply["properties"][field.as_str()].clone();
            // The reply asks a non-empty summary where the receipt takes any.
            own.as_object_mut().unwrap().remove("minLength");
            theirs.as_object_mut().unwrap().remove("minLength");
            assert_eq!(own, theirs, "{field}");
        }
        // Every receipt field is the agent's or the runner's, never both.
        let mut all: Vec<&str> = reply_fields.iter().map(|f| f.as_str()).collect();
        all.extend(RUNNER_FIELDS.iter().filter(|f| **f != "version"));
        all.sort_unstable();
        let mut expected: Vec<&str> = full_fields.keys().map(String::as_str).collect();
        expected.sort_unstable();
        assert_eq!(all, expected);
    }

    #[test]
    fn a_good_receipt_is_read_with_its_lists_defaulted() {
        let mut checks = Vec::new();
        let accepted =
            check_receipt(&good().to_string(), Some(&schema()), &guard(), &mut checks).unwrap();
        let reply = ReceiptReply::of(&accepted).unwrap();
        assert_eq!(reply.decisions, ["verdict: partly"]);
        assert!(reply.risks.is_empty() && reply.checks_performed.is_empty());
        assert_eq!(accepted.value["assumptions"], json!([]));
        assert!(checks.iter().all(|check| check.passed), "{checks:?}");
    }

    #[test]
    fn the_runners_fields_are_replaced_not_refused() {
        let mut reply = good();
        reply["receipt_id"] = json!("arcpt_made_up");
        reply["signature"] = json!("forged");
        let mut checks = Vec::new();
        let accepted =
            check_receipt(&reply.to_string(), Some(&schema()), &guard(), &mut checks).unwrap();
        assert!(accepted.value.get("signature").is_none());
        assert!(
            checks
                .iter()
                .any(|c| c.check == "receipt_fields" && c.detail.contains("receipt_id, signature"))
        );
    }

    #[test]
    fn a_receipt_missing_a_field_or_with_a_stranger_breaks_its_contract() {
        let mut missing = good();
        missing.as_object_mut().unwrap().remove("decisions");
        let mut stranger = good();
        stranger["verdict"] = json!("partly");
        let mut no_reason = good();
        no_reason["stop_hook"] = json!(true);
        for (reply, says) in [
            (missing, "decisions"),
            (stranger, "verdict"),
            (no_reason, "stop_reason"),
        ] {
            let violation = check_receipt(
                &reply.to_string(),
                Some(&schema()),
                &guard(),
                &mut Vec::new(),
            )
            .unwrap_err();
            assert!(
                matches!(&violation, Violation::Contract(message) if message.contains(says)),
                "{violation:?}"
            );
        }
    }

    #[test]
    fn a_citation_in_words_or_with_a_line_anchor_is_no_stranger() {
        let mut reply = good();
        reply["citations"] = json!(["beat 3 / the outline", "Story/Scenes/SCN-the-gate.md:12-14"]);
        let mut checks = Vec::new();
        check_receipt(&reply.to_string(), Some(&schema()), &guard(), &mut checks).unwrap();
        assert_eq!(
            cited_file("Story/Scenes/SCN-the-gate.md:12"),
            Some("Story/Scenes/SCN-the-gate.md")
        );
        assert_eq!(cited_file("beat 3 / the outline"), None);
    }

    #[test]
    fn a_citation_of_a_file_not_given_stops_the_step() {
        let mut reply = good();
        reply["citations"] = json!(["Story/Scenes/SCN-made-up.md"]);
        let violation = check_receipt(
            &reply.to_string(),
            Some(&schema()),
            &guard(),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(matches!(violation, Violation::Path(_)), "{violation:?}");
    }
}
