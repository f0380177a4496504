//! Decisions of the knowledge base (`.control-room/kb/decisions.jsonl`)
//! that contradict a canon card: a character decision keyed by a card's name
//! or alias that gives another eye or hair colour than the card, or says the
//! character dies (or lives) when the card says otherwise. Each contradiction
//! carries "Promote to card": the card's front matter changed to what the
//! decision says, and the decision marked `promoted`.
//!
//! Decisions already promoted, and lines that are not decisions, are left
//! alone (the prompts' loader reports the latter).

use crate::checks::{FileEdit, Fix, FixKind, colour_families};
use crate::index::{CardKind, FilePath, LifeStatus, SourceFile, Workspace};
use crate::kb::Decision;
use crate::text::TextRange;

/// The diagnostic code of a decision that contradicts its card.
pub const CONTRADICTS_CARD: &str = "decision-contradicts-card";

/// Words that say a character dies.
const DEATH: &[&str] = &[
    "dies", "died", "dead", "killed", "drowned", "drowns", "slain",
];
/// Words that say a character lives.
const LIFE: &[&str] = &["alive", "survives", "survived", "lives"];

/// A decision at odds with its card.
#[derive(Clone, Debug, PartialEq)]
pub struct Contradiction {
    /// The decision's value in the knowledge base's text.
    pub range: TextRange,
    pub message: String,
    pub card: FilePath,
    /// What the card says, in the card.
    pub card_range: TextRange,
    /// "Promote to card".
    pub promotion: Fix,
}

/// Every contradiction in `text`, the knowledge base at `kb_path`; `now`
/// stamps a promoted decision's `updated_at`.
pub fn contradictions(
    workspace: &Workspace,
    kb_path: &FilePath,
    text: &str,
    now: &str,
) -> Vec<Contradiction> {
    let mut found = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let line_range = TextRange::new(start, start + line.trim_end_matches(['\n', '\r']).len());
        start += line.len();
        let Ok(decision) = serde_json::from_str::<Decision>(line_range.slice(text)) else {
            continue;
        };
        if decision.promoted || decision.category != "character" {
            continue;
        }
        let Some(card_file) = workspace
            .catalog()
            .resolve_card(decision.key.trim(), &[CardKind::Character])
        else {
            continue;
        };
        let value_range = value_range(text, line_range, &decision.value);
        for (message, card_range, card_edits) in conflicts(card_file, &decision) {
            let mut promoted = decision.clone();
            promoted.promoted = true;
            promoted.updated_at = Some(now.to_owned());
            let mut edits = card_edits;
            edits.push(FileEdit {
                path: kb_path.clone(),
                range: line_range,
                new_text: serde_json::to_string(&promoted).unwrap_or_default(),
            });
            found.push(Contradiction {
                range: value_range,
                message,
                card: card_file.path.clone(),
                card_range,
                promotion: Fix {
                    title: format!("Promote to card: {}", card_name(card_file)),
                    edits,
                    kind: FixKind::Correction,
                },
            });
        }
    }
    found
}

fn card_name(file: &SourceFile) -> String {
    file.card()
        .and_then(|card| card.name.as_ref())
        .map_or_else(|| file.path.to_string(), |name| name.text.clone())
}

/// The range of the decision's value in its line: where its JSON string
/// sits, else the whole line.
fn value_range(text: &str, line: TextRange, value: &str) -> TextRange {
    let line_text = line.slice(text);
    let encoded = serde_json::to_string(value).unwrap_or_default();
    line_text.find(&encoded).map_or(line, |at| {
        TextRange::new(line.start + at, line.start + at + encoded.len())
    })
}

type Conflict = (String, TextRange, Vec<FileEdit>);

/// What in `decision` contradicts the card, each with the card's range and
/// the edits that make the card say it.
fn conflicts(card_file: &SourceFile, decision: &Decision) -> Vec<Conflict> {
    let Some(card) = card_file.card() else {
        return Vec::new();
    };
    let name = card_name(card_file);
    let mut out = Vec::new();
    let value = decision.value.to_lowercase();
    let clauses: Vec<&str> = value
        .split(['.', ';', ',', '!', '?'])
        .flat_map(|sentence| sentence.split(" and "))
        .collect();
    for key in ["eyes", "hair"] {
        let noun = if key == "eyes" { "eye" } else { "hair" };
        let suffix = if key == "eyes" { "-eyed" } else { "-haired" };
        let Some((said, word)) = clauses.iter().find_map(|clause| {
            let about = clause.split_whitespace().any(|word| {
                let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '-');
                word.starts_with(noun) || word.ends_with(suffix)
            });
            let (families, word) = colour_families(key, clause);
            (about && families != 0).then_some((families, word?))
        }) else {
            continue;
        };
        let Some(value) = card
            .attributes
            .iter()
            .find(|(attribute, _)| attribute == key)
            .map(|(_, value)| value)
        else {
            continue;
        };
        let (families, _) = colour_families(key, &value.text);
        if families == 0 || families & said != 0 {
            continue;
        }
        out.push((
            format!(
                "this decision gives {name} {word} {key}, but the card says {}",
                value.text
            ),
            value.range,
            vec![FileEdit {
                path: card_file.path.clone(),
                range: value.range,
                new_text: word,
            }],
        ));
    }
    let words: Vec<&str> = value
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let dies = words.iter().any(|w| DEATH.contains(w));
    let lives = !dies && words.iter().any(|w| LIFE.contains(w));
    let status_entry = card_file
        .front_matter
        .as_ref()
        .and_then(|front| front.get("status"));
    let status_range = status_entry.map_or_else(
        || {
            card_file
                .front_matter
                .as_ref()
                .map_or(TextRange::empty(0), |f| f.range)
        },
        |entry| entry.value.range,
    );
    let set_status = |status: &str, died_in: Option<&str>| {
        let mut edits = Vec::new();
        match status_entry {
            Some(entry) => edits.push(FileEdit {
                path: card_file.path.clone(),
                range: entry.value.range,
                new_text: status.to_owned(),
            }),
            None => edits.push(insert_field(card_file, &format!("status: {status}"))),
        }
        if let Some(scene) = died_in
            && card_file
                .front_matter
                .as_ref()
                .and_then(|front| front.get("died_in"))
                .is_none()
        {
            edits.push(insert_field(card_file, &format!("died_in: {scene}")));
        }
        // Two insertions at one place keep their order when merged.
        if edits.len() == 2 && edits[0].range == edits[1].range {
            let second = edits.pop().expect("two edits");
            edits[0].new_text.push_str(&second.new_text);
        }
        edits
    };
    if dies && card.status != LifeStatus::Dead {
        out.push((
            format!(
                "this decision says {name} dies, but the card says {}",
                card.status.as_str()
            ),
            status_range,
            set_status("dead", decision.scene.as_deref()),
        ));
    } else if lives && card.status == LifeStatus::Dead {
        out.push((
            format!("this decision says {name} lives, but the card says dead"),
            status_range,
            set_status("alive", None),
        ));
    }
    out
}

/// A new `key: value` line at the end of the card's front matter.
fn insert_field(card_file: &SourceFile, line: &str) -> FileEdit {
    let at = card_file
        .front_matter
        .as_ref()
        .map_or(0, |front| front.content.end);
    let text = &card_file.text;
    let needs_newline = at > 0 && !text[..at].ends_with('\n');
    FileEdit {
        path: card_file.path.clone(),
        range: TextRange::empty(at),
        new_text: format!("{}{line}\n", if needs_newline { "\n" } else { "" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kb::Decision;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let card = dir.path().join("Compendium/Characters/CHAR-kael.md");
        std::fs::create_dir_all(card.parent().unwrap()).unwrap();
        std::fs::write(
            &card,
            "---\ntype: character\nname: Kael Maren\naliases: [Kael]\neyes: grey\nhair: black\n---\n\nA warden.\n",
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
            line("Kael Maren", "Kael never raises his voice."),
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
}
