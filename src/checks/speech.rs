//! Who speaks and who acts in a sentence: dialogue attribution and narrated
//! actions, as the `dead-character` and `name-typo` checks read them.
//!
//! A name speaks when it stands beside a verb of speech in an attribution,
//! in either order (`"…," Kael said`, `Kael said, "…"`, `"…," said Kael`).
//! A name acts when it is directly followed (past an adverb) by a verb in the
//! simple past ("Tomas turned", "Tomas quickly stood"); "Tomas had once
//! stood" (past perfect) and "Tomas was" are not actions.

use crate::prose::verbs::is_speech_verb;
use crate::prose::{Prose, TokenKind};

/// Irregular verbs in the simple past that narrate an action.
const IRREGULAR_PAST: &[&str] = &[
    "ate",
    "awoke",
    "bent",
    "bit",
    "blew",
    "bore",
    "bought",
    "bound",
    "broke",
    "brought",
    "built",
    "burnt",
    "caught",
    "chose",
    "clung",
    "came",
    "crept",
    "dealt",
    "drank",
    "drew",
    "drove",
    "dug",
    "fed",
    "fell",
    "felt",
    "fled",
    "flew",
    "flung",
    "fought",
    "found",
    "forgot",
    "froze",
    "gave",
    "got",
    "grew",
    "held",
    "heard",
    "hid",
    "hit",
    "hung",
    "kept",
    "knelt",
    "knew",
    "laid",
    "leapt",
    "led",
    "left",
    "lit",
    "lost",
    "made",
    "meant",
    "met",
    "paid",
    "put",
    "ran",
    "rang",
    "rode",
    "rose",
    "sang",
    "sat",
    "saw",
    "sent",
    "shook",
    "shot",
    "shut",
    "slept",
    "slid",
    "slung",
    "smiled",
    "sold",
    "spat",
    "spent",
    "spoke",
    "sprang",
    "stood",
    "stole",
    "strode",
    "struck",
    "swam",
    "swept",
    "swore",
    "swung",
    "taught",
    "thought",
    "threw",
    "told",
    "took",
    "tore",
    "understood",
    "wept",
    "went",
    "woke",
    "wore",
    "won",
    "wound",
    "wrote",
    "said",
];

/// Words ending in "-ed" that are not verbs in the past.
const NOT_PAST: &[&str] = &[
    "bed", "bled", "breed", "creed", "deed", "exceed", "feed", "greed", "heed", "hundred",
    "indeed", "kindred", "naked", "need", "proceed", "red", "reed", "sacred", "seed", "shed",
    "sled", "speed", "steed", "succeed", "wed", "weed", "wicked", "beloved", "aged", "blessed",
    "cursed", "ragged", "rugged", "learned", "crooked", "jagged",
];

/// Words that may stand between a name and its verb ("Tomas slowly turned").
const BETWEEN: &[&str] = &["then", "still", "also", "again", "just", "only", "now"];

/// Whether `word` is a verb in the simple past that narrates an action.
pub fn is_past_action(word: &str) -> bool {
    if IRREGULAR_PAST.contains(&word) {
        return true;
    }
    word.len() >= 4
        && word.ends_with("ed")
        && word.chars().all(|c| c.is_lowercase())
        && !NOT_PAST.contains(&word)
}

/// The word after the name (tokens `first..=last`), past one adverb, when
/// nothing but spaces separate them.
fn verb_after(text: &str, prose: &Prose, last: usize) -> Option<usize> {
    for index in last + 1..last + 3 {
        let token = prose.tokens.get(index)?;
        if !token.is_word() {
            return None;
        }
        let word = token.text(text);
        let adverb = (word.ends_with("ly") && word.len() > 4) || BETWEEN.contains(&word);
        if !adverb {
            return Some(index);
        }
    }
    None
}

/// Whether the name at tokens `first..=last` speaks in a dialogue attribution.
pub fn is_speaker(text: &str, prose: &Prose, first: usize, last: usize) -> bool {
    if let Some(verb) = verb_after(text, prose, last)
        && is_speech_verb(prose.tokens[verb].text(text))
    {
        return true;
    }
    // `"…," said Kael`: the verb before the name, right after the quotation.
    let Some(before) = first.checked_sub(1).map(|index| &prose.tokens[index]) else {
        return false;
    };
    if !(before.is_word() && is_speech_verb(before.text(text))) {
        return false;
    }
    let ahead = first.checked_sub(2).map(|index| &prose.tokens[index]);
    match ahead {
        Some(token) if token.kind == TokenKind::CloseQuote => true,
        Some(token) if token.is_punct(text, ',') => first
            .checked_sub(3)
            .is_some_and(|index| prose.tokens[index].kind == TokenKind::CloseQuote),
        _ => false,
    }
}

/// The verb the name at tokens `first..=last` is the subject of, when it
/// narrates an action in the simple past.
pub fn action_verb(text: &str, prose: &Prose, last: usize) -> Option<usize> {
    let verb = verb_after(text, prose, last)
        .filter(|&verb| is_past_action(prose.tokens[verb].text(text)))
        .or_else(|| list_verb(text, prose, last))?;
    let word = prose.tokens[verb].text(text);
    // "Tomas used to sit there" is a habit, not an act.
    let habit = word == "used"
        && prose
            .tokens
            .get(verb + 1)
            .is_some_and(|next| next.text(text) == "to");
    (is_past_action(word) && !habit).then_some(verb)
}

/// The verb a list of subjects that the name at `last` begins or stands in
/// shares: "Crane, Gray, and old Pell arrived", "Crane and the doctor
/// knelt". The list goes on by commas and closes with "and" or "or"; each of
/// its items is at most three words and none a verb, and the verb in the
/// simple past comes right after the closing item. An aside between commas
/// ("Crane, the old pilot, drowned") is no list.
fn list_verb(text: &str, prose: &Prose, last: usize) -> Option<usize> {
    let next = prose.tokens.get(last + 1)?;
    if !(next.is_punct(text, ',') || matches!(next.text(text), "and" | "or")) {
        return None;
    }
    let mut closed = false;
    let mut item = 0;
    for index in last + 1..last + 16 {
        let token = prose.tokens.get(index)?;
        if token.quoted {
            return None;
        }
        if token.is_punct(text, ',') {
            item = 0;
            continue;
        }
        if !token.is_word() {
            return None;
        }
        let word = token.text(text);
        if matches!(word, "and" | "or") {
            closed = true;
            item = 0;
            continue;
        }
        if is_past_action(word) {
            return (closed && item > 0).then_some(index);
        }
        // A clause of the name's own: "Tomas was gone, and the lamp burned".
        if matches!(
            word,
            "was" | "were" | "is" | "are" | "had" | "has" | "did" | "who" | "which" | "that"
        ) {
            return None;
        }
        item += 1;
        if item > 3 {
            return None;
        }
    }
    None
}

/// Whether the name at tokens `first..=last` introduces a quotation:
/// `Kale said, "…"` or `Kale asked: "…"`.
pub fn introduces_quotation(text: &str, prose: &Prose, last: usize) -> bool {
    let Some(verb) = verb_after(text, prose, last) else {
        return false;
    };
    if !is_speech_verb(prose.tokens[verb].text(text)) {
        return false;
    }
    let mut next = prose.tokens[verb + 1..].iter();
    match next.next() {
        Some(token) if token.kind == TokenKind::OpenQuote => true,
        Some(token) if token.is_punct(text, ',') || token.is_punct(text, ':') => next
            .next()
            .is_some_and(|token| token.kind == TokenKind::OpenQuote),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_in_a_list_of_subjects_acts_with_the_list() {
        let acts = |text: &str, name: &str| {
            let syntax = crate::syntax::MarkdownParser::parse_fresh(text);
            let prose = Prose::analyse(text, &syntax);
            let at = text.find(name).unwrap();
            let last = prose.token_at(at);
            action_verb(text, &prose, last).map(|verb| prose.tokens[verb].text(text).to_owned())
        };
        let text = "The doctor, Gray, Crane, and old Pell arrived at noon.";
        assert_eq!(acts(text, "Crane").as_deref(), Some("arrived"));
        assert_eq!(acts(text, "Gray").as_deref(), Some("arrived"));
        assert_eq!(
            acts("Crane and the doctor knelt.", "Crane").as_deref(),
            Some("knelt")
        );
        assert_eq!(acts("Crane, the old pilot, drowned.", "Crane"), None);
        assert_eq!(acts("Crane, and then nothing.", "Crane"), None);
        assert_eq!(acts("Crane was gone, and the lamp burned.", "Crane"), None);
        assert_eq!(acts("Crane, who was old, and Gray knelt.", "Crane"), None);
    }

    #[test]
    fn a_speech_verb_is_read_in_any_of_its_forms() {
        for word in [
            "said",
            "says",
            "saying",
            "Said",
            "cried",
            "cries",
            "crying",
            "snapped",
            "snapping",
            "continued",
            "continuing",
            "replied",
            "began",
            "begging",
            "whispers",
            "told",
        ] {
            assert!(is_speech_verb(word), "{word}");
        }
        for word in [
            "sad", "cradle", "beds", "nodded", "walked", "stood", "sayings",
        ] {
            assert!(!is_speech_verb(word), "{word}");
        }
    }
}
