//! The validator against a real workspace and signed receipts: every rule
//! of a reply with its code, documents line by line, transcripts reply by reply.

use serde_json::json;
use tempfile::TempDir;

use super::*;
use crate::receipts::{SigningKey, ToolReceipt};
use crate::storage::FileRef;

const SCENE: &str = "---\nid: SCN-the-gate\npov: Kael\n---\n\nKael's grey eyes narrowed at the gate.\nThe salt wind took his words away.\n";
const OUTLINE: &str = "# Outline\n\n- SCN-the-gate: Kael reaches the gate.\n";
const CARD: &str = "---\ntype: character\nname: Kael\neyes: grey\n---\n\nKael Maren, a courier.\n";
const SCENE_PATH: &str = "Story/Scenes/SCN-the-gate.md";
const ROUND: &str = "conf_0123456789ab";

/// The workspace and the book of signed receipts that every test validates
/// against; the temp dir is kept for as long as the workspace is used.
struct Fixture {
    _dir: TempDir,
    workspace: Workspace,
    book: ReceiptBook,
}

impl Fixture {
    fn new() -> Fixture {
        let (dir, workspace) = workspace();
        let book = book(&SigningKey::for_tests(&[3; 32]));
        Fixture {
            _dir: dir,
            workspace,
            book,
        }
    }

    fn sources(&self) -> WorkspaceSources<'_> {
        WorkspaceSources {
            workspace: &self.workspace,
        }
    }
}

fn workspace() -> (TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in [
        (SCENE_PATH, SCENE),
        ("Story/SCN-outline.md", OUTLINE),
        ("Compendium/Characters/CHAR-kael.md", CARD),
    ] {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let workspace = Workspace::load(dir.path());
    (dir, workspace)
}

fn receipt(id: &str, session: &str, text_read: &str, key: &SigningKey) -> ToolReceipt {
    let mut receipt = ToolReceipt {
        version: Some(crate::receipts::TOOL_RECEIPT_VERSION),
        receipt_id: id.into(),
        run_id: session.into(),
        session_id: session.into(),
        step_id: "tools_1".into(),
        tool: "file_locator".into(),
        args: json!({"search_criteria": "gate"}),
        output: json!({}),
        output_sha256: "00".repeat(32),
        output_size: 2,
        summary: "1 file".into(),
        file_refs: vec![FileRef {
            path: SCENE_PATH.into(),
            start_line: 1,
            end_line: 7,
            sha256: sha256_hex(text_read.as_bytes()),
            excerpt: String::new(),
        }],
        started_at: "2026-11-23T10:00:00Z".into(),
        finished_at: "2026-11-23T10:00:00Z".into(),
        signature: String::new(),
    };
    receipt.sign(key);
    receipt
}

fn book(key: &SigningKey) -> ReceiptBook {
    let mut tampered = receipt("rcpt_00000000000d", ROUND, SCENE, key);
    tampered.summary = "3 files".into();
    ReceiptBook::with_receipts(
        key,
        &[
            receipt("rcpt_00000000000a", ROUND, SCENE, key),
            receipt("rcpt_00000000000b", "conf_another0000", SCENE, key),
            receipt("rcpt_00000000000c", ROUND, "an older text", key),
            tampered,
        ],
    )
}

fn codes(verdict: &Verdict) -> Vec<&'static str> {
    match verdict {
        Verdict::Accepted { warnings } => warnings.iter().map(|p| p.code.as_str()).collect(),
        Verdict::Rejected { problems } => problems.iter().map(|p| p.code.as_str()).collect(),
        Verdict::Abstained => vec!["abstained"],
    }
}

#[test]
fn each_rule_of_a_reply_gives_its_code() {
    let fixture = Fixture::new();
    let sources = fixture.sources();
    let validator = Validator::new(&sources, &fixture.book);
    let reply = |text: &str, role: &str| validator.reply(text, role, ROUND);
    let grounded = format!(
        "The gate scene holds.\nEvidence: \"Kael’s grey  eyes narrowed\" in {SCENE_PATH} (receipt_id: rcpt_00000000000a)"
    );
    assert_eq!(
        reply(&grounded, "writer"),
        Verdict::Accepted { warnings: vec![] }
    );
    assert_eq!(codes(&reply("ABSTAIN", "critic")), ["abstained"]);
    assert_eq!(codes(&reply("I like it.", "critic")), ["evidence-missing"]);
    assert_eq!(
        codes(&reply(
            &format!("{grounded}\nEvidence: line 2 of {SCENE_PATH}"),
            "writer"
        )),
        ["evidence-multiple"]
    );
    let invented = format!("Evidence: \"Kael drew his sword\" in {SCENE_PATH}");
    assert_eq!(codes(&reply(&invented, "writer")), ["evidence-quote"]);
    let elsewhere = grounded.replace("rcpt_00000000000a", "rcpt_00000000000b");
    let verdict = reply(&elsewhere, "writer");
    assert_eq!(codes(&verdict), ["evidence-receipt"]);
    assert!(
        verdict.describe().contains("another round"),
        "{}",
        verdict.describe()
    );
    let tampered = grounded.replace("rcpt_00000000000a", "rcpt_00000000000d");
    assert!(
        reply(&tampered, "writer")
            .describe()
            .contains("signature does not verify")
    );
    let unknown = grounded.replace("rcpt_00000000000a", "rcpt_0000000000ff");
    assert_eq!(codes(&reply(&unknown, "writer")), ["evidence-receipt"]);
    let stale = grounded.replace("rcpt_00000000000a", "rcpt_00000000000c");
    assert_eq!(codes(&reply(&stale, "writer")), ["evidence-stale"]);
    assert!(reply(&stale, "writer").is_accepted(), "stale is a warning");
    assert_eq!(codes(&reply(&grounded, "planner")), ["evidence-source"]);
    let outline = "Evidence: \"Kael reaches the gate\" in Story/SCN-outline.md";
    assert!(reply(outline, "planner").is_accepted());
    assert_eq!(codes(&reply(outline, "continuity")), ["evidence-source"]);
    assert!(
        reply(
            "Evidence: \"Kael Maren, a courier\" (Compendium/Characters/CHAR-kael.md)",
            "continuity"
        )
        .is_accepted()
    );
    assert_eq!(
        codes(&reply("Evidence: it reads well.", "critic")),
        ["evidence-claim"]
    );
    assert!(
        reply("Evidence: it reads well.", "critic")
            .describe()
            .contains("missing-quote")
    );
    assert!(
        reply(&format!("Evidence: see {SCENE_PATH}"), "critic")
            .describe()
            .contains("missing-location")
    );
    assert!(
        reply("Evidence: I found no mention of the well.", "critic")
            .describe()
            .contains("missing-scope")
    );
    assert!(
        reply(
            &format!("Evidence: I found no mention of the well in {SCENE_PATH}."),
            "critic"
        )
        .is_accepted()
    );
    assert_eq!(
        codes(&reply(
            "Evidence: \"the salt wind took\" (rcpt_00000000000a)",
            "writer"
        )),
        Vec::<&str>::new(),
        "a quote with no file is looked for in what its receipt read"
    );
    assert_eq!(
        codes(&reply(
            "Evidence: \"the salt wind took\" in Story/none.md",
            "writer"
        )),
        ["evidence-quote"]
    );
}

#[test]
fn documents_are_checked_line_by_line_and_transcripts_reply_by_reply() {
    let fixture = Fixture::new();
    let sources = fixture.sources();
    let validator = Validator::new(&sources, &fixture.book);
    let note = format!(
        "# Notes\n\nEvidence: \"grey eyes narrowed\" in {SCENE_PATH} line 6\n\n```\nEvidence: \"ignored in code\"\n```\nEvidence: \"blue eyes\" in {SCENE_PATH}\n"
    );
    let problems = validator.document(&note);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].code, Code::Quote);
    assert_eq!(
        &note[problems[0].range.start..problems[0].range.end],
        "blue eyes"
    );

    let transcript = format!(
        "---\nconference_id: {ROUND}\n---\n# Conference\n\n## Replies\n\n### writer — accepted\n\n> Fine.\n> Evidence: \"grey eyes narrowed\" in {SCENE_PATH} (rcpt_00000000000b)\n\n### critic — rejected\n\n> No evidence here.\n\n### editor — abstained\n\n> ABSTAIN\n\n### planner — failed\n\nThe model failed.\n"
    );
    let problems = validator.document(&transcript);
    let found: Vec<(&str, &str)> = problems
        .iter()
        .map(|p| (p.code.as_str(), &transcript[p.range.start..p.range.end]))
        .collect();
    assert_eq!(
        found,
        [
            ("evidence-receipt", "rcpt_00000000000b"),
            ("evidence-missing", "### critic — rejected"),
        ]
    );
}

#[test]
fn fifty_replies_validate_well_within_the_budget_in_a_debug_build() {
    // The figure is measured in release by `cargo bench --bench conference`;
    // this only guards against a quadratic slip.
    let fixture = Fixture::new();
    let sources = fixture.sources();
    let mut transcript = format!("---\nconference_id: {ROUND}\n---\n## Replies\n");
    for index in 0..50 {
        transcript.push_str(&format!(
            "\n### writer {index}\n\n> Evidence: \"grey eyes narrowed\" in {SCENE_PATH} (rcpt_00000000000a)\n"
        ));
    }
    let problems = Validator::new(&sources, &fixture.book).document(&transcript);
    assert!(problems.is_empty(), "{problems:?}");
}
