//! The Foreman's actions: each one's good call, schema violation and mode violation, and what the executors change.

use serde_json::json;

use super::effect::Effect;
use super::execute::{Context, execute};
use super::*;
use crate::index::Workspace;
use crate::storage::Disk;

fn action(xml: &str) -> Action {
    let mut parsed = crate::llm::protocol::parse(&format!("<message>ok</message>{xml}"));
    assert_eq!(parsed.actions.len(), 1, "{xml}: {:?}", parsed.warnings);
    parsed.actions.remove(0)
}

/// Each action: a good call, one that breaks its schema, a mode that allows
/// it and one that does not.
const CASES: &[(&str, &str, &str, Mode, Mode)] = &[
    (
        "<action type=\"query_notebook\"><notebook_id>notes</notebook_id><query>the song</query></action>",
        "<action type=\"query_notebook\"><query>the song</query></action>",
        "notebook_id",
        Mode::Editor,
        Mode::Editor,
    ),
    (
        "<action type=\"save_decision\"><category>world</category><key>tide</key><value>Spring tides flood the flats.</value></action>",
        "<action type=\"save_decision\"><category>mood</category><key>tide</key><value>High.</value></action>",
        "/category",
        Mode::Director,
        Mode::Director,
    ),
    (
        "<action type=\"write_template\"><template>theme</template><content><central_theme>Pride.</central_theme></content></action>",
        "<action type=\"write_template\"><template>villain</template><content><flaw>x</flaw></content></action>",
        "/template",
        Mode::Architect,
        Mode::Director,
    ),
    (
        "<action type=\"update_status\"><template>theme</template><status>draft</status><missing>[\"theme_statement\"]</missing></action>",
        "<action type=\"update_status\"><template>theme</template><status>finished</status></action>",
        "/status",
        Mode::VoiceCalibration,
        Mode::Editor,
    ),
    (
        "<action type=\"start_tournament\"><passage>SCN-the-gate</passage><contestants>sparse, lyrical, close</contestants></action>",
        "<action type=\"start_tournament\"><passage>SCN-the-gate</passage><contestants>sparse</contestants></action>",
        "/contestants",
        Mode::VoiceCalibration,
        Mode::Architect,
    ),
    (
        "<action type=\"select_winner\"><tournament_id>T-1</tournament_id><contestant>sparse</contestant></action>",
        "<action type=\"select_winner\"><contestant>sparse</contestant></action>",
        "tournament_id",
        Mode::VoiceCalibration,
        Mode::Director,
    ),
    (
        "<action type=\"generate_bundle\"><voice_summary>Close third, short lines.</voice_summary></action>",
        "<action type=\"generate_bundle\"><voice>x</voice></action>",
        "voice",
        Mode::VoiceCalibration,
        Mode::Editor,
    ),
    (
        "<action type=\"generate_scaffold\"><scene_id>SCN-the-gate</scene_id><chapter>1</chapter><scene>2</scene></action>",
        "<action type=\"generate_scaffold\"><scene_id>SCN-the-gate</scene_id><chapter>first</chapter></action>",
        "/chapter",
        Mode::Director,
        Mode::Architect,
    ),
    (
        "<action type=\"write_scene\"><scene_id>SCN-the-reckoning</scene_id></action>",
        "<action type=\"write_scene\"><scene_id>../../etc/passwd</scene_id></action>",
        "/scene_id",
        Mode::Director,
        Mode::Editor,
    ),
    (
        "<action type=\"run_health_check\"><scope>SCN-the-gate</scope><checks>anti-pattern, echo</checks></action>",
        "<action type=\"run_health_check\"><scope>SCN-the-gate</scope><depth>9</depth></action>",
        "depth",
        Mode::Editor,
        Mode::Architect,
    ),
    (
        "<action type=\"apply_edit\"><file>Story/Scenes/SCN-the-gate.md</file><find>a</find><replace>b</replace></action>",
        "<action type=\"apply_edit\"><file>Story/Scenes/SCN-the-gate.md</file><replace>b</replace></action>",
        "find",
        Mode::Editor,
        Mode::Director,
    ),
    (
        "<action type=\"advance_mode\"><to>voice_calibration</to><because>I want to hear voices first.</because></action>",
        "<action type=\"advance_mode\"><to>drafting</to></action>",
        "/to",
        Mode::Architect,
        Mode::Architect,
    ),
];

#[test]
fn every_action_takes_a_good_call_and_refuses_a_schema_violation_and_a_mode_that_does_not_allow_it()
{
    let mut seen = Vec::new();
    for (good, bad, broken, allowed, forbidden) in CASES {
        let valid =
            validate(&action(good), *allowed).unwrap_or_else(|refusal| panic!("{good}: {refusal}"));
        seen.push(valid.kind);
        match validate(&action(bad), *allowed) {
            Err(refusal @ Refusal::Schema { .. }) => {
                let said = refusal.to_string();
                assert!(said.contains(broken), "{bad}: {said}");
                assert!(
                    said.starts_with(&format!(
                        "the {} action's parameters break its schema",
                        valid.kind.id()
                    )),
                    "{said}"
                );
            }
            other => panic!("{bad}: {other:?}"),
        }
        if allowed != forbidden {
            match validate(&action(good), *forbidden) {
                Err(refusal @ Refusal::Mode { .. }) => {
                    let said = refusal.to_string();
                    assert!(
                        said.contains(&format!("not allowed in {} mode", forbidden.label())),
                        "{said}"
                    );
                }
                other => panic!("{good} in {forbidden:?}: {other:?}"),
            }
        }
    }
    assert_eq!(
        seen,
        ActionKind::ALL,
        "every action has its case, in the table's order"
    );
    // query_notebook and save_decision are allowed in every mode.
    for mode in Mode::ALL {
        assert!(
            ActionKind::QueryNotebook.spec().allows(mode)
                && ActionKind::SaveDecision.spec().allows(mode)
        );
    }
    let unknown = validate(
        &action("<action type=\"delete_everything\"></action>"),
        Mode::Editor,
    );
    assert!(matches!(unknown, Err(Refusal::Unknown { .. })));
}

#[test]
fn parameters_are_read_into_the_schemas_shape() {
    let valid = validate(&action(CASES[7].0), Mode::Director).unwrap();
    assert_eq!(valid.params["chapter"], json!(1));
    let valid = validate(&action(CASES[4].0), Mode::VoiceCalibration).unwrap();
    assert_eq!(
        valid.params["contestants"],
        json!(["sparse", "lyrical", "close"])
    );
    let rules = action(
        "<action type=\"write_template\"><template>world_rules</template><content><fundamental_rules>\n- Salt binds.\n- The tide is law.\n- The gate shuts at dusk.\n</fundamental_rules></content></action>",
    );
    let valid = validate(&rules, Mode::Architect).unwrap();
    assert_eq!(
        valid.params["content"]["fundamental_rules"],
        json!(["Salt binds.", "The tide is law.", "The gate shuts at dusk."])
    );
    let json_content = action(
        "<action type=\"write_template\"><template>theme</template><content>{\"central_theme\": \"Pride.\"}</content></action>",
    );
    assert_eq!(
        validate(&json_content, Mode::Architect).unwrap().params["content"]["central_theme"],
        "Pride."
    );
}

fn example() -> (tempfile::TempDir, Workspace) {
    crate::index::test_support::example_copy()
}

fn run(
    workspace: &Workspace,
    xml: &str,
    mode: Mode,
) -> Result<super::effect::Outcome, super::effect::ActionError> {
    let valid = validate(&action(xml), mode).unwrap();
    execute(
        &valid,
        &Context {
            workspace,
            root: workspace.root(),
            disk: &Disk::default(),
            at: "2026-11-26T18:00:00Z",
            source: "the Foreman",
        },
    )
}

fn changed(outcome: &super::effect::Outcome) -> &super::effect::Change {
    match &outcome.effect {
        Effect::Changes(changes) => &changes[0],
        other => panic!("{other:?}"),
    }
}

#[test]
fn write_template_replaces_the_parts_it_names_and_keeps_the_rest_and_refuses_placeholders() {
    let (_dir, workspace) = example();
    let outcome = run(
        &workspace,
        "<action type=\"write_template\"><template>theme</template><content><theme_statement>Pride guards nothing.</theme_statement></content></action>",
        Mode::Architect,
    )
    .unwrap();
    let change = changed(&outcome);
    assert_eq!(&*change.path, "Story/Bible/theme.md");
    assert!(
        change
            .after
            .contains("## Theme Statement\n\nPride guards nothing.\n"),
        "{}",
        change.after
    );
    assert!(
        change
            .after
            .contains("Duty and the pride that hides inside it."),
        "the other part stays"
    );
    // The writer's own statement is not lost: kept beneath, and said so.
    assert!(
        change.after.contains("Pride guards nothing.\n\n<!-- The Foreman replaced this part on 2026-11-26T18:00:00Z; your text was:\n\nWhat we guard alone we lose"),
        "{}",
        change.after
    );
    assert!(
        outcome
            .summary
            .contains("your earlier text of theme_statement is kept beneath the new, in a comment"),
        "{}",
        outcome.summary
    );
    // Written again with the same words, nothing more is kept.
    let file = crate::index::SourceFile::parse(
        "Story/Bible/theme.md".into(),
        change.after.clone().into(),
        &workspace.config().paths,
    );
    let bible = file.bible().expect("still a template");
    assert!(bible.gaps().is_empty(), "{:?}", bible.gaps());

    let refused = run(
        &workspace,
        "<action type=\"write_template\"><template>beat_sheet</template><content><catalyst>TBD</catalyst></content></action>",
        Mode::Architect,
    )
    .unwrap_err();
    assert!(
        refused.to_string().contains("beat_4 is a placeholder"),
        "{refused}"
    );
}

#[test]
fn a_new_template_is_written_whole_and_cannot_be_complete_while_it_misses_a_part() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::load(dir.path());
    let refused = run(
        &workspace,
        "<action type=\"write_template\"><template>theme</template><status>complete</status><content><central_theme>Pride.</central_theme></content></action>",
        Mode::Architect,
    )
    .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("cannot be complete: it misses theme_statement"),
        "{refused}"
    );
    let outcome = run(
        &workspace,
        "<action type=\"write_template\"><template>theme</template><content><central_theme>Pride.</central_theme><theme_statement>Pride costs what it guards.</theme_statement></content><status>complete</status></action>",
        Mode::Architect,
    )
    .unwrap();
    let change = changed(&outcome);
    assert_eq!(&*change.path, "Story/Bible/theme.md");
    assert!(change.before.is_none());
    let file = crate::index::SourceFile::parse(
        change.path.clone(),
        change.after.as_str().into(),
        &workspace.config().paths,
    );
    assert!(file.bible().unwrap().is_complete(), "{}", change.after);
}

#[test]
fn update_status_sets_the_front_matter_and_apply_edit_replaces_one_quoted_passage() {
    let (_dir, workspace) = example();
    let outcome = run(&workspace, CASES[3].0, Mode::Architect).unwrap();
    assert!(changed(&outcome).after.contains("status: draft\n"));

    let gate = workspace.file("Story/Scenes/SCN-the-gate.md").unwrap();
    let sentence = gate
        .text
        .lines()
        .rev()
        .find(|line| line.len() > 40)
        .unwrap()
        .to_owned();
    let xml = format!(
        "<action type=\"apply_edit\"><file>Story/Scenes/SCN-the-gate.md</file><find>{sentence}</find><replace>The gate held.</replace></action>"
    );
    let outcome = run(&workspace, &xml, Mode::Editor).unwrap();
    let change = changed(&outcome);
    assert_eq!(change.after, gate.text.replace(&sentence, "The gate held."));
    assert_eq!(change.before.as_deref(), Some(&*gate.text));
    let missing = run(
        &workspace,
        "<action type=\"apply_edit\"><file>Story/Scenes/SCN-the-gate.md</file><find>words nobody wrote</find><replace>x</replace></action>",
        Mode::Editor,
    )
    .unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("not in Story/Scenes/SCN-the-gate.md as it is now"),
        "{missing}"
    );
    let outside = run(
        &workspace,
        "<action type=\"apply_edit\"><file>../secret.md</file><find>a</find><replace>b</replace></action>",
        Mode::Editor,
    )
    .unwrap_err();
    assert!(
        outside.to_string().contains("apply_edit: `../secret.md`"),
        "{outside}"
    );
}

#[test]
fn a_scaffold_is_built_beside_the_scene_from_the_outline_the_cast_and_the_beat_sheet() {
    let (_dir, workspace) = example();
    let outcome = run(&workspace, CASES[7].0, Mode::Director).unwrap();
    let change = changed(&outcome);
    assert_eq!(&*change.path, "Story/Scenes/SCN-the-gate.scaffold.md");
    let text = &change.after;
    assert!(
        text.contains("## Beat\n\nIria lets him in against orders"),
        "{text}"
    );
    assert!(text.contains("Beat sheet: Catalyst"), "{text}");
    assert!(
        text.contains("- Iria Vell (point of view): alive. Keeper of the great gate"),
        "{text}"
    );
    assert!(
        text.contains("## Callbacks\n\n- SCN-the-arrival (Iria Vell, Kael Maren): Kael reaches the Salt Fortress"),
        "{text}"
    );
    assert!(text.contains("- Next, SCN-the-saltmaster:"), "{text}");
    let file = crate::index::SourceFile::parse(
        change.path.clone(),
        text.as_str().into(),
        &workspace.config().paths,
    );
    assert!(file.scene().is_none(), "a scaffold is not a scene");
}

#[test]
fn questions_checks_decisions_and_drafts_come_back_as_answers_a_saved_decision_and_a_run() {
    let (dir, _) = example();
    std::fs::create_dir_all(dir.path().join("Notes")).unwrap();
    std::fs::write(
        dir.path().join("Notes/songs.md"),
        "# Songs\n\nThe saltmaster's song has no words, only a tune hummed low.\n\nOther notes.\n",
    )
    .unwrap();
    let workspace = Workspace::load(dir.path());
    let outcome = run(&workspace, "<action type=\"query_notebook\"><notebook_id>notes</notebook_id><query>saltmaster song</query></action>", Mode::Architect).unwrap();
    let Effect::Answer(answer) = &outcome.effect else {
        panic!()
    };
    assert!(
        answer.contains("Notes/songs.md:3: The saltmaster's song has no words"),
        "{answer}"
    );

    let outcome = run(&workspace, CASES[9].0, Mode::Editor).unwrap();
    let Effect::Answer(answer) = &outcome.effect else {
        panic!()
    };
    assert!(answer.contains("findings"), "{answer}");
    // Over the whole manuscript, the story's health answers too.
    let outcome = run(
        &workspace,
        "<action type=\"run_health_check\"><scope>manuscript</scope></action>",
        Mode::Editor,
    )
    .unwrap();
    let Effect::Answer(answer) = &outcome.effect else {
        panic!()
    };
    assert!(
        answer.contains("the story's health: ")
            && answer.contains("A1 ")
            && answer.contains("C2 not run"),
        "{answer}"
    );

    let outcome = run(&workspace, CASES[1].0, Mode::Editor).unwrap();
    assert!(matches!(outcome.effect, Effect::Saved(_)));
    let saved = std::fs::read_to_string(dir.path().join(crate::kb::KB_FILE)).unwrap();
    assert!(saved.contains("\"source\":\"the Foreman\""), "{saved}");

    let outcome = run(&workspace, CASES[8].0, Mode::Director).unwrap();
    assert_eq!(
        outcome.effect,
        Effect::Run {
            recipe: "creative_draft_scene".into(),
            args: json!({"scene_id": "SCN-the-reckoning"})
                .as_object()
                .unwrap()
                .clone()
        }
    );
}

#[test]
fn a_notebook_outside_the_notes_is_refused_and_nothing_is_read() {
    let (_dir, workspace) = example();
    for notebook in ["../Story", "/etc", "a/../../Compendium"] {
        let xml = format!(
            "<action type=\"query_notebook\"><notebook_id>{notebook}</notebook_id><query>Kael</query></action>"
        );
        let refused = run(&workspace, &xml, Mode::Architect).unwrap_err();
        assert!(
            refused
                .to_string()
                .starts_with(&format!("notebook `{}`:", notebook)),
            "{refused}"
        );
    }
}

#[test]
fn the_voice_actions_start_a_tournament_pick_its_winner_and_write_the_bundle() {
    let (dir, workspace) = example();
    let outcome = run(&workspace, CASES[4].0, Mode::VoiceCalibration).unwrap();
    let Effect::Tournament(tournament) = &outcome.effect else {
        panic!("{:?}", outcome.effect)
    };
    let labels: Vec<&str> = tournament
        .contestants
        .iter()
        .map(|c| c.label.as_str())
        .collect();
    assert_eq!(labels, ["sparse", "lyrical", "close"]);
    // A scene the outline lacks is refused before anyone drafts.
    let refused = run(
        &workspace,
        "<action type=\"start_tournament\"><passage>SCN-nowhere</passage><contestants>sparse, lyrical</contestants></action>",
        Mode::VoiceCalibration,
    )
    .unwrap_err();
    assert!(
        refused.to_string().contains("not in the outline"),
        "{refused}"
    );

    // No such tournament yet; then its file, and the pick.
    let refused = run(&workspace, CASES[5].0, Mode::VoiceCalibration).unwrap_err();
    assert!(
        refused.to_string().contains("no tournament file"),
        "{refused}"
    );
    let refused = run(&workspace, CASES[6].0, Mode::VoiceCalibration).unwrap_err();
    assert!(
        refused.to_string().contains("no gold standard"),
        "{refused}"
    );
    // Long enough to measure a voice by.
    let workspace = write_tournament(dir.path(), &workspace, tournament, |label| {
        format!(
            "The gate held in the {label} voice. Nobody came. {}",
            "The wind came off the flats and the lamps shook in their brackets. ".repeat(12)
        )
    });
    let xml = format!(
        "<action type=\"select_winner\"><tournament_id>{}</tournament_id><contestant>2</contestant><why>It sings.</why></action>",
        tournament.id
    );
    let outcome = run(&workspace, &xml, Mode::VoiceCalibration).unwrap();
    let gold = changed(&outcome);
    assert_eq!(&*gold.path, "Compendium/Voice/gold-standard.md");
    assert!(
        gold.after.contains("in the lyrical voice"),
        "{}",
        gold.after
    );
    assert!(gold.after.contains("## Why it works\n\nIt sings."));
}

#[test]
fn advance_mode_proposes_a_move_the_gate_allows_and_refuses_one_it_does_not_without_the_writers_reason()
 {
    let (_dir, workspace) = example();
    // The example's Story Bible is complete: the gate out of ARCHITECT is
    // open.
    let open = run(
        &workspace,
        "<action type=\"advance_mode\"><to>voice_calibration</to></action>",
        Mode::Architect,
    )
    .unwrap();
    assert_eq!(
        open.effect,
        Effect::Move(super::effect::ProposedMove {
            from: Mode::Architect,
            to: Mode::VoiceCalibration,
            because: None,
        })
    );
    assert!(
        open.summary.starts_with(
            "proposed moving the project to VOICE_CALIBRATION; it moves when you confirm"
        ),
        "{}",
        open.summary
    );
    // Its voice is not locked: past that gate only with the writer's reason.
    let refused = run(
        &workspace,
        "<action type=\"advance_mode\"><to>director</to></action>",
        Mode::Architect,
    )
    .unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("advance_mode: the gate out of VOICE_CALIBRATION is shut"),
        "{refused}"
    );
    let skipped = run(
        &workspace,
        "<action type=\"advance_mode\"><to>director</to><because>I will find the voice as I draft.</because></action>",
        Mode::Architect,
    )
    .unwrap();
    assert_eq!(
        skipped.effect,
        Effect::Move(super::effect::ProposedMove {
            from: Mode::Architect,
            to: Mode::Director,
            because: Some("I will find the voice as I draft.".into()),
        })
    );
    // Proposing moves nothing.
    assert_eq!(
        crate::kb::mode::load(workspace.root()).unwrap().mode,
        Mode::Architect
    );
    let same = run(
        &workspace,
        "<action type=\"advance_mode\"><to>architect</to></action>",
        Mode::Architect,
    )
    .unwrap_err();
    assert!(same.to_string().contains("already in ARCHITECT"), "{same}");
}

#[test]
fn a_scaffold_of_an_unwritten_scene_takes_its_cast_from_the_plan_its_place_from_its_neighbours_and_its_open_threads_from_the_scenes_before()
 {
    let (dir, _) = example();
    let root = dir.path();
    // An earlier scene tracks a key, a wound and a secret.
    let high_tide = root.join("Story/Scenes/SCN-the-high-tide.md");
    let text = std::fs::read_to_string(&high_tide).unwrap();
    let text = text.replacen(
        "words: 450\n",
        "words: 450\ntracks:\n  - object: the brass key\n    given_to: Kael\n  - wound: left arm\n    character: Iria\n  - secret: Ysolde barred the gate\n    words: [barred]\n    known_by: [Ysolde]\n",
        1,
    );
    std::fs::write(&high_tide, text).unwrap();
    // A scene the outline plans and nobody wrote, between two that are.
    let outline = root.join("Story/SCN-outline.md");
    let text = std::fs::read_to_string(&outline).unwrap().replacen(
        "- SCN-the-reckoning:",
        "- SCN-the-crossing: Kael and Iria cross the flats at low water.\n- SCN-the-reckoning:",
        1,
    );
    std::fs::write(&outline, text).unwrap();
    let workspace = Workspace::load(root);
    let outcome = run(
        &workspace,
        "<action type=\"generate_scaffold\"><scene_id>SCN-the-crossing</scene_id></action>",
        Mode::Director,
    )
    .unwrap();
    let scaffold = &changed(&outcome).after;
    // The cast the outline line names, matched to their cards.
    assert!(
        scaffold.contains("## Cast\n\n- Kael Maren: alive."),
        "{scaffold}"
    );
    assert!(scaffold.contains("\n- Iria Vell: alive."), "{scaffold}");
    assert!(
        scaffold.contains("(named by the outline and the beat sheet: list who is in the scene"),
        "{scaffold}"
    );
    assert!(
        !scaffold.contains("the scene lists nobody yet"),
        "{scaffold}"
    );
    // The place the plan names, and where the scenes around it are.
    assert!(
        scaffold.contains("- The plan names The Glass Flats."),
        "{scaffold}"
    );
    assert!(
        scaffold.contains("- The scene before, SCN-the-high-tide: The Salt Fortress · 1203-04-16."),
        "{scaffold}"
    );
    assert!(!scaffold.contains("\n(not set)\n"), "{scaffold}");
    // Each cast member's last scene, and the threads still open.
    assert!(
        scaffold.contains("- SCN-the-high-tide (Kael Maren, Iria Vell):"),
        "{scaffold}"
    );
    assert!(
        scaffold.contains("Open threads:\n- the brass key: held by Kael (since SCN-the-high-tide)"),
        "{scaffold}"
    );
    assert!(
        scaffold.contains("- Iria's wound, left arm (since SCN-the-high-tide): not healed yet"),
        "{scaffold}"
    );
    assert!(
        scaffold.contains("- the secret “Ysolde barred the gate” (since SCN-the-high-tide): known by Ysolde; not by Kael Maren, Iria Vell"),
        "{scaffold}"
    );
    // What comes next: the outline's next scene and the beat sheet's beat.
    assert!(
        scaffold.contains("- Next, SCN-the-reckoning:"),
        "{scaffold}"
    );
    assert!(
        scaffold.contains("- Beat sheet, Final Image:"),
        "{scaffold}"
    );
    assert!(
        !scaffold.contains("(the last scene of the outline"),
        "{scaffold}"
    );
}

#[test]
fn select_winner_refuses_a_version_too_short_to_measure_a_voice_by() {
    let (dir, workspace) = example();
    let tournament = crate::voice::Tournament::new(
        crate::voice::TestPassage::Scene {
            id: "SCN-the-gate".into(),
        },
        vec![
            crate::voice::Contestant::parse("sparse").unwrap(),
            crate::voice::Contestant::parse("lyrical").unwrap(),
        ],
        None,
    )
    .unwrap();
    let workspace = write_tournament(dir.path(), &workspace, &tournament, |_| {
        "The gate held. Nobody came up the road that night.".to_owned()
    });
    let xml = format!(
        "<action type=\"select_winner\"><tournament_id>{}</tournament_id><contestant>1</contestant></action>",
        tournament.id
    );
    let refused = run(&workspace, &xml, Mode::VoiceCalibration).unwrap_err();
    let said = refused.to_string();
    assert!(
        said.contains("has 10 words; a gold standard needs at least 150"),
        "{said}"
    );
}

/// Writes `tournament`'s file into the manuscript at `root`, each
/// contestant's version the text `version` gives its label; answers the
/// workspace as it is then.
fn write_tournament(
    root: &std::path::Path,
    workspace: &Workspace,
    tournament: &crate::voice::Tournament,
    version: impl Fn(&str) -> String,
) -> Workspace {
    let entries: Vec<crate::voice::tournament::Entry> = tournament
        .contestants
        .iter()
        .map(|contestant| crate::voice::tournament::Entry {
            contestant: contestant.clone(),
            outcome: Ok(crate::voice::tournament::Version {
                text: version(&contestant.label),
                served_by: "fake/m".into(),
                traits: Default::default(),
                attempts: 1,
                elapsed_ms: 10,
            }),
        })
        .collect();
    let path = root.join(&*tournament.path(workspace));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        crate::voice::file::render(tournament, "the gate", &entries),
    )
    .unwrap();
    Workspace::load(root)
}
