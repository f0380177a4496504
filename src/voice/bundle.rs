//! The voice bundle (§12.3): the gold standard (the picked version, why it
//! works, its measured traits), the anti-pattern sheet and the phase
//! evolution guide, as files in the voice folder beside the sheet. Nothing
//! here writes: each function returns the [`Change`]s, computed against the
//! files as they are, for the front end to apply.
//!
//! - `select_winner` writes the gold standard from a tournament's version as
//!   it is in the file now; a locked gold standard is the writer's and is
//!   never replaced (unlock it first).
//! - `generate_bundle` refreshes the gold standard's measured traits (and
//!   its summary, when given) and writes the anti-pattern sheet and the
//!   phase evolution guide where there are none: once written they are the
//!   writer's.
//! - `lock` sets `locked: true`, the writer's word that this is the voice.

use std::fmt::Write as _;
use std::sync::Arc;

use super::VoiceError;
use super::file::{TournamentFile, yaml_string};
use super::tournament::tournament_path;
use crate::index::voice::{GOLD_STANDARD, GOLD_TYPE};
use crate::index::{BibleKind, FilePath, Workspace};
use crate::prose::voice::VoiceTraits;
use crate::runs::output::changes::{Change, merge};
use crate::syntax::front_matter::set_field;

/// The phase evolution guide's file name in the voice folder.
pub const PHASE_EVOLUTION: &str = "phase-evolution.md";

/// The heading of the gold standard's measured traits.
const MEASURED: &str = "## Measured traits";

/// A file of the voice folder as it is: its path and text, if any.
fn current(workspace: &Workspace, name: &str) -> (FilePath, Option<Arc<str>>) {
    let path: FilePath = workspace.config().paths.voice_file(name).into();
    let text = workspace
        .file(&path)
        .map(|file| file.text.clone())
        .or_else(|| {
            std::fs::read_to_string(workspace.root().join(&*path))
                .ok()
                .map(Arc::from)
        });
    (path, text)
}

/// The gold standard from version `which` of tournament `tournament` (its
/// id, or its file's path): (what was picked, the change).
pub fn select_winner(
    workspace: &Workspace,
    tournament: &str,
    which: &str,
    why: Option<&str>,
) -> Result<(String, Change), VoiceError> {
    let path: FilePath = if tournament.ends_with(".md") {
        tournament.into()
    } else {
        tournament_path(workspace, tournament)
    };
    let text = workspace
        .file(&path)
        .map(|file| file.text.to_string())
        .or_else(|| std::fs::read_to_string(workspace.root().join(&*path)).ok())
        .ok_or_else(|| VoiceError::NoTournamentFile(path.to_string()))?;
    let file =
        TournamentFile::read(&text).ok_or_else(|| VoiceError::NotATournament(path.to_string()))?;
    let version = file.version(which)?;
    if version.text.trim().is_empty() {
        return Err(VoiceError::EmptyVersion {
            number: version.number,
            label: format!("{} of {}", version.label, file.id),
            to: "pick",
        });
    }
    let (gold_path, before) = current(workspace, GOLD_STANDARD);
    if workspace
        .catalog()
        .voice_gold()
        .is_some_and(|(gold, found)| gold.path == gold_path && found.locked)
    {
        return Err(VoiceError::Locked(gold_path.to_string()));
    }
    let words = version.text.split_whitespace().count();
    if words < crate::index::voice::GOLD_MIN_WORDS {
        return Err(VoiceError::TooShort {
            number: version.number,
            label: format!("{} of {}", version.label, file.id),
            words,
            needed: crate::index::voice::GOLD_MIN_WORDS,
        });
    }
    let traits = super::tournament::measure(&version.text);
    let mut out = format!(
        "---\ntype: {GOLD_TYPE}\nlocked: false\ntournament: {}\ncontestant: {}\n---\n\n",
        file.id,
        yaml_string(&version.label),
    );
    let _ = write!(
        out,
        "# Voice gold standard\n\nThe book's voice, picked from tournament {} (version {}, “{}”). \
         Edit the passage as you like: the measured traits follow it. When it is the voice, \
         lock it (`locked: true` above, or `control-room voice lock`): drafting keeps to it, \
         and `voice-drift` flags the scenes that leave it.\n\n## Passage\n\n{}\n\n## Why it works\n\n{}\n\n",
        file.id,
        version.number,
        version.label,
        version.text.trim(),
        why.map(str::trim)
            .filter(|why| !why.is_empty())
            .unwrap_or("(In your words: what makes this the book's voice?)")
    );
    out.push_str(&measured_section(&traits));
    Ok((
        format!(
            "picked version {}. {} of {} as the gold standard ({gold_path})",
            version.number, version.label, file.id
        ),
        Change {
            path: gold_path,
            before,
            after: out,
        },
    ))
}

fn measured_section(traits: &VoiceTraits) -> String {
    let mut out = format!("{MEASURED}\n\n");
    for line in traits.lines() {
        let _ = writeln!(out, "- {line}");
    }
    out
}

/// The bundle around the gold standard: its traits brought up to date (and
/// `summary`, when given), the anti-pattern sheet and the phase evolution
/// guide where they are missing. Nothing when all is as it should be.
pub fn generate_bundle(
    workspace: &Workspace,
    summary: Option<&str>,
) -> Result<(String, Vec<Change>), VoiceError> {
    let Some((gold_file, gold)) = workspace.catalog().voice_gold() else {
        return Err(VoiceError::NoGoldStandard {
            path: workspace.config().paths.voice_file(GOLD_STANDARD),
            to_lock: false,
        });
    };
    let mut changes = Vec::new();
    let mut done = Vec::new();
    let before: &str = &gold_file.text;
    let mut after = match before.find(MEASURED) {
        Some(at) => {
            let end = before[at + MEASURED.len()..]
                .find("\n#")
                .map_or(before.len(), |rest| at + MEASURED.len() + rest + 1);
            format!(
                "{}{}{}",
                &before[..at],
                measured_section(&gold.traits),
                &before[end..]
            )
        }
        None => format!(
            "{}\n\n{}",
            before.trim_end(),
            measured_section(&gold.traits)
        ),
    };
    if let Some(summary) = summary.map(str::trim).filter(|s| !s.is_empty()) {
        after = set_field(&after, "summary", summary);
    }
    if after != before {
        done.push(format!(
            "the gold standard's traits brought up to date ({})",
            gold_file.path
        ));
        changes.push(Change {
            path: gold_file.path.clone(),
            before: Some(gold_file.text.clone()),
            after,
        });
    }
    let sheet: FilePath = workspace.config().paths.anti_patterns.clone().into();
    if workspace.file(&sheet).is_none() && !workspace.root().join(&*sheet).exists() {
        done.push(format!("a starting anti-pattern sheet ({sheet})"));
        changes.push(Change {
            path: sheet,
            before: None,
            after: ANTI_PATTERNS.to_owned(),
        });
    }
    let (phase_path, phase) = current(workspace, PHASE_EVOLUTION);
    if phase.is_none() {
        let summary = summary
            .map(str::to_owned)
            .unwrap_or_else(|| gold.summary_or_measured());
        done.push(format!("a phase evolution guide ({phase_path})"));
        changes.push(Change {
            path: phase_path,
            before: None,
            after: phase_evolution(workspace, &gold.traits, &summary),
        });
    }
    let said = if done.is_empty() {
        "the voice bundle is complete and up to date".to_owned()
    } else {
        done.join("; ")
    };
    Ok((said, changes))
}

/// The starting anti-pattern sheet: the tics of machine-drafted prose.
const ANTI_PATTERNS: &str = "# Anti-pattern sheet\n\n\
Phrases the book's voice never uses. Add your own; `anti-pattern` flags them in the scenes.\n\n\
## Zero tolerance\n\n\
- a shiver ran down\n\
- let out a breath she didn't know\n\
- let out a breath he didn't know\n\
- in a voice barely above a whisper\n\
- a testament to\n\
- the weight of the world\n\
- little did she know\n\
- little did he know\n\n\
## Deduction\n\n\
- suddenly\n\
- very\n\
- began to\n\
- somehow\n";

/// The phase evolution guide: the gold standard's measures as the anchor,
/// and how far each act of the beat sheet may move from them.
fn phase_evolution(workspace: &Workspace, traits: &VoiceTraits, summary: &str) -> String {
    let beats = BibleKind::BeatSheet.parts();
    let names = |range: std::ops::Range<usize>| {
        beats
            .get(range)
            .unwrap_or_default()
            .iter()
            .map(|part| part.title)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sentence = traits.narration_mean;
    let mut out = String::from(
        "---\ntype: voice-phase-evolution\n---\n\n# Phase evolution guide\n\n\
         How the voice may move through the book and stay itself. The anchor is the gold \
         standard",
    );
    let _ = write!(
        out,
        ": {summary} Its measures: {sentence:.0} words a sentence in the narration, dialogue \
         {:.0}% of the words, {:.1} figures and {:.1} verbs of thought per 1,000 words. A starting \
         guide, drawn from those measures: make it yours.\n\n",
        traits.dialogue * 100.0,
        traits.figures,
        traits.interiority
    );
    let _ = write!(
        out,
        "## Act one: the world as it is ({})\n\nThe gold standard exactly. The reader learns \
         the voice here; every scene of the act should measure close to it.\n\n",
        names(0..5)
    );
    let _ = write!(
        out,
        "## Act two: pressure ({})\n\nIn action, sentences may shorten to about {:.0} words; in \
         reflection, interiority may deepen. Figures stay as rare or as rich as the gold \
         standard's: a change of imagery reads as a change of narrator.\n\n",
        names(5..12),
        (sentence * 0.75).max(4.0)
    );
    let _ = write!(
        out,
        "## Act three: resolution ({})\n\nBack to the gold standard's rhythm, so the ending \
         sounds like the beginning that promised it; the final image may take the one figure \
         the book has saved.\n\n",
        names(12..15)
    );
    let sheet = &workspace.config().paths.anti_patterns;
    let _ = write!(
        out,
        "## What never changes\n\n- The distance from the point-of-view character.\n- \
         The phrases of the anti-pattern sheet ({sheet}).\n"
    );
    out
}

/// `locked: false` in the gold standard: the writer may pick another.
pub fn unlock(workspace: &Workspace) -> Result<(String, Change), VoiceError> {
    let Some((gold_file, gold)) = workspace.catalog().voice_gold() else {
        return Err(VoiceError::NoGoldStandard {
            path: workspace.config().paths.voice_file(GOLD_STANDARD),
            to_lock: false,
        });
    };
    if !gold.locked {
        return Err(VoiceError::NotLocked(gold_file.path.to_string()));
    }
    Ok((
        format!(
            "unlocked the voice ({}): a tournament's version may be picked again",
            gold_file.path
        ),
        Change {
            path: gold_file.path.clone(),
            before: Some(gold_file.text.clone()),
            after: set_field(&gold_file.text, "locked", "false"),
        },
    ))
}

/// `locked: true` in the gold standard.
pub fn lock(workspace: &Workspace) -> Result<(String, Change), VoiceError> {
    let Some((gold_file, gold)) = workspace.catalog().voice_gold() else {
        return Err(VoiceError::NoGoldStandard {
            path: workspace.config().paths.voice_file(GOLD_STANDARD),
            to_lock: true,
        });
    };
    if gold.locked {
        return Err(VoiceError::AlreadyLocked(gold_file.path.to_string()));
    }
    Ok((
        format!("locked the voice ({})", gold_file.path),
        Change {
            path: gold_file.path.clone(),
            before: Some(gold_file.text.clone()),
            after: set_field(&gold_file.text, "locked", "true"),
        },
    ))
}

/// "Pick this voice": the gold standard from version `which` of tournament
/// `tournament` ([`select_winner`]), then the bundle around it
/// ([`generate_bundle`]), one change per file; `workspace` sees the changes.
pub fn pick(
    workspace: &mut Workspace,
    tournament: &str,
    which: &str,
    why: Option<&str>,
) -> Result<(Vec<String>, Vec<Change>), VoiceError> {
    let (picked, gold) = select_winner(workspace, tournament, which, why)?;
    let mut said = vec![picked];
    let mut changes = Vec::new();
    merge(workspace, &mut changes, gold);
    let (bundled, more) = generate_bundle(workspace, None)?;
    said.push(bundled);
    for change in more {
        merge(workspace, &mut changes, change);
    }
    Ok((said, changes))
}

#[cfg(test)]
mod tests {
    use super::super::file::render;
    use super::super::tournament::{Entry, Version, measure};
    use super::super::{Contestant, TestPassage, Tournament};
    use super::*;

    /// A version long enough to measure a voice by (150 words and more).
    const SPARSE: &str = "The gate held. Iria waited on the wall. Nobody came up the road. \
        The wind came off the flats. The lamps shook. She counted the stones below her, \
        one to nine, and then again. Salt on her lips. Salt on the rail. The tide lay out \
        past the last marker, flat and grey, and did not move. She did not move either. \
        Behind her the fortress slept, or pretended to. A door banged once in the yard. \
        Nobody went to shut it. She thought of Tomas and did not let herself go on thinking. \
        The road stayed empty. The sky went from black to the colour of old iron. A gull \
        came in low over the water and turned away. She watched it go. Her hands were cold. \
        She put them under her arms and kept watching. Somewhere a bell began, far off, \
        and stopped. She waited for it to start again. It did not. The gate held. Nobody \
        came. She stayed on the wall until the light was full and the flats were white and \
        bright and empty.";

    /// The example in a temporary folder with a tournament of two written.
    fn with_tournament() -> (tempfile::TempDir, Workspace, String) {
        let (dir, workspace) = crate::index::test_support::example_copy();
        let tournament = Tournament::new(
            TestPassage::Scene {
                id: "SCN-the-gate".into(),
            },
            vec![
                Contestant::parse("sparse").unwrap(),
                Contestant::parse("lyrical").unwrap(),
            ],
            None,
        )
        .unwrap();
        let entries = vec![
            Entry {
                contestant: tournament.contestants[0].clone(),
                outcome: Ok(Version {
                    text: SPARSE.to_owned(),
                    served_by: "fake/m".into(),
                    traits: measure(SPARSE),
                    attempts: 1,
                    elapsed_ms: 1,
                }),
            },
            Entry {
                contestant: tournament.contestants[1].clone(),
                outcome: Err(crate::voice::Unusable::CutOff),
            },
        ];
        let path = workspace.root().join(&*tournament.path(&workspace));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, render(&tournament, "the gate", &entries)).unwrap();
        let workspace = Workspace::load(dir.path());
        (dir, workspace, tournament.id)
    }

    fn write(workspace: &Workspace, changes: &[Change]) -> Workspace {
        let root = workspace.root().to_path_buf();
        for (path, result) in crate::runs::output::changes::apply_on_disk(
            &root,
            &crate::storage::Disk::default(),
            changes,
        ) {
            result.unwrap_or_else(|why| panic!("{path}: {why}"));
        }
        Workspace::load(&root)
    }

    #[test]
    fn a_pick_writes_the_gold_standard_and_the_missing_bundle_and_keeps_the_writers_files() {
        let (_dir, mut workspace, id) = with_tournament();
        // The writer's own phase guide is kept; the sheet exists in the example.
        let phase = workspace.root().join("Compendium/Voice/phase-evolution.md");
        std::fs::write(&phase, "# My own guide\n").unwrap();
        let mut workspace_with_guide = Workspace::load(workspace.root());
        let (said, changes) =
            pick(&mut workspace_with_guide, &id, "sparse", Some("Plain.")).unwrap();
        assert_eq!(changes.len(), 1, "{said:?}");
        assert_eq!(&*changes[0].path, "Compendium/Voice/gold-standard.md");
        std::fs::remove_file(&phase).unwrap();

        let (_, changes) = pick(&mut workspace, &id, "1", None).unwrap();
        let paths: Vec<&str> = changes.iter().map(|c| &*c.path).collect();
        assert_eq!(
            paths,
            [
                "Compendium/Voice/gold-standard.md",
                "Compendium/Voice/phase-evolution.md"
            ]
        );
        let workspace = write(&workspace, &changes);
        let (_, gold) = workspace.catalog().voice_gold().expect("a gold standard");
        assert!(!gold.locked);
        assert_eq!(gold.traits.words, 179);
        assert_eq!(gold.tournament.as_deref(), Some(id.as_str()));
        // A version that failed has nothing to pick.
        let failed = select_winner(&workspace, &id, "2", None).unwrap_err();
        assert!(failed.to_string().contains("no prose to pick"), "{failed}");
        // Up to date: nothing more to write.
        let (said, changes) = generate_bundle(&workspace, None).unwrap();
        assert!(changes.is_empty(), "{said}: {changes:?}");
    }

    #[test]
    fn a_locked_voice_is_never_replaced_by_a_pick() {
        let (_dir, mut workspace, id) = with_tournament();
        let (_, changes) = pick(&mut workspace, &id, "1", None).unwrap();
        let workspace = write(&workspace, &changes);
        let (_, locked) = lock(&workspace).unwrap();
        let mut workspace = write(&workspace, &[locked]);
        assert!(workspace.catalog().voice_gold().unwrap().1.locked);
        let refused = pick(&mut workspace, &id, "1", None).unwrap_err();
        assert!(matches!(refused, VoiceError::Locked(_)), "{refused}");
        assert!(lock(&workspace).is_err(), "already locked");
    }

    #[test]
    fn the_bundle_needs_a_gold_standard_and_keeps_the_writers_summary() {
        let (_dir, mut workspace, id) = with_tournament();
        assert!(matches!(
            generate_bundle(&workspace, None),
            Err(VoiceError::NoGoldStandard { to_lock: false, .. })
        ));
        let (_, changes) = pick(&mut workspace, &id, "1", None).unwrap();
        let workspace = write(&workspace, &changes);
        let (_, changes) = generate_bundle(&workspace, Some("Plain, close, cold.")).unwrap();
        let workspace = write(&workspace, &changes);
        let (_, gold) = workspace.catalog().voice_gold().unwrap();
        assert_eq!(gold.summary_or_measured(), "Plain, close, cold.");
    }
}

#[cfg(test)]
mod lock_tests {
    use super::*;

    #[test]
    fn unlock_undoes_a_lock_and_says_when_there_is_nothing_to_undo() {
        let (dir, workspace) = crate::index::test_support::example_copy();
        let refused = unlock(&workspace).unwrap_err();
        assert!(
            refused.to_string().starts_with("there is no gold standard"),
            "{refused}"
        );
        let gold = dir.path().join("Compendium/Voice/gold-standard.md");
        std::fs::write(
            &gold,
            "---\ntype: voice-gold-standard\nlocked: true\n---\n\n# Voice gold standard\n\n## Passage\n\nThe gate held.\n",
        )
        .unwrap();
        let workspace = Workspace::load(dir.path());
        let (said, change) = unlock(&workspace).unwrap();
        assert!(
            said.starts_with("unlocked the voice (Compendium/Voice/gold-standard.md)"),
            "{said}"
        );
        assert!(change.after.contains("locked: false"), "{}", change.after);
        std::fs::write(&gold, &change.after).unwrap();
        let workspace = Workspace::load(dir.path());
        assert!(matches!(unlock(&workspace), Err(VoiceError::NotLocked(_))));
    }
}
