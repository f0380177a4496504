//! The Story Bible's reading: headings whatever their form, gaps, world rules' names, beats' scenes, status.
use super::*;
use crate::syntax::{MarkdownParser, front_matter};

fn read(kind: BibleKind, text: &str) -> (Bible, Vec<FieldProblem>) {
    let syntax = MarkdownParser::parse_fresh(text);
    let front = front_matter::parse(text);
    let mut problems = Vec::new();
    let bible = read_bible(kind, text, front.as_ref(), &syntax, &mut problems);
    (bible, problems)
}

#[test]
fn headings_are_matched_whatever_their_numbering_share_or_level() {
    assert_eq!(normalise_heading("3. Set-Up (1–10%)"), "set up");
    assert_eq!(
        normalise_heading("Beat 12: Dark Night of the Soul"),
        "dark night of the soul"
    );
    assert_eq!(normalise_heading("## Fun & Games"), "fun and games");
    let text = "---\nstatus: complete\ncharacter: Kael Maren\n---\n# Kael\n\n## Fatal flaw\nPride.\n\n## The Lie\nHe needs no one.\n\n## Arc\n### Start\nAlone.\n### Midpoint\nShaken.\n### Resolution\nTrusts Iria.\n";
    let (bible, problems) = read(BibleKind::Protagonist, text);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(bible.character.as_ref().unwrap().text, "Kael Maren");
    assert!(bible.gaps().is_empty(), "{:?}", bible.gaps());
    assert!(bible.is_complete());
    assert_eq!(
        bible.section("arc_resolution").unwrap().text,
        "Trusts Iria."
    );
}

#[test]
fn a_placeholder_or_an_absent_part_is_a_gap_and_keeps_the_template_incomplete() {
    let text = "---\nstatus: complete\n---\n## Central Theme\nTBD\n";
    let (bible, _) = read(BibleKind::Theme, text);
    let gaps = bible.gaps();
    assert_eq!(gaps.len(), 2);
    assert!(matches!(gaps[0].1, Gap::Empty { .. }));
    assert_eq!(
        gaps[1],
        (
            BibleKind::Theme.part("theme_statement").unwrap(),
            Gap::Absent
        )
    );
    assert!(!bible.is_complete());
}

#[test]
fn world_rules_need_three_and_are_named_by_their_bold_lead() {
    let text = "## Fundamental Rules\n- **Salt binds oaths.** A promise over salt holds.\n- **The tide is law.** Nobody crosses at flood.\n- TBD\n";
    let (bible, _) = read(BibleKind::WorldRules, text);
    assert!(matches!(bible.gaps()[0].1, Gap::TooFew { have: 2, .. }));
    let names: Vec<String> = bible.rule_names(text).map(|name| name.text).collect();
    assert_eq!(names, ["Salt binds oaths", "The tide is law"]);
    let first = bible.rule_names(text).next().unwrap();
    assert_eq!(first.range.slice(text), "Salt binds oaths");
}

#[test]
fn beats_are_found_by_name_or_number_and_link_their_scenes() {
    let text = "## 1. Opening Image (1%)\nThe flats at dawn: SCN-the-arrival.\n\n## Beat 2\nSCN-the-gate, and SCN-the-vigil.\n\n## Catalyst\n…\n";
    let (bible, problems) = read(BibleKind::BeatSheet, text);
    assert!(problems.is_empty());
    let opening = bible.section("beat_1").unwrap();
    assert_eq!(opening.scene_ids[0].text, "SCN-the-arrival");
    assert_eq!(opening.scene_ids[0].range.slice(text), "SCN-the-arrival");
    let second: Vec<&str> = bible
        .section("beat_2")
        .unwrap()
        .scene_ids
        .iter()
        .map(|id| id.text.as_str())
        .collect();
    assert_eq!(second, ["SCN-the-gate", "SCN-the-vigil"]);
    let gaps = bible.gaps();
    assert_eq!(
        gaps.len(),
        13,
        "catalyst is a placeholder, twelve beats are absent"
    );
}

#[test]
fn a_status_that_is_not_one_is_a_problem_at_it() {
    let (bible, problems) = read(BibleKind::Theme, "---\nstatus: finished-ish\n---\n");
    assert_eq!(bible.status(), BibleStatus::NotStarted);
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0]
            .message
            .contains("not_started, in_progress, draft, complete")
    );
}
