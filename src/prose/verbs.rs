//! Verbs by lemma: a set of verbs named once ("swing", "lift") that reads
//! any of their forms ("swings", "swung", "swinging", "lifted"). Regular
//! forms are made by the rules of English endings ("-s", "-es", "-d",
//! "-ed", "-ing", a doubled last consonant, "y" to "ies"/"ied", a dropped
//! "e" before "-ing"); irregular ones come from [`IRREGULAR`]. A form no
//! verb has ("swinged") costs a set entry and nothing else.
//!
//! The verbs of speech are one such set ([`is_speech_verb`]): the checks'
//! dialogue attribution and the cast an import proposes read the same.

use rustc_hash::FxHashSet;

/// Irregular forms of the verbs the checks read, by lemma.
const IRREGULAR: &[(&str, &[&str])] = &[
    ("bear", &["bore", "borne"]),
    ("begin", &["began", "begun"]),
    ("bring", &["brought"]),
    ("catch", &["caught"]),
    ("cling", &["clung"]),
    ("dig", &["dug"]),
    ("draw", &["drew", "drawn"]),
    ("dream", &["dreamt"]),
    ("feel", &["felt"]),
    ("fight", &["fought"]),
    ("fling", &["flung"]),
    ("grind", &["ground"]),
    ("hang", &["hung"]),
    ("hold", &["held"]),
    ("keep", &["kept"]),
    ("know", &["knew", "known"]),
    ("lean", &["leant"]),
    ("leap", &["leapt"]),
    ("mean", &["meant"]),
    ("ride", &["rode", "ridden"]),
    ("rise", &["rose", "risen"]),
    ("run", &["ran"]),
    ("say", &["said", "saith"]),
    ("seek", &["sought"]),
    ("shake", &["shook", "shaken"]),
    ("sing", &["sang", "sung"]),
    ("sling", &["slung"]),
    ("speak", &["spoke", "spoken"]),
    ("spring", &["sprang", "sprung"]),
    ("strike", &["struck", "stricken"]),
    ("swing", &["swung"]),
    ("take", &["took", "taken"]),
    ("tell", &["told"]),
    ("think", &["thought"]),
    ("throw", &["threw", "thrown"]),
    ("wear", &["wore", "worn"]),
    ("weep", &["wept"]),
    ("wring", &["wrung"]),
];

/// Every form of a set of verbs.
#[derive(Debug)]
pub struct Verbs {
    forms: FxHashSet<String>,
}

impl Verbs {
    /// The verbs `lemmas`, in all their forms.
    pub fn of(lemmas: &[&str]) -> Verbs {
        let mut forms = FxHashSet::default();
        for lemma in lemmas {
            for ending in ["", "s", "es", "d", "ed", "ing"] {
                forms.insert(format!("{lemma}{ending}"));
            }
            if let Some(last) = lemma.chars().last() {
                forms.insert(format!("{lemma}{last}ed"));
                forms.insert(format!("{lemma}{last}ing"));
            }
            if let Some(stem) = lemma.strip_suffix('y') {
                forms.insert(format!("{stem}ies"));
                forms.insert(format!("{stem}ied"));
            }
            if let Some(stem) = lemma.strip_suffix('e') {
                forms.insert(format!("{stem}ing"));
            }
            if let Some((_, irregular)) = IRREGULAR.iter().find(|(verb, _)| verb == lemma) {
                forms.extend(irregular.iter().map(|form| (*form).to_owned()));
            }
        }
        Verbs { forms }
    }

    /// Whether `word` is a form of one of the verbs, in any case.
    pub fn contains(&self, word: &str) -> bool {
        if word.bytes().any(|byte| byte.is_ascii_uppercase()) {
            return self.forms.contains(&word.to_ascii_lowercase());
        }
        self.forms.contains(word)
    }
}

/// Verbs of speech, by lemma; [`is_speech_verb`] reads any of their forms
/// ("say, says, said, saying"; "cry, cries, cried"; "snap, snapped").
const SPEECH_LEMMAS: &[&str] = &[
    "add",
    "admit",
    "agree",
    "announce",
    "answer",
    "ask",
    "assent",
    "assure",
    "bawl",
    "beg",
    "begin",
    "bellow",
    "blurt",
    "boom",
    "breathe",
    "call",
    "chuckle",
    "concede",
    "confess",
    "continue",
    "correct",
    "croak",
    "cry",
    "declare",
    "demand",
    "drawl",
    "enquire",
    "exclaim",
    "explain",
    "falter",
    "gasp",
    "giggle",
    "groan",
    "growl",
    "grumble",
    "grunt",
    "hiss",
    "inquire",
    "insist",
    "interpose",
    "interrupt",
    "jeer",
    "laugh",
    "mumble",
    "murmur",
    "mutter",
    "object",
    "observe",
    "offer",
    "persist",
    "plead",
    "promise",
    "protest",
    "pursue",
    "query",
    "question",
    "rejoin",
    "remark",
    "repeat",
    "reply",
    "resume",
    "retort",
    "return",
    "roar",
    "say",
    "scream",
    "shout",
    "shriek",
    "sigh",
    "sing",
    "snap",
    "snarl",
    "sneer",
    "sob",
    "speak",
    "stammer",
    "stutter",
    "suggest",
    "tell",
    "urge",
    "venture",
    "wail",
    "warn",
    "whimper",
    "whine",
    "whisper",
    "yell",
];

/// Whether `word` is a form of a verb of speech.
pub fn is_speech_verb(word: &str) -> bool {
    static SPEECH: std::sync::LazyLock<Verbs> =
        std::sync::LazyLock::new(|| Verbs::of(SPEECH_LEMMAS));
    SPEECH.contains(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verb_is_read_in_any_of_its_forms_regular_or_not() {
        let verbs = Verbs::of(&["swing", "carry", "grab", "button", "drag", "use", "say"]);
        for form in [
            "swing", "swings", "swung", "swinging", "carried", "carries", "grabbed", "grabbing",
            "buttoned", "dragging", "using", "used", "said", "Said",
        ] {
            assert!(verbs.contains(form), "{form}");
        }
        for word in ["swang", "sword", "buttons'", "saying's"] {
            assert!(!verbs.contains(word), "{word}");
        }
    }
}
