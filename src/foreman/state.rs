//! What the Foreman sees of the gate out of the project's mode, at every
//! tier: what the gate still needs, by name (the templates and parts the
//! Story Bible misses; the bundle's files and the lock), and what the mode
//! works with: in VOICE_CALIBRATION the tournaments, their versions and
//! which say why they work, and the gold standard; in DIRECTOR the scenes
//! drafted, the next to draft, and the story's health with its findings.
//! Lists are bounded, so that the block fits the smallest tier's room.

use std::fmt::Write as _;

use crate::health::{Health, Measures};
use crate::index::Workspace;
use crate::kb::mode::{self, Mode, ModeState};
use crate::runs::prompts::escape as escape_xml;
use crate::voice::file::TournamentFile;
use crate::voice::tournament::TOURNAMENTS_FOLDER;

/// The most items of one kind a block lists.
const MOST: usize = 8;

/// The `<gate>` block for the project in `state`.
pub fn gate_block(workspace: &Workspace, state: &ModeState) -> String {
    let gate = mode::gate(workspace, state, state.mode);
    let mut out = format!(
        "<gate mode=\"{}\" open=\"{}\" done_pct=\"{}\"",
        state.mode.label(),
        gate.met,
        gate.percent
    );
    match state.mode.next() {
        Some(next) => {
            let _ = writeln!(out, " leads_to=\"{}\">", next.label());
        }
        None => out.push_str(">\n"),
    }
    for (at, need) in gate.unmet.iter().enumerate() {
        if at == MOST {
            let _ = writeln!(out, "  <needs>and {} more</needs>", gate.unmet.len() - MOST);
            break;
        }
        let _ = writeln!(out, "  <needs>{}</needs>", escape_xml(need));
    }
    match state.mode {
        Mode::Architect | Mode::Editor => {}
        Mode::VoiceCalibration => voice(&mut out, workspace),
        Mode::Director => draft(&mut out, workspace),
    }
    out.push_str("</gate>");
    out
}

/// The tournaments, newest first, and the gold standard.
fn voice(out: &mut String, workspace: &Workspace) {
    let folder = workspace.config().paths.voice_file(TOURNAMENTS_FOLDER);
    let mut tournaments: Vec<(String, TournamentFile)> = workspace
        .files()
        .filter(|file| file.path.starts_with(&format!("{folder}/")))
        .filter_map(|file| Some((file.path.to_string(), TournamentFile::read(&file.text)?)))
        .collect();
    tournaments.sort_by(|a, b| b.1.id.cmp(&a.1.id));
    if tournaments.is_empty() {
        out.push_str("  <tournaments>none yet: start one with start_tournament</tournaments>\n");
    }
    for (path, tournament) in tournaments.iter().take(MOST) {
        let versions: Vec<String> = tournament
            .versions
            .iter()
            .map(|version| {
                let state = if version.text.trim().is_empty() {
                    "failed"
                } else if version.has_why {
                    "why given"
                } else {
                    "drafted"
                };
                format!("{} {} ({state})", version.number, version.label)
            })
            .collect();
        let _ = writeln!(
            out,
            "  <tournament id=\"{}\" file=\"{}\" passage=\"{}\">{}</tournament>",
            escape_xml(&tournament.id),
            escape_xml(path),
            escape_xml(crate::text::clip(&tournament.passage, 80)),
            escape_xml(&versions.join("; "))
        );
    }
    match workspace.catalog().voice_gold() {
        Some((file, gold)) => {
            let words = gold
                .passage
                .map_or(0, |passage| passage.slice(&file.text).split_whitespace().count());
            let _ = writeln!(
                out,
                "  <gold_standard file=\"{}\" words=\"{words}\" locked=\"{}\"/>",
                escape_xml(&file.path),
                gold.locked
            );
        }
        None => out.push_str(
            "  <gold_standard>none yet: select_winner makes a tournament's version the gold standard</gold_standard>\n",
        ),
    }
}

/// The scenes drafted, the next to draft, and the story's health.
fn draft(out: &mut String, workspace: &Workspace) {
    let catalog = workspace.catalog();
    let Some(outline) = catalog.outline().and_then(|file| file.outline()) else {
        return;
    };
    let written = |id: &str| {
        catalog
            .scene(id)
            .and_then(|file| file.scene())
            .is_some_and(|scene| scene.word_count > 0)
    };
    let drafted = outline
        .entries
        .iter()
        .filter(|entry| written(&entry.scene_id))
        .count();
    let _ = writeln!(
        out,
        "  <drafted>{drafted} of {} outline scenes</drafted>",
        outline.entries.len()
    );
    let next: Vec<&str> = outline
        .entries
        .iter()
        .filter(|entry| !written(&entry.scene_id))
        .map(|entry| entry.scene_id.as_str())
        .take(MOST)
        .collect();
    if !next.is_empty() {
        let _ = writeln!(out, "  <next_to_draft>{}</next_to_draft>", next.join(", "));
    }
    if drafted == 0 {
        return;
    }
    let health = Health::check(workspace, &mut Measures::default());
    let judged = health
        .checks
        .iter()
        .filter(|check| check.score.is_some())
        .count();
    let score = health
        .score
        .map_or_else(|| "none".to_owned(), |score| score.to_string());
    let _ = writeln!(
        out,
        "  <health score=\"{score}\" judged=\"{judged} of {} checks\">",
        health.checks.len()
    );
    let findings = health.checks.iter().flat_map(|check| {
        check
            .findings
            .iter()
            .map(move |finding| (check.id, finding))
    });
    for (id, finding) in findings.take(MOST) {
        let _ = writeln!(
            out,
            "    <finding check=\"{id}\">{}</finding>",
            escape_xml(&finding.message)
        );
    }
    out.push_str("  </health>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_architect_the_gate_names_the_missing_template_and_its_parts() {
        let (dir, _) = crate::index::test_support::example_copy();
        std::fs::remove_file(dir.path().join("Story/Bible/world-rules.md")).unwrap();
        let workspace = Workspace::load(dir.path());
        let block = gate_block(&workspace, &ModeState::default());
        assert!(
            block.starts_with(
                "<gate mode=\"ARCHITECT\" open=\"false\" done_pct=\"75\" leads_to=\"VOICE_CALIBRATION\">"
            ),
            "{block}"
        );
        assert!(
            block.contains("<needs>no World Rules (Story/Bible/world-rules.md)</needs>"),
            "{block}"
        );
    }

    #[test]
    fn in_voice_calibration_the_gate_shows_the_tournaments_and_the_gold_standard() {
        let (dir, _) = crate::index::test_support::example_copy();
        let workspace = Workspace::load(dir.path());
        let state = ModeState {
            mode: Mode::VoiceCalibration,
            ..ModeState::default()
        };
        let block = gate_block(&workspace, &state);
        assert!(
            block.contains("<gate mode=\"VOICE_CALIBRATION\""),
            "{block}"
        );
        assert!(
            block.contains("<tournament") || block.contains("<tournaments>none yet"),
            "{block}"
        );
        assert!(block.contains("<gold_standard"), "{block}");
    }

    #[test]
    fn in_director_the_gate_counts_the_drafted_scenes_and_shows_the_health() {
        let (dir, _) = crate::index::test_support::example_copy();
        let workspace = Workspace::load(dir.path());
        let state = ModeState {
            mode: Mode::Director,
            ..ModeState::default()
        };
        let block = gate_block(&workspace, &state);
        assert!(block.contains("<drafted>"), "{block}");
        assert!(
            block.contains("<next_to_draft>SCN-the-reckoning"),
            "{block}"
        );
        assert!(block.contains("<health score=\""), "{block}");
        assert!(block.contains(" checks\">"), "{block}");
    }
}
