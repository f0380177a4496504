//! Task packets and agent receipts (prompt-hardening, contracts A and B):
//! every agent step is handed a packet (what it is asked, from which inputs,
//! under which output contract and expected artifacts) and leaves a receipt
//! (who answered with which decoding, what it produced, which checks the
//! reply passed, whether it stopped with STOP_HOOK). Receipts are signed with
//! the workspace key like tool receipts.
//!
//! Both are written with `"version": "0.2"` and validated against the bundled
//! v0.2 schemas (v0.1 and a version field) before they are written. A record
//! without a version is a v0.1 record from an earlier build: it is read and
//! checked against v0.1, and its signature verifies as it was written, since
//! the signature covers the record as written. A record of a version this
//! build does not know is not read.
//!
//! Layout (the spec's storage decision, the run being the issue):
//! `.control-room/audit/issues/{run_id}/{timestamp}__packet__{packet_id}.json`
//! and `…__receipt__{packet_id}.json`, written atomically.
//!
//! The runner's agent step fills a step's receipt (`runs::runner`'s
//! `receipt`); a reply whose contract is a receipt is held to it by
//! `runs::contract`'s `receipt`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use std::sync::LazyLock;

use jsonschema::Validator;

use super::Check;
use super::signing::{SigningKey, canonical};
use crate::llm::model::Decoding;
use crate::llm::protocol::schema::validator_errors;
use crate::storage::Disk;

/// Where packets and receipts live, relative to the workspace root.
pub const AUDIT_DIR: &str = ".control-room/audit/issues";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub file: Option<String>,
    pub scene_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputRef {
    pub slot: String,
    /// `pointer` (a tool's output) or `artifact` (an agent's text).
    pub kind: String,
    pub sha256: String,
    pub receipt_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputContract {
    /// `prose` or `json`.
    pub kind: String,
    pub schema: Option<String>,
    pub expected_artifacts: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handoff {
    pub from: String,
    pub to: String,
    pub step_id: String,
    pub next_step_id: Option<String>,
}

/// The version of the packet and receipt contracts this build writes.
pub const CONTRACT_VERSION: &str = "0.2";

/// What an agent step is asked to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packet {
    /// [`CONTRACT_VERSION`] when written; `None` in a v0.1 packet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub packet_id: String,
    pub parent_issue_id: String,
    pub parent_packet_id: Option<String>,
    pub intent: String,
    pub target: Target,
    pub scope: String,
    pub inputs: Vec<InputRef>,
    pub constraints: Vec<String>,
    pub output_contract: OutputContract,
    pub handoff: Handoff,
    pub timestamp: String,
    pub requested_by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<String>>,
}

impl Packet {
    /// The packet as the agent is sent it, tagged `<task_packet>`: what it
    /// is asked, on which inputs, under which constraints and output
    /// contract, and who gets its work next. The ids, the time and the
    /// inputs' hashes stay on disk: the agent has no use for them, and
    /// without them the same step sends the same bytes in every run, which
    /// a replayed cassette, the reuse of a finished step and a server's
    /// prompt cache all need.
    pub fn sent(&self) -> String {
        let inputs: Vec<Value> = self
            .inputs
            .iter()
            .map(|input| serde_json::json!({ "slot": input.slot, "kind": input.kind }))
            .collect();
        let mut sent = serde_json::json!({
            "intent": self.intent,
            "target": self.target,
            "scope": self.scope,
            "inputs": inputs,
            "constraints": self.constraints,
            "output_contract": self.output_contract,
            "handoff": self.handoff,
        });
        if let Some(choices) = &self.choices {
            sent["choices"] = serde_json::json!(choices);
        }
        format!("<task_packet>\n{sent}\n</task_packet>")
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecodingPair {
    pub requested: Decoding,
    pub effective: Decoding,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReceiptActor {
    pub agent: String,
    pub provider: String,
    pub model: String,
    pub requested_model: Option<String>,
    pub decoding: DecodingPair,
}

impl ReceiptActor {
    /// `agent`, and who served `reply` with which decoding.
    pub fn of(agent: &str, reply: &crate::llm::model::ModelReply) -> ReceiptActor {
        ReceiptActor {
            agent: agent.to_owned(),
            provider: reply.actor.provider.clone(),
            model: reply.actor.model.clone(),
            requested_model: reply.actor.requested_model.clone(),
            decoding: DecodingPair {
                requested: reply.requested.clone(),
                effective: reply.effective.clone(),
            },
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputRef {
    pub slot: String,
    pub sha256: String,
    pub chars: usize,
    pub path: Option<String>,
}

/// What an agent step did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentReceipt {
    /// [`CONTRACT_VERSION`] when written, under the signature; `None` in a
    /// v0.1 receipt, which verifies as it was signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    pub receipt_id: String,
    pub packet_id: String,
    pub issue_id: String,
    pub run_id: String,
    pub session_id: String,
    pub step_id: String,
    pub actor: ReceiptActor,
    pub started_at: String,
    pub finished_at: String,
    pub inputs_used: Vec<InputRef>,
    pub outputs_produced: Vec<OutputRef>,
    pub reasoning_summary: String,
    pub decisions: Vec<String>,
    pub checks_performed: Vec<Check>,
    pub assumptions: Vec<String>,
    pub risks: Vec<String>,
    pub next_recommended_action: String,
    pub stop_hook: bool,
    pub stop_reason: Option<String>,
    pub citations: Vec<String>,
    pub report_excerpt: String,
    pub attempts: u32,
    pub reused_from: Option<String>,
    pub signature: String,
}

impl AgentReceipt {
    pub fn sign(&mut self, key: &SigningKey) {
        self.signature = key.sign(&canonical(self));
    }

    /// Whether `key` signed this receipt and its contract is one this
    /// build reads (v0.1, without a version, or [`CONTRACT_VERSION`]).
    pub fn verify(&self, key: &SigningKey) -> bool {
        self.version
            .as_deref()
            .is_none_or(|version| version == CONTRACT_VERSION)
            && key.verify(&canonical(self), &self.signature)
    }
}

/// How often the replies behind a run's receipts kept their contract.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ContractTally {
    /// Replies the model gave (a reused step's none).
    pub replies: u32,
    /// Replies that broke their contract.
    pub broken: u32,
}

impl ContractTally {
    /// The tally of `receipts`: each reply that broke its contract left a
    /// failed `attempt_N` check in its step's receipt (`…/attempt_N` for a
    /// micro-step's).
    pub fn of(receipts: &[AgentReceipt]) -> ContractTally {
        let mut tally = ContractTally::default();
        for receipt in receipts.iter().filter(|r| r.reused_from.is_none()) {
            tally.replies += receipt.attempts;
            // The runner's checks only: an agent's own (`agent/…`) count
            // for nothing here.
            let broken = receipt.checks_performed.iter().filter(|check| {
                let name = check.check.rsplit('/').next().unwrap_or_default();
                !check.passed
                    && !check.check.starts_with("agent/")
                    && name
                        .strip_prefix("attempt_")
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            });
            tally.broken += u32::try_from(broken.count()).unwrap_or(u32::MAX);
        }
        tally
    }
}

/// Why a bundled contract schema is not usable (a fault of the build, which
/// every check against that contract then reports).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum ContractError {
    #[error("the bundled schema {name} is not JSON: {error}")]
    NotJson { name: String, error: String },
    #[error("the bundled schema {name} does not compile: {error}")]
    DoesNotCompile { name: String, error: String },
}

/// A bundled contract schema (the prompts' `schemas/` folder, where the
/// agents read them too), compiled once.
fn contract(name: &str, text: &str) -> Result<Validator, ContractError> {
    let schema: Value = serde_json::from_str(text).map_err(|error| ContractError::NotJson {
        name: name.to_owned(),
        error: error.to_string(),
    })?;
    jsonschema::validator_for(&schema).map_err(|error| ContractError::DoesNotCompile {
        name: name.to_owned(),
        error: error.to_string(),
    })
}

static PACKET_V0_1: LazyLock<Result<Validator, ContractError>> = LazyLock::new(|| {
    contract(
        "packet.v0.1",
        include_str!("../../prompts/schemas/packet.v0.1.json"),
    )
});
static PACKET_V0_2: LazyLock<Result<Validator, ContractError>> = LazyLock::new(|| {
    contract(
        "packet.v0.2",
        include_str!("../../prompts/schemas/packet.v0.2.json"),
    )
});
static RECEIPT_V0_1: LazyLock<Result<Validator, ContractError>> = LazyLock::new(|| {
    contract(
        "receipt.v0.1",
        include_str!("../../prompts/schemas/receipt.v0.1.json"),
    )
});
static RECEIPT_V0_2: LazyLock<Result<Validator, ContractError>> = LazyLock::new(|| {
    contract(
        "receipt.v0.2",
        include_str!("../../prompts/schemas/receipt.v0.2.json"),
    )
});

/// The ways `value` breaks the bundled contract `schema` (`packet.v0.1`,
/// `packet.v0.2`, `receipt.v0.1` or `receipt.v0.2`).
pub fn contract_errors(schema: &str, value: &Value) -> Vec<String> {
    let validator = match schema {
        "packet.v0.1" => &*PACKET_V0_1,
        "packet.v0.2" => &*PACKET_V0_2,
        "receipt.v0.1" => &*RECEIPT_V0_1,
        "receipt.v0.2" => &*RECEIPT_V0_2,
        other => return vec![format!("no contract {other}")],
    };
    match validator {
        Ok(validator) => validator_errors(validator, value),
        Err(error) => vec![error.to_string()],
    }
}

/// The two kinds of record, each with its contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    Packet,
    Receipt,
}

impl Record {
    fn name(self) -> &'static str {
        match self {
            Record::Packet => "packet",
            Record::Receipt => "receipt",
        }
    }

    /// The contract a record of this kind follows, by its `version` as
    /// read: none is v0.1 (written before the field), `"0.2"` is v0.2, and
    /// any other is one this build does not know.
    pub fn contract(self, version: Option<&Value>) -> Result<&'static str, UnknownVersion> {
        match (self, version) {
            (Record::Packet, None) => Ok("packet.v0.1"),
            (Record::Receipt, None) => Ok("receipt.v0.1"),
            (Record::Packet, Some(Value::String(v))) if v == CONTRACT_VERSION => Ok("packet.v0.2"),
            (Record::Receipt, Some(Value::String(v))) if v == CONTRACT_VERSION => {
                Ok("receipt.v0.2")
            }
            (_, Some(other)) => Err(UnknownVersion {
                record: self.name(),
                version: other.to_string(),
            }),
        }
    }
}

/// A packet or receipt of a version this build does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "a {record} of version {version}, which this build does not know (it reads 0.1 and {CONTRACT_VERSION})"
)]
pub struct UnknownVersion {
    pub record: &'static str,
    /// The version as written.
    pub version: String,
}

/// The ways `value`, a packet or receipt as read, breaks the contract of
/// its version.
pub fn record_errors(record: Record, value: &Value) -> Vec<String> {
    match record.contract(value.get("version")) {
        Ok(schema) => contract_errors(schema, value),
        Err(error) => vec![error.to_string()],
    }
}

/// A timestamp that sorts in file names: `20261122T101500.123Z`.
fn file_stamp(rfc3339: &str) -> String {
    rfc3339.replace(['-', ':'], "")
}

fn issue_dir(root: &Path, issue_id: &str) -> PathBuf {
    root.join(AUDIT_DIR).join(issue_id)
}

/// Writes a record of this build's contract version, checked against it.
fn write_json(
    disk: &Disk,
    path: &Path,
    record: Record,
    value: &impl Serialize,
) -> std::io::Result<()> {
    let json = serde_json::to_value(value).map_err(std::io::Error::other)?;
    let schema = format!("{}.v{CONTRACT_VERSION}", record.name());
    let mut errors = contract_errors(&schema, &json);
    if json.get("version").and_then(Value::as_str) != Some(CONTRACT_VERSION) {
        errors.push(format!("its version is not {CONTRACT_VERSION}"));
    }
    if !errors.is_empty() {
        // A bug of ours, not of the model: refuse to write a broken record.
        return Err(std::io::Error::other(format!(
            "{} breaks the {schema} contract: {}",
            path.display(),
            errors.join("; ")
        )));
    }
    let mut bytes = serde_json::to_vec_pretty(&json).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    disk.write_atomic(path, &bytes)
}

/// Writes a packet; returns its path relative to the workspace.
pub fn write_packet(root: &Path, disk: &Disk, packet: &Packet) -> std::io::Result<String> {
    let name = format!(
        "{}__packet__{}.json",
        file_stamp(&packet.timestamp),
        packet.packet_id
    );
    let path = issue_dir(root, &packet.parent_issue_id).join(&name);
    write_json(disk, &path, Record::Packet, packet)?;
    Ok(format!("{AUDIT_DIR}/{}/{name}", packet.parent_issue_id))
}

/// Writes a signed receipt; returns its path relative to the workspace.
pub fn write_receipt(root: &Path, disk: &Disk, receipt: &AgentReceipt) -> std::io::Result<String> {
    let name = format!(
        "{}__receipt__{}.json",
        file_stamp(&receipt.finished_at),
        receipt.packet_id
    );
    let path = issue_dir(root, &receipt.issue_id).join(&name);
    write_json(disk, &path, Record::Receipt, receipt)?;
    Ok(format!("{AUDIT_DIR}/{}/{name}", receipt.issue_id))
}

/// Every receipt of an issue (a run), oldest first; unreadable files, and
/// receipts of a version this build does not know, are skipped.
pub fn load_receipts(root: &Path, issue_id: &str) -> Vec<AgentReceipt> {
    load_records(root, issue_id, Record::Receipt)
}

/// Every packet of an issue (a run), oldest first, skipped as receipts are.
pub fn load_packets(root: &Path, issue_id: &str) -> Vec<Packet> {
    load_records(root, issue_id, Record::Packet)
}

/// Each receipt of an issue (a run) by id: its step and its path relative
/// to the workspace, for links from the run report.
pub fn receipt_paths(root: &Path, issue_id: &str) -> Vec<(String, String, String)> {
    record_paths(root, issue_id, Record::Receipt)
        .iter()
        .filter_map(|path| {
            let receipt: AgentReceipt = read_record(path, Record::Receipt)?;
            let name = path.file_name()?.to_str()?;
            Some((
                receipt.receipt_id,
                receipt.step_id,
                format!("{AUDIT_DIR}/{issue_id}/{name}"),
            ))
        })
        .collect()
}

/// The records of one kind in an issue's folder, in file-name (time) order.
fn load_records<T: serde::de::DeserializeOwned>(
    root: &Path,
    issue_id: &str,
    record: Record,
) -> Vec<T> {
    record_paths(root, issue_id, record)
        .iter()
        .filter_map(|path| read_record(path, record))
        .collect()
}

/// The record at `path`, if it reads and is of a version this build knows.
fn read_record<T: serde::de::DeserializeOwned>(path: &Path, record: Record) -> Option<T> {
    let value: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    record.contract(value.get("version")).ok()?;
    serde_json::from_value(value).ok()
}

/// The files of one kind in an issue's folder, in file-name (time) order.
fn record_paths(root: &Path, issue_id: &str, record: Record) -> Vec<PathBuf> {
    let kind = format!("__{}__", record.name());
    let Ok(entries) = std::fs::read_dir(issue_dir(root, issue_id)) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.contains(&kind) && name.ends_with(".json"))
        })
        .collect();
    paths.sort();
    paths
}

/// The packet intent for a step: from its output and mode.
pub fn intent(prompt_type: &str, json: bool, mode: Option<&str>) -> &'static str {
    if prompt_type.starts_with("extract") {
        return "extract";
    }
    if json {
        return if prompt_type.starts_with("evaluate") || prompt_type.starts_with("review") {
            "review"
        } else {
            "analyze"
        };
    }
    match mode {
        Some("director") => "draft",
        Some("architect") => "plan",
        _ => "revise",
    }
}

#[cfg(test)]
mod tests;
