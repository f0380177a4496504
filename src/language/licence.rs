//! English that one of harper's rules mistakes for an error, in the prose
//! of novels: constructions the rule's pattern matches whose context shows
//! them right. Each licence reads only the words around the finding, so it
//! holds in any book, not only the one it was found in.
//!
//! - "She had had enough", "that that", "etc. etc.": a word meant twice.
//! - A possessive before a gerund: "on their being joined", "their going
//!   was deferred", "its being a degradation".
//! - "their two sons": a possessive before a numeral and its noun.
//! - "an hour", "an honour", "an heir": an article before a silent h.
//! - "too short a stay", "too cross to write": `too` of excess degree.
//! - "as if he would have answered": a manner, not a counterfactual.
//! - "so I let down the glass": `let` with its own subject is a verb.
//! - "the good will of", "ought of civility": a noun, not a modal.

/// Whether harper's `rule`, finding `found` between `before` and `after`
/// (the paragraph's text on either side), mistakes right English for an
/// error.
pub fn is_licensed(rule: &str, before: &str, found: &str, after: &str) -> bool {
    let first = found.split_whitespace().next().unwrap_or_default();
    let is = |word: &str| first.trim_end_matches('.').eq_ignore_ascii_case(word);
    let next: Vec<String> = words(after).take(3).collect();
    let next = |at: usize| next.get(at).map_or("", String::as_str);
    match rule {
        "RepeatedWords" => is("had") || is("that") || is("etc"),
        "TheirToTheyre" => {
            is_possessive_gerund(before, next(0), next(1))
                || (is_numeral(next(0)) && !next(1).is_empty() && next(1) != "of")
        }
        "ItsContraction" => is_possessive_gerund(before, next(0), next(1)),
        "AnA" => is("an") && SILENT_H.iter().any(|stem| next(0).starts_with(stem)),
        "ToTwoToo" | "TooTo" => {
            is("too")
                && (matches!(next(1), "a" | "an")
                    || (next(1) == "to" && !next(2).is_empty() && !is_determiner(next(2))))
        }
        "IfWouldve" => is_as_if(before),
        "LetsConfusion" => is("let") && last_word(before).is_some_and(|word| is_subject(&word)),
        "ModalOf" => is("will") || is("ought"),
        _ => false,
    }
}

/// Words whose h is silent, so that they take `an` (in British usage, the
/// older and the current).
const SILENT_H: &[&str] = &["hour", "honour", "honor", "honest", "heir"];

/// A possessive before a gerund: `their going` after a preposition ("of
/// their going"), or followed by a verb that makes it the subject ("their
/// going was deferred"); `being` is a gerund wherever it is.
fn is_possessive_gerund(before: &str, gerund: &str, then: &str) -> bool {
    if gerund == "being" {
        return true;
    }
    gerund.len() > 4
        && gerund.ends_with("ing")
        && (last_word(before).is_some_and(|word| PREPOSITIONS.contains(&word.as_str()))
            || FINITE.contains(&then))
}

/// Prepositions a gerund follows: "on their being joined", "of its lasting".
const PREPOSITIONS: &[&str] = &[
    "about", "after", "against", "at", "before", "by", "for", "from", "of", "on", "upon", "till",
    "until", "without", "with", "to",
];

/// Finite verbs that make a gerund before them their subject.
const FINITE: &[&str] = &[
    "was", "were", "is", "are", "had", "has", "would", "could", "should", "might", "must", "will",
    "can", "did", "does", "made", "seemed",
];

/// Whether the `if` before the finding is the `as if` of manner.
fn is_as_if(before: &str) -> bool {
    let clause = before.rsplit(['.', '!', '?', ';']).next().unwrap_or(before);
    let recent: Vec<String> = words(clause).collect();
    recent
        .iter()
        .rposition(|word| word == "if")
        .is_some_and(|at| at > 0 && recent[at - 1] == "as")
}

fn is_numeral(word: &str) -> bool {
    matches!(
        word,
        "two" | "three" | "four" | "five" | "six" | "seven" | "eight" | "nine" | "ten" | "both"
    )
}

/// Words that begin a noun phrase: after `too … to` they make the `to` a
/// preposition ("too go to the store"), not the infinitive of excess
/// degree ("too cross to write").
fn is_determiner(word: &str) -> bool {
    matches!(
        word,
        "the"
            | "a"
            | "an"
            | "my"
            | "his"
            | "her"
            | "their"
            | "our"
            | "your"
            | "its"
            | "this"
            | "that"
            | "these"
            | "those"
            | "him"
            | "them"
            | "me"
            | "us"
    )
}

fn is_subject(word: &str) -> bool {
    matches!(
        word,
        "i" | "you" | "he" | "she" | "we" | "they" | "it" | "who" | "which"
    )
}

/// The words of `text`, lower case, without their punctuation.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split_whitespace()
        .map(|word| {
            word.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|word| !word.is_empty())
}

/// The last word of `text`, lower case, unless a sentence or clause ends
/// between it and the finding.
fn last_word(text: &str) -> Option<String> {
    let word = text.split_whitespace().next_back()?;
    if word.ends_with(['.', '!', '?', ';', ':', ',']) {
        return None;
    }
    let word = word
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    (!word.is_empty()).then_some(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn licensed(rule: &str, text: &str, found: &str) -> bool {
        let at = text.find(found).unwrap();
        is_licensed(rule, &text[..at], found, &text[at + found.len()..])
    }

    #[test]
    fn a_possessive_before_a_gerund_is_licensed_where_the_gerund_is_a_noun() {
        assert!(licensed(
            "TheirToTheyre",
            "till noon, their going was deferred.",
            "their"
        ));
        assert!(licensed(
            "TheirToTheyre",
            "She spoke of their leaving.",
            "their"
        ));
        assert!(licensed("ItsContraction", "on its being known", "its"));
        assert!(!licensed(
            "TheirToTheyre",
            "Their going to the market.",
            "Their"
        ));
        assert!(!licensed(
            "TheirToTheyre",
            "I heard their moving to Leeds.",
            "their"
        ));
    }

    #[test]
    fn their_before_a_numeral_and_its_noun_is_a_possessive() {
        assert!(licensed(
            "TheirToTheyre",
            "where their two selves only were",
            "their"
        ));
        assert!(!licensed("TheirToTheyre", "their two of a kind", "their"));
    }

    #[test]
    fn an_before_a_silent_h_is_licensed_and_before_a_sounded_one_is_not() {
        assert!(licensed("AnA", "what an honour it was", "an"));
        assert!(licensed("AnA", "An hour passed.", "An"));
        assert!(!licensed("AnA", "It was an union of minds.", "an"));
        assert!(!licensed("AnA", "an house", "an"));
    }

    #[test]
    fn too_of_excess_degree_is_licensed_and_too_for_to_is_not() {
        assert!(licensed("ToTwoToo", "that left too short a period", "too"));
        assert!(licensed("ToTwoToo", "I was too cross to write.", "too"));
        assert!(!licensed("ToTwoToo", "I want too go to the store.", "too"));
        assert!(!licensed("ToTwoToo", "I want too see him.", "too"));
    }

    #[test]
    fn as_if_let_with_a_subject_and_etc_etc_are_licensed() {
        assert!(licensed(
            "IfWouldve",
            "as if he would have answered",
            "would have"
        ));
        assert!(!licensed(
            "IfWouldve",
            "If he would have come, we",
            "would have"
        ));
        assert!(licensed(
            "LetsConfusion",
            "and so I let down the glass",
            "let"
        ));
        assert!(!licensed("LetsConfusion", "Come on, lets go.", "lets"));
        assert!(licensed(
            "RepeatedWords",
            "at any time, etc. etc.; and",
            "etc. etc."
        ));
        assert!(licensed("RepeatedWords", "She had had enough.", "had had"));
    }
}
