//! A character's grammatical gender, for resolving pronouns: declared on the
//! card (`gender`, `sex`, `pronouns`), else implied by the courtesy titles of
//! its names ("Mr. Darcy", "Miss Eliza Bennet"), else by the pronouns of its
//! summary. The catalog finds it once per card. For a card that says nothing,
//! [`genders_in_prose`] reads how the book itself refers to the character.

use std::collections::HashMap;
use std::sync::Arc;

use super::file::FilePath;
use super::mentions::Mention;
use super::model::Card;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Gender {
    He,
    She,
}

impl Gender {
    /// The other gender: a husband's, a wife's.
    pub fn other(self) -> Gender {
        match self {
            Gender::He => Gender::She,
            Gender::She => Gender::He,
        }
    }
}

/// The gender of a third-person singular pronoun.
pub fn pronoun_gender(lower: &str) -> Option<Gender> {
    match lower {
        "he" | "him" | "his" | "himself" => Some(Gender::He),
        "she" | "her" | "hers" | "herself" => Some(Gender::She),
        _ => None,
    }
}

/// A card's declared gender, else the one its titles or summary imply.
pub fn card_gender(card: &Card) -> Option<Gender> {
    if let Some(value) = ["gender", "sex", "pronouns"]
        .iter()
        .find_map(|key| card.attribute(key))
    {
        return declared_gender(&value.text);
    }
    let mut by_title = None;
    for name in card.names() {
        let first = name.text.split_whitespace().next().unwrap_or_default();
        let gender = match first.trim_end_matches('.') {
            "Mr" | "Sir" | "Lord" | "Colonel" | "Captain" | "Uncle" | "King" | "Prince"
            | "Father" | "Brother" | "Master" => Gender::He,
            "Mrs" | "Miss" | "Ms" | "Lady" | "Dame" | "Aunt" | "Queen" | "Princess" | "Mother"
            | "Sister" | "Madam" | "Mistress" => Gender::She,
            _ => continue,
        };
        match by_title {
            Some(other) if other != gender => return None,
            _ => by_title = Some(gender),
        }
    }
    if by_title.is_some() {
        return by_title;
    }
    let summary = card.summary.as_deref()?;
    let (mut he, mut she) = (0, 0);
    for word in summary.split(|c: char| !c.is_alphabetic()) {
        match pronoun_gender(&word.to_lowercase()) {
            Some(Gender::He) => he += 1,
            Some(Gender::She) => she += 1,
            None => {}
        }
    }
    // One pronoun is enough when none of the other gender stands beside
    // it ("rules she thinks are cowardly").
    match (he, she) {
        (he, 0) if he >= 1 => Some(Gender::He),
        (0, she) if she >= 1 => Some(Gender::She),
        _ => None,
    }
}

pub fn declared_gender(value: &str) -> Option<Gender> {
    let value = value.trim().to_lowercase();
    if value.starts_with("she") || value.starts_with('f') || value.starts_with('w') {
        Some(Gender::She)
    } else if value.starts_with("he") || value.starts_with('m') {
        Some(Gender::He)
    } else {
        None
    }
}

/// What one file's prose says of its characters' genders: for each card
/// it names, how many times a subject pronoun "he" (or "himself") and how
/// many times "she" (or "herself") first follows the name at the start of
/// a sentence, before anyone else may be meant (another name, a
/// capitalised word, a person noun, a quotation, the paragraph's end, or a
/// second sentence). In the order of the cards' paths.
pub type PronounTally = Arc<[(FilePath, [u32; 2])]>;

/// The [`PronounTally`] of a file's `text`, whose mentions are `mentions`.
pub fn pronoun_tally(text: &str, mentions: &[Mention]) -> PronounTally {
    let mut tally: Vec<(FilePath, [u32; 2])> = Vec::new();
    for (at, mention) in mentions.iter().enumerate() {
        if mention.possessive {
            continue;
        }
        let start = mention
            .title()
            .map_or(mention.range.start, |title| title.start);
        let end = mentions
            .get(at + 1)
            .map_or(text.len(), |next| next.range.start.max(mention.range.end));
        let Some(gender) = pronoun_after_name(&text[..start], &text[mention.range.end..end]) else {
            continue;
        };
        match tally.iter_mut().find(|(card, _)| *card == mention.card) {
            Some((_, counts)) => counts[gender as usize] += 1,
            None => {
                let mut counts = [0; 2];
                counts[gender as usize] = 1;
                tally.push((mention.card.clone(), counts));
            }
        }
    }
    tally.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
    tally.into()
}

/// The genders the book gives the characters whose cards say none
/// (`unknown`), from every file's [`PronounTally`]: at least three
/// readings, four in five of them agreeing ("Iria waited. She had…" three
/// times over makes Iria "she").
pub fn genders_in_prose<'a>(
    tallies: impl Iterator<Item = &'a PronounTally>,
    unknown: impl Fn(&FilePath) -> bool,
) -> HashMap<FilePath, Gender> {
    let mut sums: HashMap<&FilePath, [u32; 2]> = HashMap::new();
    for tally in tallies {
        for (card, [he, she]) in tally.iter() {
            if unknown(card) {
                let sum = sums.entry(card).or_default();
                sum[0] += he;
                sum[1] += she;
            }
        }
    }
    sums.into_iter()
        .filter_map(|(card, [he, she])| {
            let (gender, count) = if he >= she {
                (Gender::He, he)
            } else {
                (Gender::She, she)
            };
            (count >= 3 && count * 5 >= (he + she) * 4).then(|| (card.clone(), gender))
        })
        .collect()
}

/// The gender of the subject pronoun that first refers back to a name
/// starting a sentence, the rule [`pronoun_tally`] reads by: `before` is
/// the text up to the name (its title included), `after` the text after
/// it. `None` when the name does not start a sentence, or someone else may
/// be meant before a pronoun comes.
pub fn pronoun_after_name(before: &str, after: &str) -> Option<Gender> {
    if !starts_sentence(before) {
        return None;
    }
    next_subject_pronoun(after)
}

/// Whether a name after `before` starts a sentence: the text's or a
/// line's start, or after a sentence's end (and its closing quote).
fn starts_sentence(before: &str) -> bool {
    let before = before.trim_end_matches([' ', '\t']);
    let before = before.trim_end_matches(['”', '’', '"', '\'', '*', '_']);
    before.is_empty() || before.ends_with(['\n', '.', '!', '?'])
}

/// The subject pronoun that first follows a sentence's subject in `after`,
/// unless someone else may be meant first.
fn next_subject_pronoun(after: &str) -> Option<Gender> {
    const PERSONS: &[&str] = &[
        "man",
        "men",
        "woman",
        "women",
        "boy",
        "girl",
        "father",
        "mother",
        "brother",
        "sister",
        "husband",
        "wife",
        "son",
        "daughter",
        "lady",
        "gentleman",
        "stranger",
        "servant",
        "king",
        "queen",
        "uncle",
        "aunt",
        "child",
        "friend",
    ];
    let paragraph = after.split("\n\n").next().unwrap_or_default();
    let mut sentences = 0;
    let mut word_start = None;
    for (at, c) in paragraph.char_indices().chain([(paragraph.len(), ' ')]) {
        if c.is_alphabetic() {
            word_start.get_or_insert(at);
            continue;
        }
        if let Some(start) = word_start.take() {
            let word = &paragraph[start..at];
            let lower = word.to_lowercase();
            match lower.as_str() {
                "he" | "himself" => return Some(Gender::He),
                "she" | "herself" => return Some(Gender::She),
                "i" => {}
                _ if PERSONS.contains(&lower.as_str()) => return None,
                // A name nobody's card gives, inside a sentence.
                _ if word.starts_with(char::is_uppercase)
                    && !after_sentence_end(paragraph, start) =>
                {
                    return None;
                }
                _ => {}
            }
        }
        match c {
            '“' | '"' => return None,
            '.' | '!' | '?' => {
                sentences += 1;
                if sentences == 2 {
                    return None;
                }
            }
            _ => {}
        }
    }
    None
}

fn after_sentence_end(text: &str, start: usize) -> bool {
    starts_sentence(&text[..start])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::SourceFile;

    fn gender_of(card: &str) -> Option<Gender> {
        let file = SourceFile::parse(
            "Compendium/Characters/CHAR-x.md".into(),
            card.into(),
            &Default::default(),
        );
        card_gender(file.card().expect("a card"))
    }

    #[test]
    fn one_pronoun_of_the_card_s_summary_gives_its_gender_unless_the_other_stands_beside_it() {
        let card = |summary: &str| {
            format!("---\ntype: character\nname: Iria Vell\n---\n\n# Iria Vell\n\n{summary}\n")
        };
        assert_eq!(
            gender_of(&card("Keeps the ledger by rules she thinks are cowardly.")),
            Some(Gender::She)
        );
        assert_eq!(
            gender_of(&card("A carter; his mule is old.")),
            Some(Gender::He)
        );
        assert_eq!(gender_of(&card("She loves him, and he knows it.")), None);
        assert_eq!(gender_of(&card("Keeps the salt ledger.")), None);
    }

    /// A manuscript whose cards say nothing of Iria's or Bastian's gender.
    fn manuscript(scene: &str) -> (tempfile::TempDir, crate::index::Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("Compendium/Characters")).unwrap();
        std::fs::create_dir_all(root.join("Story/Scenes")).unwrap();
        for name in ["Iria", "Bastian"] {
            std::fs::write(
                root.join(format!(
                    "Compendium/Characters/CHAR-{}.md",
                    name.to_lowercase()
                )),
                format!(
                    "---\ntype: character\nname: {name}\n---\n\n# {name}\n\nKeeps the ledger.\n"
                ),
            )
            .unwrap();
        }
        std::fs::write(
            root.join("Story/Scenes/SCN-gate.md"),
            format!("---\ntitle: Gate\n---\n\n{scene}"),
        )
        .unwrap();
        let workspace = crate::index::Workspace::load(root);
        (dir, workspace)
    }

    #[test]
    fn a_card_without_a_gender_takes_the_one_the_book_gives_it() {
        let (_dir, workspace) = manuscript(
            "Iria waited by the gate. She had the key.\n\n\
             Bastian came late. He was soaked.\n\n\
             Iria counted the carts; she wrote each down.\n\n\
             Bastian shrugged; he was used to it.\n\n\
             Iria laughed, and then she was quiet.\n\n\
             Bastian sat down. Then he slept.\n",
        );
        let iria = "Compendium/Characters/CHAR-iria.md";
        let bastian = "Compendium/Characters/CHAR-bastian.md";
        assert_eq!(workspace.catalog().gender(iria), Some(None));
        assert_eq!(workspace.gender(iria), Some(Some(Gender::She)));
        assert_eq!(workspace.gender(bastian), Some(Some(Gender::He)));
    }

    #[test]
    fn a_pronoun_after_someone_else_or_in_another_sentence_gives_no_gender() {
        // Each "she" may mean someone else first: the woman, Tessa (no
        // card), the quotation's speaker, a later sentence's subject.
        let (_dir, workspace) = manuscript(
            "Iria saw the woman. She waved.\n\n\
             Iria met Tessa. She smiled.\n\n\
             Iria turned. “She is late.”\n\n\
             Iria sat. The rain fell. She slept.\n",
        );
        assert_eq!(
            workspace.gender("Compendium/Characters/CHAR-iria.md"),
            Some(None)
        );
    }

    #[test]
    fn two_readings_of_five_against_the_rest_give_no_gender() {
        let (_dir, workspace) = manuscript(
            "Iria came. She sat.\n\nIria came. She sat.\n\nIria came. She sat.\n\n\
             Iria came. He sat.\n\nIria came. He sat.\n",
        );
        assert_eq!(
            workspace.gender("Compendium/Characters/CHAR-iria.md"),
            Some(None)
        );
    }

    #[test]
    fn typing_a_third_reading_gives_the_gender_and_typing_elsewhere_keeps_it() {
        let scene = "Iria came. She sat.\n\nIria came. She sat.\n\nThe rain fell.\n";
        let (_dir, mut workspace) = manuscript(scene);
        let iria = "Compendium/Characters/CHAR-iria.md";
        assert_eq!(workspace.gender(iria), Some(None));
        let path = "Story/Scenes/SCN-gate.md";
        let typed = |text: &str, workspace: &crate::index::Workspace| {
            let paths = workspace.config().paths.clone();
            crate::index::SourceFile::parse(path.into(), text.into(), &paths)
        };
        let old = workspace.file(path).unwrap().text.to_string();
        let third = old.replace("The rain fell.", "Iria came. She sat.");
        workspace.insert_file(typed(&third, &workspace));
        assert_eq!(workspace.gender(iria), Some(Some(Gender::She)));
        let elsewhere = third.replace("came", "walked in");
        workspace.insert_file(typed(&elsewhere, &workspace));
        assert_eq!(workspace.gender(iria), Some(Some(Gender::She)));
        workspace.insert_file(typed(&old, &workspace));
        assert_eq!(workspace.gender(iria), Some(None));
    }
}
