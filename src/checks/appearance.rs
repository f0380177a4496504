//! Whether a character named in a scene is there: speaking or acting in
//! the narration, and not in a memory, a dream, a grave or a hypothesis.
//! `dead-character` and `presence` read appearances the same way.

use crate::prose::Prose;
use crate::text::TextRange;

/// Words that turn what follows in the sentence into memory, mourning,
/// report or hypothesis ("if Kael came back", "the letter Kael sent").
const MEMORY_CUES: &[&str] = &[
    "remembered",
    "remember",
    "remembers",
    "remembering",
    "recalled",
    "recall",
    "recalls",
    "memory",
    "memories",
    "thought",
    "thinking",
    "dreamed",
    "dreamt",
    "dream",
    "imagined",
    "pictured",
    "missed",
    "mourned",
    "mourning",
    "grieved",
    "grieving",
    "grave",
    "tomb",
    "buried",
    "ghost",
    "late",
    "once",
    "used",
    "years",
    "ago",
    "if",
    "unless",
    "suppose",
    "supposing",
    "imagine",
    "wished",
    "hoped",
    "letter",
    "wrote",
];

/// Words after the name that put its clause in the past of the story.
const DATING_CUES: &[&str] = &["ago", "once", "formerly"];

/// Words of time that, in a relative clause about a thing ("the stones
/// which Tomas laid in a dry year", "the cairns where Tomas buried them,
/// the winter the boats went down"), put the clause before the story.
const PAST_TIMES: &[&str] = &[
    "year",
    "years",
    "winter",
    "summer",
    "spring",
    "autumn",
    "childhood",
    "youth",
    "born",
    "before",
];

/// Words that may open a relative clause about what a noun before them
/// names; "that" only after a noun its determiner introduces ("the rope
/// that Tomas coiled", not "Kael saw that Tomas stood").
const RELATIVES: &[&str] = &["where", "which", "whom", "that"];

/// Prepositions before "where" that make it a place of the story's now
/// ("Kael looked to where Tomas stood"), not a relative clause.
const PLACE_PREPOSITIONS: &[&str] = &["to", "from", "toward", "towards", "near", "at", "by"];

/// Determiners that introduce the noun a relative "that" follows.
const DETERMINERS: &[&str] = &[
    "the", "a", "an", "this", "that", "these", "those", "his", "her", "their", "its", "my", "our",
    "your", "every", "each", "some", "no",
];

/// The first and last token of a mention, when it lines up with whole words.
pub(super) fn mention_tokens(prose: &Prose, range: TextRange) -> Option<(usize, usize)> {
    let first = prose.token_at(range.start);
    let last = prose.token_at(range.end).checked_sub(1)?;
    let aligned = prose.tokens.get(first)?.range.start == range.start
        && prose.tokens.get(last)?.range.end == range.end;
    (aligned && first <= last).then_some((first, last))
}

/// Whether the mention at tokens `first..=last` sits in a clause of memory:
/// a word of memory earlier in its clause ("Kael remembered Tomas on the
/// wall"), or a word that dates it later in the clause ("Tomas laid these
/// stones forty years ago").
pub(super) fn in_memory_clause(text: &str, prose: &Prose, first: usize, last: usize) -> bool {
    let Some(sentence) = prose.sentence_of(first) else {
        return false;
    };
    let lower = |index: usize| crate::prose::lowercase(prose.tokens[index].text(text));
    let mut index = first;
    while index > sentence.tokens.start {
        index -= 1;
        // The attribution's clause starts after the quotation: "“You're
        // late,” Tomas said" is not "the late Tomas".
        if is_clause_break(text, prose, index)
            || prose.tokens[index].kind == crate::prose::TokenKind::CloseQuote
        {
            break;
        }
        if prose.tokens[index].is_word() && MEMORY_CUES.contains(&&*lower(index)) {
            return true;
        }
    }
    for index in last + 1..sentence.tokens.end {
        if is_clause_break(text, prose, index) {
            break;
        }
        if prose.tokens[index].is_word() && DATING_CUES.contains(&&*lower(index)) {
            return true;
        }
    }
    after_relative(text, prose, first)
        && (last + 1..sentence.tokens.end)
            .any(|index| prose.tokens[index].is_word() && PAST_TIMES.contains(&&*lower(index)))
}

/// Whether the name at token `first` opens a relative clause about a thing
/// named before it: "the cairns where Tomas", "the rope that Tomas".
fn after_relative(text: &str, prose: &Prose, first: usize) -> bool {
    let word = |index: usize| -> Option<String> {
        let token = prose.tokens.get(index)?;
        token
            .is_word()
            .then(|| crate::prose::lowercase(token.text(text)).into_owned())
    };
    let Some(relative) = first.checked_sub(1).and_then(word) else {
        return false;
    };
    if !RELATIVES.contains(&relative.as_str()) {
        return false;
    }
    let before = first.checked_sub(2).and_then(word);
    match relative.as_str() {
        "that" => (3..=4).any(|back| {
            first
                .checked_sub(back)
                .and_then(word)
                .is_some_and(|word| DETERMINERS.contains(&word.as_str()))
        }),
        "where" => before.is_none_or(|word| !PLACE_PREPOSITIONS.contains(&word.as_str())),
        _ => true,
    }
}

/// Where one clause ends and the next begins: `;`, `:`, a dash, or a
/// conjunction after a comma ("…, and then Tomas walked").
fn is_clause_break(text: &str, prose: &Prose, index: usize) -> bool {
    let token = &prose.tokens[index];
    if [';', ':', '—', '–']
        .iter()
        .any(|&c| token.is_punct(text, c))
    {
        return true;
    }
    token.is_word()
        && matches!(
            token.text(text),
            "and" | "but" | "then" | "so" | "yet" | "while"
        )
        && index
            .checked_sub(1)
            .is_some_and(|before| prose.tokens[before].is_punct(text, ','))
}

/// How a named character is present in a sentence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Appearance {
    /// The speaker of a dialogue attribution.
    Speaks,
    /// The subject of a narrated act: the verb's token.
    Acts(usize),
}

/// Whether the mention at `range` shows its character present: speaking or
/// acting in narration, not possessive, not in dialogue, not in memory.
pub(super) fn appearance(
    text: &str,
    prose: &Prose,
    range: TextRange,
    possessive: bool,
) -> Option<Appearance> {
    if possessive {
        return None;
    }
    let (first, last) = mention_tokens(prose, range)?;
    if prose.tokens[first].quoted || in_memory_clause(text, prose, first, last) {
        return None;
    }
    if super::speech::is_speaker(text, prose, first, last) {
        return Some(Appearance::Speaks);
    }
    super::speech::action_verb(text, prose, last).map(Appearance::Acts)
}
