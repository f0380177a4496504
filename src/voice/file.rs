//! A tournament's Markdown file: written once when the contestants are
//! done, then the writer's. It is read back by its structure: front matter
//! `type: voice-tournament` with the tournament's id, and one `## N. label`
//! heading per version, whose text is the paragraphs under it other than
//! the `*Voice:*` and `*Measured:*` lines, up to a `###` heading (where "Why
//! does this work?" puts its answer) or the next version.

use std::fmt::Write as _;

use super::contestant::TestPassage;
use super::tournament::{Entry, Tournament};
use crate::prose::voice::VoiceTraits;

/// The `type:` of a tournament file.
pub const TOURNAMENT_TYPE: &str = "voice-tournament";

/// The tournament's file.
pub fn render(tournament: &Tournament, brief: &str, entries: &[Entry]) -> String {
    let mut out = format!(
        "---\ntype: {TOURNAMENT_TYPE}\ntournament: {}\nround: {}\n",
        tournament.id, tournament.round
    );
    if let Some(parent) = &tournament.parent {
        let _ = writeln!(out, "parent: {parent}");
    }
    let _ = writeln!(out, "passage: {}", yaml_string(&tournament.passage.label()));
    out.push_str("---\n\n");
    let _ = writeln!(
        out,
        "# Voice tournament {} (round {})\n",
        tournament.id, tournament.round
    );
    let what = match &tournament.passage {
        TestPassage::Scene { id } => format!("the scene {id}"),
        TestPassage::Selection { path, .. } => format!("a passage of {path}"),
        TestPassage::Description(_) => "the writer's test passage".to_owned(),
    };
    let _ = writeln!(
        out,
        "{} versions of {what}, about {} words each, written side by side under the same \
         context. Read them, then pick the one that is the book's voice (“Pick this voice”, or \
         `control-room voice pick {} N`).\n",
        entries.len(),
        tournament.words,
        tournament.id
    );
    for line in brief.lines() {
        out.push_str(if line.trim().is_empty() { ">" } else { "> " });
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for (at, entry) in entries.iter().enumerate() {
        let _ = write!(out, "\n## {}. {}\n\n", at + 1, entry.contestant.label);
        let voice = first_sentence(&entry.contestant.instructions);
        match &entry.outcome {
            Ok(version) => {
                let _ = write!(
                    out,
                    "*Voice:* {voice} · *Written by:* {} in {:.1} s{}\n\n{}\n\n*Measured:* {}\n",
                    version.served_by,
                    version.elapsed_ms as f64 / 1000.0,
                    if version.attempts > 1 {
                        format!(", at the {} try", ordinal(version.attempts))
                    } else {
                        String::new()
                    },
                    version.text.trim(),
                    measured_line(&version.traits)
                );
            }
            Err(why) => {
                let _ = writeln!(out, "*Voice:* {voice}\n\n*Failed:* {why}");
            }
        }
    }
    out
}

/// The traits in one line.
pub fn measured_line(traits: &VoiceTraits) -> String {
    format!(
        "{:.1} words a sentence in the narration ({:.1} overall); dialogue {:.0}%; \
         {:.1} figures and {:.1} verbs of thought per 1,000 words.",
        traits.narration_mean,
        traits.sentence_mean,
        traits.dialogue * 100.0,
        traits.figures,
        traits.interiority
    )
}

fn ordinal(n: usize) -> &'static str {
    match n {
        2 => "second",
        3 => "third",
        _ => "last",
    }
}

fn first_sentence(text: &str) -> &str {
    let first = text.split("\n\n").next().unwrap_or(text);
    match first.find(". ") {
        Some(at) => &first[..=at],
        None => first,
    }
}

/// A string as YAML reads it back: a JSON string is a YAML double-quoted one.
pub fn yaml_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

/// A version a tournament's file does not have.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tournament {tournament} has no version `{which}`; it has {}", .known.join(", "))]
pub struct NoSuchVersion {
    pub tournament: String,
    pub which: String,
    /// Its versions, `1. label` each.
    pub known: Vec<String>,
}

/// A tournament file as read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TournamentFile {
    pub id: String,
    pub round: u32,
    /// The front matter's `passage:` (a scene's id, a file's lines, or the
    /// start of a description).
    pub passage: String,
    /// What the contestants were told the passage is (the quoted block).
    pub brief: String,
    pub versions: Vec<FileVersion>,
}

/// One version as it is in the file now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileVersion {
    pub number: usize,
    pub label: String,
    /// The heading's line, 0-based.
    pub line: usize,
    /// The line after which "Why does this work?" goes: the version's last
    /// non-blank line before the next version, 0-based.
    pub last_line: usize,
    /// Its prose (empty for a version that failed).
    pub text: String,
    /// The `*Voice:*` line, without its label.
    pub voice: String,
    /// Whether it already says why it works.
    pub has_why: bool,
}

impl TournamentFile {
    /// Reads `text`, if it is a tournament's file.
    pub fn read(text: &str) -> Option<TournamentFile> {
        let front = crate::syntax::front_matter::parse(text)?;
        let field = |key: &str| {
            front
                .get(key)
                .and_then(|entry| entry.value.as_scalar_text(text))
                .map(|value| value.trim().to_owned())
        };
        if field("type").as_deref() != Some(TOURNAMENT_TYPE) {
            return None;
        }
        let id = field("tournament")?;
        let round = field("round").and_then(|r| r.parse().ok()).unwrap_or(1);
        let passage = field("passage")
            .map(|p| p.trim_matches('"').to_owned())
            .unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let mut versions: Vec<FileVersion> = Vec::new();
        let mut in_why = false;
        let mut paragraph: Vec<&str> = Vec::new();
        let mut brief: Vec<&str> = Vec::new();
        let flush = |versions: &mut Vec<FileVersion>, paragraph: &mut Vec<&str>| {
            if let Some(version) = versions.last_mut()
                && !paragraph.is_empty()
            {
                let joined = paragraph.join("\n");
                if let Some(voice) = joined.strip_prefix("*Voice:*") {
                    version.voice = voice.trim().to_owned();
                } else if !joined.starts_with("*Measured:*") && !joined.starts_with("*Failed:*") {
                    if !version.text.is_empty() {
                        version.text.push_str("\n\n");
                    }
                    version.text.push_str(&joined);
                }
            }
            paragraph.clear();
        };
        for (at, line) in lines.iter().enumerate() {
            if let Some(heading) = line.strip_prefix("## ") {
                flush(&mut versions, &mut paragraph);
                in_why = false;
                let Some((number, label)) = heading.split_once(". ") else {
                    continue;
                };
                let Ok(number) = number.trim().parse::<usize>() else {
                    continue;
                };
                versions.push(FileVersion {
                    number,
                    label: label.trim().to_owned(),
                    line: at,
                    last_line: at,
                    text: String::new(),
                    voice: String::new(),
                    has_why: false,
                });
                continue;
            }
            let Some(version) = versions.last_mut() else {
                if let Some(quoted) = line.strip_prefix('>') {
                    brief.push(quoted.strip_prefix(' ').unwrap_or(quoted));
                }
                continue;
            };
            if line.starts_with('#') && !line.starts_with("###") {
                // A heading of the writer's own at this level or above ends the versions.
                flush(&mut versions, &mut paragraph);
                break;
            }
            if !line.trim().is_empty() {
                version.last_line = at;
            }
            if line.starts_with("###") {
                flush(&mut versions, &mut paragraph);
                in_why = true;
                if let Some(version) = versions.last_mut() {
                    version.has_why = true;
                }
                continue;
            }
            if in_why {
                continue;
            }
            if line.trim().is_empty() {
                flush(&mut versions, &mut paragraph);
            } else {
                paragraph.push(line);
            }
        }
        flush(&mut versions, &mut paragraph);
        Some(TournamentFile {
            id,
            round,
            passage,
            brief: brief.join("\n").trim().to_owned(),
            versions,
        })
    }

    /// The passage of a later round: the same scene, or what the first
    /// round's contestants were told.
    pub fn test_passage(&self) -> TestPassage {
        match TestPassage::from_words(&self.passage) {
            scene @ TestPassage::Scene { .. } => scene,
            _ => TestPassage::Description(self.brief.clone()),
        }
    }

    /// The version `which` names: its number, or its label (any case).
    pub fn version(&self, which: &str) -> Result<&FileVersion, NoSuchVersion> {
        let which = which.trim();
        let found = match which.parse::<usize>() {
            Ok(number) => self.versions.iter().find(|v| v.number == number),
            Err(_) => self
                .versions
                .iter()
                .find(|v| v.label.eq_ignore_ascii_case(which)),
        };
        found.ok_or_else(|| NoSuchVersion {
            tournament: self.id.clone(),
            which: which.to_owned(),
            known: self
                .versions
                .iter()
                .map(|v| format!("{}. {}", v.number, v.label))
                .collect(),
        })
    }
}

/// `text` with `section` as its own paragraph after line `line` (0-based).
pub fn insert_after_line(text: &str, line: usize, section: &str) -> String {
    let at = text
        .match_indices('\n')
        .nth(line)
        .map_or(text.len(), |(at, _)| at + 1);
    let (head, tail) = text.split_at(at);
    let head = if head.ends_with('\n') || head.is_empty() {
        head.to_owned()
    } else {
        format!("{head}\n")
    };
    format!("{head}\n{}\n{tail}", section.trim_end())
}

#[cfg(test)]
mod tests {
    use super::super::contestant::Contestant;
    use super::super::tournament::Version;
    use super::*;

    fn version(text: &str) -> Result<Version, crate::voice::Unusable> {
        Ok(Version {
            text: text.to_owned(),
            served_by: "fake/m".to_owned(),
            traits: super::super::tournament::measure(text),
            attempts: 2,
            elapsed_ms: 1500,
        })
    }

    #[test]
    fn a_rendered_tournament_reads_back_with_each_version_and_the_writers_edits() {
        let tournament = Tournament::new(
            TestPassage::Scene {
                id: "SCN-the-gate".into(),
            },
            vec![
                Contestant::parse("sparse").unwrap(),
                Contestant::parse("lyrical@big").unwrap(),
                Contestant::parse("close").unwrap(),
            ],
            None,
        )
        .unwrap();
        let entries = vec![
            Entry {
                contestant: tournament.contestants[0].clone(),
                outcome: version("The gate held. She waited.\n\nNobody came."),
            },
            Entry {
                contestant: tournament.contestants[1].clone(),
                outcome: version("The gate stood like a held breath."),
            },
            Entry {
                contestant: tournament.contestants[2].clone(),
                outcome: Err(crate::voice::Unusable::CutOff),
            },
        ];
        let text = render(
            &tournament,
            "Scene SCN-the-gate: Iria opens the gate.",
            &entries,
        );
        assert!(text.contains("at the second try"), "{text}");
        let file = TournamentFile::read(&text).expect("a tournament file");
        assert_eq!(file.id, tournament.id);
        assert_eq!(file.brief, "Scene SCN-the-gate: Iria opens the gate.");
        assert_eq!(file.test_passage(), tournament.passage);
        assert_eq!(file.versions.len(), 3);
        assert_eq!(
            file.versions[0].text,
            "The gate held. She waited.\n\nNobody came."
        );
        assert_eq!(file.version("LYRICAL@big").unwrap().number, 2);
        assert!(file.versions[2].text.is_empty());
        assert!(
            file.version("4")
                .unwrap_err()
                .to_string()
                .contains("1. sparse, 2. lyrical@big")
        );

        // The writer edits a version and asks why another works.
        let edited = text
            .replace("Nobody came.", "Nobody came. The tide did.")
            .replace("\n## 2.", "\n### Why does this work?\n\nBecause.\n\n## 2.");
        let file = TournamentFile::read(&edited).unwrap();
        assert!(file.versions[0].text.ends_with("The tide did."));
        assert!(file.versions[0].has_why);
        assert!(!file.versions[1].has_why);
    }

    #[test]
    fn a_note_is_not_a_tournament() {
        assert_eq!(
            TournamentFile::read("---\ntype: note\n---\n\n## 1. x\n"),
            None
        );
        assert_eq!(TournamentFile::read("## 1. x\n"), None);
    }

    #[test]
    fn round_two_crosses_the_winner_with_a_runner_up_in_three_shares() {
        use super::super::play::cross;
        let tournament = Tournament::new(
            TestPassage::Description("Iria opens the gate.".into()),
            vec![
                Contestant::parse("sparse@small").unwrap(),
                Contestant::parse("lyrical").unwrap(),
            ],
            Some(200),
        )
        .unwrap();
        let entries: Vec<Entry> = tournament
            .contestants
            .iter()
            .map(|contestant| Entry {
                contestant: contestant.clone(),
                outcome: version(&format!("The gate, in the {} voice.", contestant.strategy)),
            })
            .collect();
        let file =
            TournamentFile::read(&render(&tournament, "Iria opens the gate.", &entries)).unwrap();
        let round = cross(&file, "1", "lyrical", None).unwrap();
        assert_eq!(round.round, 2);
        assert_eq!(round.parent.as_deref(), Some(tournament.id.as_str()));
        assert_eq!(
            round.passage,
            TestPassage::Description("Iria opens the gate.".into())
        );
        let labels: Vec<&str> = round.contestants.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "70% sparse@small × lyrical",
                "50% sparse@small × lyrical",
                "30% sparse@small × lyrical"
            ]
        );
        // The winner's model writes the crosses, from both versions.
        assert!(
            round
                .contestants
                .iter()
                .all(|c| c.model.as_deref() == Some("small"))
        );
        assert!(
            round.contestants[0]
                .instructions
                .contains("The gate, in the lyrical voice.")
        );
        assert!(
            cross(&file, "1", "1", None).is_err(),
            "a version crossed with itself"
        );
    }
}
