//! A character's grammatical gender, for resolving pronouns: declared on the
//! card (`gender`, `sex`, `pronouns`), else implied by the courtesy titles of
//! its names ("Mr. Darcy", "Miss Eliza Bennet"), else by the pronouns of its
//! summary. The catalog finds it once per card.

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
}
