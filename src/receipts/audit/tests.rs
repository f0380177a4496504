//! The packet and receipt contracts: versions, validation and signatures,
//! and the tally of broken replies.

use serde_json::json;

use super::*;

/// An agent receipt as builds before the version field wrote it
/// (contract v0.1), signed with the test key `[7; 32]`.
const RECEIPT_V0_1: &str = r#"{
  "receipt_id": "arcpt_0123456789ab",
  "packet_id": "pkt_0123456789ab",
  "issue_id": "run_0123456789ab",
  "run_id": "run_0123456789ab",
  "session_id": "sess_0123456789ab",
  "step_id": "draft",
  "actor": {
"agent": "writer",
"provider": "scripted",
"model": "scripted",
"requested_model": null,
"decoding": {
  "requested": {
    "max_tokens": 800
  },
  "effective": {
    "max_tokens": 800
  }
}
  },
  "started_at": "2026-11-22T10:00:00.000Z",
  "finished_at": "2026-11-22T10:00:01.000Z",
  "inputs_used": [
{
  "slot": "scene_brief",
  "kind": "artifact",
  "sha256": "00",
  "receipt_id": null
}
  ],
  "outputs_produced": [
{
  "slot": "draft",
  "sha256": "11",
  "chars": 5,
  "path": null
}
  ],
  "reasoning_summary": "Wrote the scene.",
  "decisions": [],
  "checks_performed": [
{
  "check": "output_contract",
  "passed": true,
  "detail": "prose"
}
  ],
  "assumptions": [],
  "risks": [],
  "next_recommended_action": "run step `polish`",
  "stop_hook": false,
  "stop_reason": null,
  "citations": [],
  "report_excerpt": "The writer answered.",
  "attempts": 1,
  "reused_from": null,
  "signature": "hmac-sha256:b9faad4d8aa74ab7a94e588e6f4b09971c481cb8b1e5f061cf60ba1dbf2d48c1"
}"#;

const RUN: &str = "run_0123456789ab";

fn key() -> SigningKey {
    SigningKey::for_tests(&[7; 32])
}

fn write_file(root: &Path, name: &str, text: &str) {
    let dir = issue_dir(root, RUN);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), text).unwrap();
}

fn packet() -> Packet {
    Packet {
        version: Some(CONTRACT_VERSION.to_owned()),
        packet_id: "pkt_0123456789ab".into(),
        parent_issue_id: RUN.into(),
        parent_packet_id: None,
        intent: "draft".into(),
        target: Target {
            file: Some("Story/Scenes/SCN-a.md".into()),
            scene_id: Some("SCN-a".into()),
        },
        scope: "one scene".into(),
        inputs: vec![InputRef {
            slot: "scene_brief".into(),
            kind: "artifact".into(),
            sha256: "00".into(),
            receipt_id: None,
        }],
        constraints: vec![],
        output_contract: OutputContract {
            kind: "prose".into(),
            schema: None,
            expected_artifacts: vec![],
        },
        handoff: Handoff {
            from: "planner".into(),
            to: "writer".into(),
            step_id: "draft".into(),
            next_step_id: Some("polish".into()),
        },
        timestamp: "2026-11-22T10:00:00.000Z".into(),
        requested_by: "runner".into(),
        choices: None,
    }
}

#[test]
fn a_v0_1_agent_receipt_without_a_version_still_reads_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    write_file(
        dir.path(),
        "20261122T100001.000Z__receipt__pkt_0123456789ab.json",
        RECEIPT_V0_1,
    );
    let value: Value = serde_json::from_str(RECEIPT_V0_1).unwrap();
    assert_eq!(
        Record::Receipt.contract(value.get("version")),
        Ok("receipt.v0.1")
    );
    assert_eq!(record_errors(Record::Receipt, &value), Vec::<String>::new());
    let receipts = load_receipts(dir.path(), RUN);
    assert_eq!(receipts.len(), 1);
    assert_eq!(receipts[0].version, None);
    assert!(receipts[0].verify(&key()), "signed as it was written");
    let mut altered = receipts[0].clone();
    altered.attempts = 2;
    assert!(!altered.verify(&key()));
    assert_eq!(receipt_paths(dir.path(), RUN)[0].0, "arcpt_0123456789ab");
}

#[test]
fn a_receipt_written_now_carries_version_0_2_under_its_signature() {
    let dir = tempfile::tempdir().unwrap();
    let mut receipt: AgentReceipt = serde_json::from_str(RECEIPT_V0_1).unwrap();
    receipt.version = Some(CONTRACT_VERSION.to_owned());
    receipt.sign(&key());
    let path = write_receipt(dir.path(), &Disk::default(), &receipt).unwrap();
    let text = std::fs::read_to_string(dir.path().join(path)).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value["version"], "0.2");
    assert_eq!(
        contract_errors("receipt.v0.2", &value),
        Vec::<String>::new()
    );
    assert!(
        !contract_errors("receipt.v0.1", &value).is_empty(),
        "v0.1 has no version field"
    );
    let mut read = load_receipts(dir.path(), RUN).remove(0);
    assert!(read.verify(&key()));
    read.version = None;
    assert!(!read.verify(&key()), "the version is signed");
    // Signed under a version this build does not know, it never counts.
    read.version = Some("0.3".into());
    read.sign(&key());
    assert!(!read.verify(&key()));
}

#[test]
fn a_v0_2_packet_follows_its_contract_and_one_with_a_wrong_version_does_not() {
    let mut value = serde_json::to_value(packet()).unwrap();
    assert_eq!(contract_errors("packet.v0.2", &value), Vec::<String>::new());
    assert_eq!(record_errors(Record::Packet, &value), Vec::<String>::new());
    assert!(!contract_errors("packet.v0.1", &value).is_empty());
    for wrong in [json!("0.3"), json!("0.1"), json!(2), json!(null)] {
        value["version"] = wrong.clone();
        assert!(
            !contract_errors("packet.v0.2", &value).is_empty(),
            "version {wrong} passed the v0.2 contract"
        );
        assert!(
            !record_errors(Record::Packet, &value).is_empty(),
            "version {wrong} was read"
        );
    }
    // Without a version it is a packet of v0.1 and follows that contract;
    // the v0.2 contract also takes it (a model's record may omit it).
    value.as_object_mut().unwrap().remove("version");
    assert_eq!(
        Record::Packet.contract(value.get("version")),
        Ok("packet.v0.1")
    );
    assert_eq!(record_errors(Record::Packet, &value), Vec::<String>::new());
    assert_eq!(contract_errors("packet.v0.2", &value), Vec::<String>::new());
}

#[test]
fn a_packet_is_written_only_with_this_builds_version() {
    let dir = tempfile::tempdir().unwrap();
    let mut unversioned = packet();
    unversioned.version = None;
    let error = write_packet(dir.path(), &Disk::default(), &unversioned).unwrap_err();
    assert!(error.to_string().contains("version is not 0.2"), "{error}");
    assert!(load_packets(dir.path(), RUN).is_empty(), "nothing written");
    write_packet(dir.path(), &Disk::default(), &packet()).unwrap();
    assert_eq!(load_packets(dir.path(), RUN), [packet()]);
}

#[test]
fn a_record_of_a_version_this_build_does_not_know_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut newer: Value = serde_json::to_value(packet()).unwrap();
    newer["version"] = json!("0.3");
    write_file(
        dir.path(),
        "20261122T100000.000Z__packet__pkt_0123456789ab.json",
        &newer.to_string(),
    );
    assert!(load_packets(dir.path(), RUN).is_empty());
    let error = Record::Packet
        .contract(newer.get("version"))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("\"0.3\"") && error.contains("0.2"),
        "{error}"
    );
}

#[test]
fn the_v0_2_schemas_are_the_v0_1_schemas_with_an_optional_version() {
    for kind in ["packet", "receipt"] {
        let schema = |version: &str| -> Value {
            let path = format!(
                "{}/prompts/schemas/{kind}.v{version}.json",
                env!("CARGO_MANIFEST_DIR")
            );
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
        };
        let (old, mut new) = (schema("0.1"), schema("0.2"));
        let version = new["properties"]
            .as_object_mut()
            .unwrap()
            .remove("version")
            .unwrap();
        assert_eq!(version["const"], CONTRACT_VERSION);
        for key in ["properties", "required", "additionalProperties", "$defs"] {
            assert_eq!(new[key], old[key], "{kind}: {key}");
        }
        assert!(
            !new["required"]
                .as_array()
                .unwrap()
                .contains(&json!("version"))
        );
    }
}

#[test]
fn the_tally_counts_the_runners_broken_replies_not_the_agents_own_checks_or_reused_steps() {
    let check = |name: &str, passed: bool| Check {
        check: name.to_owned(),
        passed,
        detail: String::new(),
    };
    let mut retried: AgentReceipt = serde_json::from_str(RECEIPT_V0_1).unwrap();
    retried.attempts = 5;
    retried.checks_performed = vec![
        check("attempt_1", false),
        check("evidence 1/attempt_1", false),
        check("evidence 1/attempt_2", false),
        check("evidence 1/quote", false),
        // An agent's own check named like the runner's counts for nothing.
        check("agent/attempt_1", false),
        check("attempt_x", false),
        check("json", true),
    ];
    let mut reused = retried.clone();
    reused.reused_from = Some("arcpt_0123456789ab".into());
    assert_eq!(
        ContractTally::of(&[retried, reused]),
        ContractTally {
            replies: 5,
            broken: 3
        }
    );
}
