//! Consolidation's cases: a card, the Story Bible, a promoted fact.

use super::*;
use crate::kb::Decision;

fn workspace() -> (tempfile::TempDir, Workspace) {
    with_kael("eyes: grey\nhair: black\n")
}

/// A manuscript of one card, Kael Maren's, with `fields` in its front matter.
fn with_kael(fields: &str) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let card = dir.path().join("Compendium/Characters/CHAR-kael.md");
    std::fs::create_dir_all(card.parent().unwrap()).unwrap();
    std::fs::write(
        &card,
        format!(
            "---\ntype: character\nname: Kael Maren\naliases: [Kael]\n{fields}---\n\nA warden.\n"
        ),
    )
    .unwrap();
    let workspace = Workspace::load(dir.path());
    (dir, workspace)
}

fn line(key: &str, value: &str) -> String {
    let decision = Decision {
        category: "character".into(),
        key: key.into(),
        value: value.into(),
        source: Some("writer".into()),
        scene: Some("SCN-the-fall".into()),
        created_at: None,
        updated_at: None,
        promoted: false,
    };
    serde_json::to_string(&decision).unwrap() + "\n"
}

fn apply(text: &str, edits: &[&FileEdit]) -> String {
    let mut edits: Vec<&&FileEdit> = edits.iter().collect();
    edits.sort_by_key(|edit| std::cmp::Reverse(edit.range.start));
    let mut out = text.to_owned();
    for edit in edits {
        out.replace_range(edit.range.start..edit.range.end, &edit.new_text);
    }
    out
}

#[test]
fn a_different_eye_colour_and_a_death_are_contradictions_promoted_to_the_card() {
    let (_dir, workspace) = workspace();
    let kb: FilePath = ".control-room/kb/decisions.jsonl".into();
    let text = format!(
        "{}{}{}{}",
        line("Kael", "Kael has green eyes, and black hair."),
        line("Kael Maren", "Kael dies in the storm."),
        line("Tomas", "Kael never raises his voice."),
        line("Iria Vell", "Iria has blue eyes.")
    );
    let found = contradictions(&workspace, &kb, &text, "2026-11-23T00:00:00.000Z");
    assert_eq!(found.len(), 2, "{found:#?}");
    assert_eq!(
        found[0].message,
        "this decision gives Kael Maren green eyes, but the card says grey"
    );
    assert_eq!(
        found[0].range.slice(&text),
        "\"Kael has green eyes, and black hair.\""
    );
    assert_eq!(
        found[1].message,
        "this decision says Kael Maren dies, but the card says alive"
    );
    assert_eq!(found[0].promotion.title, "Promote to card: Kael Maren");

    let card = workspace
        .file("Compendium/Characters/CHAR-kael.md")
        .unwrap();
    fn on<'f>(fix: &'f Fix, path: &str) -> Vec<&'f FileEdit> {
        fix.edits.iter().filter(|e| &*e.path == path).collect()
    }
    let eyes = apply(&card.text, &on(&found[0].promotion, &card.path));
    assert!(eyes.contains("eyes: green\nhair: black\n"), "{eyes}");
    let dead = apply(&card.text, &on(&found[1].promotion, &card.path));
    assert!(
        dead.contains("hair: black\nstatus: dead\ndied_in: SCN-the-fall\n---"),
        "{dead}"
    );
    let kb_text = apply(&text, &on(&found[0].promotion, &kb));
    let first: Decision = serde_json::from_str(kb_text.lines().next().unwrap()).unwrap();
    assert!(first.promoted);
    assert_eq!(
        first.updated_at.as_deref(),
        Some("2026-11-23T00:00:00.000Z")
    );
    // Once promoted (and the card changed), nothing is left to say.
    assert!(contradictions(&workspace, &kb, kb_text.lines().next().unwrap(), "x").is_empty());
}

fn decision(category: &str, key: &str, value: &str, promoted: bool) -> String {
    let decision = Decision {
        category: category.into(),
        key: key.into(),
        value: value.into(),
        source: Some("run_1".into()),
        scene: None,
        created_at: None,
        updated_at: None,
        promoted,
    };
    serde_json::to_string(&decision).unwrap() + "\n"
}

/// `text` with `fix`'s edits in `path` applied.
fn fixed(text: &str, fix: &Fix, path: &str) -> String {
    apply(
        text,
        &fix.edits
            .iter()
            .filter(|edit| &*edit.path == path)
            .collect::<Vec<_>>(),
    )
}

#[test]
fn a_decision_against_the_story_bible_names_the_template_and_writes_into_it() {
    let workspace = Workspace::load(&crate::index::test_support::example_root());
    let kb: FilePath = ".control-room/kb/decisions.jsonl".into();
    let text = [
        decision(
            "structure",
            "protagonist",
            "Iria Vell is the protagonist.",
            false,
        ),
        decision(
            "structure",
            "Catalyst",
            "The Catalyst is SCN-the-arrival.",
            false,
        ),
        decision(
            "world",
            "The salt road runs nine waystones",
            "It runs seven waystones.",
            false,
        ),
        // Agreeing with the Bible, or saying what it cannot check: silent.
        decision(
            "structure",
            "protagonist",
            "Kael Maren stays the protagonist.",
            false,
        ),
        decision(
            "world",
            "lamps",
            "The fortress has nine lamps; two waystones stand by it.",
            false,
        ),
        decision(
            "structure",
            "Midpoint",
            "The Midpoint and the Finale both need rain.",
            false,
        ),
    ]
    .concat();
    let found = contradictions(&workspace, &kb, &text, "now");
    let messages: Vec<&str> = found.iter().map(|c| c.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "this decision puts the Catalyst in SCN-the-arrival, but the beat sheet puts it in SCN-the-gate",
            "this decision counts seven of waystone, but the world rule says nine",
        ],
        "{found:#?}"
    );
    // The protagonist line was superseded by the agreeing one (same key).
    assert!(found.iter().all(|c| c.code == CONTRADICTS_BIBLE));
    let sheet = workspace.file("Story/Bible/beat-sheet.md").unwrap();
    assert_eq!(found[0].other, sheet.path);
    assert_eq!(found[0].other_range.slice(&sheet.text), "SCN-the-gate");
    assert_eq!(found[0].promotion.title, "Write it into the Story Bible");
    assert!(
        fixed(&sheet.text, &found[0].promotion, &sheet.path)
            .contains("Iria opens the gate against orders: SCN-the-arrival.")
    );
    let rules = workspace.file("Story/Bible/world-rules.md").unwrap();
    // The rule's count is in its bold lead: the rule says seven now.
    assert!(
        fixed(&rules.text, &found[1].promotion, &rules.path)
            .contains("**The salt road runs seven waystones.** Each"),
    );
    // Keeping the Bible withdraws the decision's line, and only it.
    assert_eq!(
        found[1].withdrawal.title,
        "Keep the Story Bible: withdraw this decision"
    );
    let kept = fixed(&text, &found[1].withdrawal, &kb);
    assert_eq!(kept.lines().count(), text.lines().count() - 1);
    assert!(!kept.contains("seven waystones"));

    // Alone, the protagonist decision contradicts the Bible's `character:`.
    let alone = decision(
        "structure",
        "protagonist",
        "Iria Vell is the protagonist.",
        false,
    );
    let found = contradictions(&workspace, &kb, &alone, "now");
    assert_eq!(
        found[0].message,
        "this decision makes Iria Vell the protagonist, but the Story Bible's protagonist is Kael Maren"
    );
    let bible = workspace.file("Story/Bible/protagonist.md").unwrap();
    assert!(
        fixed(&bible.text, &found[0].promotion, &bible.path).contains("character: Iria Vell\n")
    );
}

#[test]
fn a_decision_against_a_promoted_fact_points_at_it_and_each_side_can_win() {
    let (_dir, workspace) = workspace();
    let kb: FilePath = ".control-room/kb/decisions.jsonl".into();
    let text = [
        // Promoted facts: one about a character's hair, one about a ledger.
        decision(
            "continuity",
            "Kael Maren",
            "Kael wears his black hair short.",
            true,
        ),
        decision(
            "world",
            "the ledger",
            "The ledger is kept in the vault.",
            true,
        ),
        decision(
            "character",
            "Kael",
            "Kael's hair is red from the salt.",
            false,
        ),
        decision(
            "world",
            "the ledger",
            "The ledger burned in the fire.",
            false,
        ),
    ]
    .concat();
    let found = contradictions(&workspace, &kb, &text, "now");
    let facts: Vec<&Contradiction> = found
        .iter()
        .filter(|c| c.code == CONTRADICTS_FACT)
        .collect();
    assert_eq!(facts.len(), 2, "{found:#?}");
    assert_eq!(
        facts[0].message,
        "this decision gives Kael Maren red hair, but the promoted fact on line 1 says black"
    );
    assert_eq!(facts[0].other, kb);
    assert_eq!(
        facts[0].other_range,
        TextRange::new(0, text.find('\n').unwrap())
    );
    // Adopted: this decision promoted, the fact it contradicts withdrawn.
    assert_eq!(
        facts[0].promotion.title,
        "Promote this decision, withdrawing line 1"
    );
    let adopted = fixed(&text, &facts[0].promotion, &kb);
    assert_eq!(adopted.lines().count(), 3);
    let red: Decision = serde_json::from_str(adopted.lines().nth(1).unwrap()).unwrap();
    assert!(red.promoted && red.value.contains("red"));
    assert!(
        contradictions(&workspace, &kb, &adopted, "now")
            .iter()
            .all(|c| !c.message.contains("red hair"))
    );
    // Kept: the decision withdrawn.
    let kept = fixed(&text, &facts[0].withdrawal, &kb);
    assert!(!kept.contains("red from the salt"));
    // The ledger: the same category and key, another value, replacing a
    // promoted fact.
    assert_eq!(
        facts[1].message,
        "this decision replaces the promoted fact on line 2 (world `the ledger`: \"The ledger is kept in the vault.\") with another"
    );
    assert_eq!(
        facts[1].promotion.title,
        "Promote this decision in its place"
    );
    // The card says black hair too: the red is also the card's contradiction.
    assert!(
        found
            .iter()
            .any(|c| c.code == CONTRADICTS_CARD && c.message.contains("red hair"))
    );
}

#[test]
fn a_negated_or_someone_elses_death_is_no_claim_and_an_age_is_read_either_way() {
    let (_dir, workspace) = workspace();
    let kb: FilePath = ".control-room/kb/decisions.jsonl".into();
    let card = |key: &str, value: &str| {
        let line = line(key, value);
        contradictions(&workspace, &kb, &line, "now")
            .into_iter()
            .map(|c| c.message)
            .collect::<Vec<_>>()
    };
    assert!(card("Kael", "Kael is not dead, only lost.").is_empty());
    assert!(card("Kael", "Kael's mother died at sea.").is_empty());
    assert!(card("Kael", "Kael never drowned.").is_empty());
    assert_eq!(
        card("Kael", "Kael dies at the gate."),
        ["this decision says Kael Maren dies, but the card says alive"]
    );
    // The card gives no age: nothing to contradict, but the claim is read.
    let said = |value: &str| {
        let decision: Decision = serde_json::from_str(&line("Kael", value)).unwrap();
        claims::of_decision(&workspace, &decision)
            .into_iter()
            .map(|claim| claim.value)
            .collect::<Vec<_>>()
    };
    assert_eq!(said("Kael is aged 40."), [claims::Value::Years(40)]);
    assert_eq!(
        said("Kael is forty years old"),
        Vec::new(),
        "forty is past twenty"
    );
    assert_eq!(said("Kael is 40 years old."), [claims::Value::Years(40)]);
}

#[test]
fn a_promoted_fact_is_found_past_a_superseded_line_and_adopting_one_withdraws_its_history() {
    let (_dir, workspace) = workspace();
    let kb: FilePath = ".control-room/kb/decisions.jsonl".into();
    // The vault: promoted, then two unpromoted lines after it.
    let text = [
        decision(
            "world",
            "the ledger",
            "The ledger is kept in the vault.",
            true,
        ),
        decision("world", "the ledger", "The ledger is lost.", false),
        decision("world", "the ledger", "The ledger burned.", false),
    ]
    .concat();
    let found = contradictions(&workspace, &kb, &text, "now");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0]
            .message
            .contains("replaces the promoted fact on line 1")
    );
    // The value is underlined even when the key says the same words.
    let text = [
        decision(
            "world",
            "the ledger",
            "The ledger is kept in the vault.",
            true,
        ),
        decision("world", "the ledger", "the ledger", false),
    ]
    .concat();
    let found = contradictions(&workspace, &kb, &text, "now");
    let second = text.find('\n').unwrap() + 1;
    let value = second + text[second..].find("\"value\"").unwrap();
    assert!(found[0].range.start > value, "{found:#?}");
    assert_eq!(found[0].range.slice(&text), "\"the ledger\"");

    // Hair: an old line, the promoted fact that superseded it, then a
    // decision against the fact; adopting it takes both older lines out.
    let text = [
        decision("continuity", "Kael Maren", "Kael has brown hair.", false),
        decision("continuity", "Kael Maren", "Kael has black hair.", true),
        decision("character", "Kael", "Kael's hair is red.", false),
    ]
    .concat();
    let found = contradictions(&workspace, &kb, &text, "now");
    let fact = found
        .iter()
        .find(|c| c.code == CONTRADICTS_FACT)
        .unwrap_or_else(|| panic!("{found:#?}"));
    let adopted = fixed(&text, &fact.promotion, &kb);
    assert_eq!(adopted.lines().count(), 1, "{adopted}");
    assert!(adopted.contains("red") && adopted.contains("\"promoted\":true"));
}

#[test]
fn the_beat_fix_writes_every_scene_of_the_decision_and_promoting_keeps_unknown_fields() {
    let (dir, _) = crate::index::test_support::example_copy();
    let sheet = dir.path().join("Story/Bible/beat-sheet.md");
    let text = std::fs::read_to_string(&sheet).unwrap();
    std::fs::write(
        &sheet,
        text.replace(
            "Iria opens the gate against orders: SCN-the-gate.",
            "Iria opens the gate against orders: SCN-the-gate, SCN-the-saltmaster.",
        ),
    )
    .unwrap();
    let workspace = Workspace::load(dir.path());
    let kb: FilePath = ".control-room/kb/decisions.jsonl".into();
    let mut line = decision(
        "structure",
        "Catalyst",
        "The Catalyst is SCN-the-arrival and SCN-the-fall.",
        false,
    );
    line = line.replacen('{', "{\"confidence\":0.4,", 1);
    let found = contradictions(&workspace, &kb, &line, "now");
    assert_eq!(found.len(), 1, "{found:#?}");
    let sheet = workspace.file("Story/Bible/beat-sheet.md").unwrap();
    let written = fixed(&sheet.text, &found[0].promotion, &sheet.path);
    assert!(
        written.contains("Iria opens the gate against orders: SCN-the-arrival, SCN-the-fall."),
        "{written}"
    );
    let promoted = fixed(&line, &found[0].promotion, &kb);
    assert!(promoted.contains("\"confidence\":0.4"), "{promoted}");
    assert!(promoted.contains("\"promoted\":true"), "{promoted}");
}

#[test]
fn any_other_field_of_the_card_said_plainly_is_compared_as_words() {
    let (_dir, workspace) = with_kael("rank: captain of the wall\nhome: The Salt Fortress\n");
    let kb: FilePath = ".control-room/kb/decisions.jsonl".into();
    let messages = |value: &str| {
        contradictions(&workspace, &kb, &line("Kael", value), "now")
            .into_iter()
            .map(|c| c.message)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        messages("Kael's rank is sergeant."),
        ["this decision gives Kael Maren `rank` sergeant, but the card says captain of the wall"]
    );
    // Agreeing words, a negation, a field named without a value: silent.
    assert!(messages("His rank is captain.").is_empty());
    assert!(messages("His home is the Salt Fortress, still.").is_empty());
    assert!(messages("His home is not the fortress.").is_empty());
    assert!(messages("He talks about his home a lot.").is_empty());
    let found = contradictions(
        &workspace,
        &kb,
        &line("Kael", "Kael's rank is sergeant."),
        "now",
    );
    let file = workspace
        .file("Compendium/Characters/CHAR-kael.md")
        .unwrap();
    let promoted = fixed(&file.text, &found[0].promotion, &file.path);
    assert!(promoted.contains("rank: sergeant\nhome:"), "{promoted}");
}
