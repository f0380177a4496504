//! The story's health (`health/`), through the real binary: the report of
//! `control-room health` on a manuscript with one of each problem planted
//! (`tests/continuity/health`), the same over LSP (`controlRoom.health`,
//! its diagnostics published and following an edit, the mark that makes
//! one intentional), and the false-alarm budget on Pride and Prejudice with
//! a beat sheet and motifs written for it (`tests/health/`).

use crate::support;
use crate::support::lsp_client;

use std::collections::BTreeMap;
use std::path::Path;

use lsp_client::{Client, copy_dir, copy_of, uri};
use serde_json::{Value, json};
use support::{control_room, health_check as check, health_report as report, output_text};

/// The four codes the story's health reports.
const HEALTH_CODES: [&str; 4] = [
    "pacing-plateau",
    "beat-progress",
    "cast-function",
    "motif-gap",
];

fn places(check: &Value) -> Vec<String> {
    check["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["at"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn the_health_report_scores_each_check_and_points_at_what_it_found() {
    let (_dir, root) = copy_of("tests/continuity/health");
    let report = report(&root);
    assert_eq!(report["scenes"], 8);
    let ids: Vec<(&str, &str)> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|check| {
            (
                check["id"].as_str().unwrap(),
                check["method"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            ("A1", "deterministic"),
            ("A2", "deterministic"),
            ("A3", "model"),
            ("B1", "model"),
            ("B2", "deterministic"),
            ("C1", "deterministic"),
            ("C2", "model"),
        ]
    );
    let a1 = check(&report, "A1");
    // Four level scenes of eight.
    assert_eq!(a1["score"], 50);
    assert_eq!(places(&a1), ["Story/Scenes/SCN-the-watch.md:6"]);
    let a2 = check(&report, "A2");
    assert_eq!(a2["score"], 67, "{a2}");
    assert_eq!(places(&a2), ["Story/Bible/beat-sheet.md:40"]);
    // A draft beat sheet: information, as `story-bible` says of a draft.
    assert_eq!(a2["findings"][0]["severity"], "information");
    let b2 = check(&report, "B2");
    assert_eq!(
        places(&b2),
        [
            "Compendium/Characters/CHAR-kael-maren.md:9",
            "Compendium/Characters/CHAR-wren.md:9"
        ]
    );
    let c1 = check(&report, "C1");
    assert_eq!(
        places(&c1),
        ["Story/Bible/theme.md:19", "Story/Bible/theme.md:20"]
    );
    for model in ["A3", "B1", "C2"] {
        let check = check(&report, model);
        assert_eq!(check["score"], Value::Null);
        assert!(check["summary"].as_str().unwrap().contains("needs a model"));
    }
    // The mean of the four judged: (50 + 67 + 50 + 33) / 4.
    assert_eq!(report["score"], 50);
    assert_eq!(report["pace"].as_array().unwrap().len(), 8);

    // The writer's report: every finding with what to do.
    let output = control_room(&root, &["health"]);
    let text = output_text(&output);
    assert!(
        text.starts_with(
            "The story's health: 50 of 100, from the 4 of 7 checks that judged (8 scenes"
        ),
        "{text}"
    );
    assert!(
        text.contains("→ Give Wren a part in a scene, or retire the card."),
        "{text}"
    );

    // A setting moves a threshold: a plateau of five scenes finds none here.
    std::fs::write(
        root.join("control-room.toml"),
        "[diagnostics.severity]\necho = \"off\"\nspelling = \"off\"\n[health]\nplateau_scenes = 5\n",
    )
    .unwrap();
    assert_eq!(
        places(&check(&self::report(&root), "A1")),
        Vec::<String>::new()
    );
}

#[test]
fn a_partial_draft_judges_the_beats_before_its_first_unwritten_scene_against_an_estimate_of_the_book()
 {
    let (_dir, root) = copy_of("tests/continuity/health");
    let outline = root.join("Story/SCN-outline.md");
    let text = std::fs::read_to_string(&outline).unwrap();
    // An unwritten scene at the end: every beat stands before it.
    std::fs::write(&outline, format!("{text}- SCN-the-morrow: the day after\n")).unwrap();
    let report = report(&root);
    let a2 = check(&report, "A2");
    assert!(a2["score"].is_number(), "{a2}");
    assert!(
        a2["summary"].as_str().unwrap().ends_with(
            "against an estimate of the whole book: 8 of 9 outline scenes written, the rest counted at their mean length"
        ),
        "{a2}"
    );
    // The others judge what is written, and say so.
    assert!(
        check(&report, "B2")["summary"]
            .as_str()
            .unwrap()
            .ends_with("(of what is written: 1 outline scene is not yet)"),
        "{report}"
    );
    // An unwritten scene first: the words before every beat are unknown.
    let first = text.replacen("- SCN-", "- SCN-the-eve: the night before\n- SCN-", 1);
    std::fs::write(&outline, first).unwrap();
    let a2 = check(&self::report(&root), "A2");
    assert_eq!(a2["score"], Value::Null, "{a2}");
    assert_eq!(
        a2["summary"],
        "not judged yet: 8 of 9 outline scenes are written, and no beat names a scene before the first unwritten one",
        "{a2}"
    );
}

#[test]
fn the_editor_shows_the_health_and_its_diagnostics_follow_an_edit() {
    let (_dir, root) = copy_of("tests/continuity/health");
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({"window": {"workDoneProgress": true}}));
    client.wait_for_index();
    let watch = root.join("Story/Scenes/SCN-the-watch.md");
    let has = |code: &'static str| {
        move |diagnostics: &[Value]| diagnostics.iter().any(|d| d["code"] == code)
    };
    client.diagnostics_for(&uri(&watch), has("pacing-plateau"));

    let answer = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.health", "arguments": [{}]}),
    );
    assert_eq!(answer["score"], 50, "{answer}");
    assert!(
        answer["text"]
            .as_str()
            .unwrap()
            .contains("A1 Pacing plateaus (from the text): 50"),
        "{answer}"
    );

    // The mark that makes it intentional is offered on the card's heading.
    let wren = root.join("Compendium/Characters/CHAR-wren.md");
    let fixes = client.quick_fixes(&uri(&wren), &json!({"line": 8, "character": 3}));
    assert!(
        fixes
            .iter()
            .any(|fix| fix["title"] == "Mark as intentional (allow cast-function here)"),
        "{fixes:?}"
    );

    // The fourth scene takes up dialogue and questions: the plateau breaks.
    let road = root.join("Story/Scenes/SCN-the-road.md");
    let text = client.open(&road, 1);
    let talk = "\n“Who goes there?” Iria called down. “Who is on my road?”\n\n“Only the wind!” the guard said. “Only the wind, and the dust!”\n\n“Are you sure?” she asked. “Look again!”\n\n“I am sure!” he said.\n";
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&road), "version": 2},
               "contentChanges": [{"text": format!("{text}{}", talk.repeat(3))}]}),
    );
    client.diagnostics_for(&uri(&watch), |diagnostics| {
        !diagnostics.iter().any(|d| d["code"] == "pacing-plateau")
    });
    client.shutdown();
}

#[test]
fn pride_and_prejudice_stays_within_the_health_false_alarm_budget() {
    // The novel as it is, with a beat sheet and a theme with motifs written
    // for it: every health diagnostic is counted against the budget.
    let (_dir, root) = copy_of("tests/corpora/pride-and-prejudice");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/health/pride-and-prejudice"),
        &root,
    );
    // Grammar is not a health check, and harper would read the whole novel.
    crate::support::grammar_off(&root);
    let output = control_room(&root, &["check", "--format", "json"]);
    let checked: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", output_text(&output)));
    let mut found: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for diagnostic in checked["diagnostics"].as_array().unwrap() {
        let code = diagnostic["code"].as_str().unwrap();
        if let Some(code) = HEALTH_CODES.iter().find(|known| **known == code) {
            found.entry(code).or_default().push(format!(
                "{}: {}",
                diagnostic["path"].as_str().unwrap(),
                diagnostic["message"].as_str().unwrap()
            ));
        }
    }
    println!("health diagnostics on Pride and Prejudice: {found:#?}");
    // The budget is the findings read and kept, each for its reason: every
    // one raised must be among them. A2 compares Austen's structure with
    // the 15-beat sheet written for the novel, and she opens fast.
    let kept: &[(&str, &str, &str)] = &[
        (
            "beat-progress",
            "Catalyst lands at",
            "the Meryton assembly that sets the story going is chapter 3, not a tenth in",
        ),
        (
            "beat-progress",
            "Debate lands at",
            "the talk of Bingley and Darcy after the ball follows at once",
        ),
        (
            "beat-progress",
            "Break into Two lands at",
            "Jane's stay at Netherfield, chapters 7 and 8, begins the second act early",
        ),
        (
            "beat-progress",
            "B Story lands at",
            "Wickham arrives in chapter 15, a little before a fifth of the book",
        ),
        (
            "beat-progress",
            "Fun and Games lands at",
            "its scenes start with Netherfield, as early as the Break into Two",
        ),
        (
            "beat-progress",
            "All Is Lost lands at",
            "Lydia's elopement is learned in chapter 46, before three quarters",
        ),
        (
            "cast-function",
            "no scene mentions Mrs. Phillips",
            "the Standard Ebooks text spells her Philips; the card keeps the other spelling",
        ),
    ];
    for (code, messages) in &found {
        for message in messages {
            assert!(
                kept.iter()
                    .any(|(kept_code, said, _)| kept_code == code && message.contains(said)),
                "{code} on Pride and Prejudice is no finding read and kept: {message}"
            );
        }
    }
    // Every deterministic check judged the novel: a budget met by a check
    // that stopped judging would prove nothing.
    let report = report(&root);
    for id in ["A1", "A2", "B2", "C1"] {
        assert!(
            check(&report, id)["score"].is_u64(),
            "{id} did not judge: {}",
            check(&report, id)
        );
    }
    let a2 = check(&report, "A2");
    assert!(
        a2["summary"]
            .as_str()
            .unwrap()
            .starts_with("9 of 15 placed beats"),
        "{a2}"
    );
    // The beats the novel is known for land where the sheet expects them.
    let places = places(&a2);
    for beat in ["Midpoint", "Break into Three", "Final Image"] {
        assert!(
            !a2["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|finding| finding["message"].as_str().unwrap().starts_with(beat)),
            "{beat} is off: {places:?}"
        );
    }
    // Its motifs (letters, dancing, pride, marriage, the militia) recur.
    assert_eq!(check(&report, "C1")["score"], 100);
}

#[test]
fn an_unwritten_scene_between_level_scenes_breaks_the_plateau() {
    let (_dir, root) = copy_of("tests/continuity/health");
    let outline = root.join("Story/SCN-outline.md");
    let text = std::fs::read_to_string(&outline).unwrap();
    let text = text.replacen(
        "- SCN-the-bell:",
        "- SCN-the-storm: the night of the storm\n- SCN-the-bell:",
        1,
    );
    std::fs::write(&outline, text).unwrap();
    // Two level scenes, a scene not written, two more: not four in a row.
    assert_eq!(places(&check(&report(&root), "A1")), Vec::<String>::new());
}
