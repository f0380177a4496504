//! harper's rules over one paragraph, each paragraph's findings kept by the
//! hash of its text.
//!
//! A `LintGroup` takes about 0.4 s to build and needs `&mut` to lint (it
//! keeps caches), so built groups wait in a pool, one taken per paragraph
//! and put back: the checks of several files lint in parallel. The findings
//! of a paragraph depend only on its text, the rules and the dialect, so
//! they are kept under those (up to [`MEMO_CAPACITY`] paragraphs): an edit
//! lints the paragraph it touched, and a scene opened again lints nothing.

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use harper_core::linting::{LintGroup, LintKind, Suggestion};
use harper_core::{Dialect as HarperDialect, Document};
use rustc_hash::{FxHashMap, FxHasher};

use super::rules::Rules;
use crate::index::config::Dialect;
use crate::text::TextRange;

/// How many paragraphs' findings are kept; past it the memo starts again.
const MEMO_CAPACITY: usize = 200_000;

/// What harper found in a paragraph, its range relative to the paragraph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrammarLint {
    pub range: TextRange,
    /// harper's name for the rule ("RepeatedWords").
    pub rule: String,
    pub message: String,
    /// A mistake of a word for another (a typo, an eggcorn, a malapropism):
    /// reported in dialogue too, where grammar has a speaker's licence.
    pub wrong_word: bool,
    pub replacements: Vec<Replacement>,
}

/// A way to fix a [`GrammarLint`]: its range becomes `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replacement {
    pub range: TextRange,
    pub text: String,
}

type Findings = Arc<[GrammarLint]>;

struct Proofreader {
    /// Built groups, with the dialect and rules they are set for.
    pool: Mutex<Vec<(Dialect, u64, LintGroup)>>,
    memo: Mutex<FxHashMap<(u64, u64), Findings>>,
}

fn proofreader() -> &'static Proofreader {
    static PROOFREADER: OnceLock<Proofreader> = OnceLock::new();
    PROOFREADER.get_or_init(|| Proofreader {
        pool: Mutex::new(Vec::new()),
        memo: Mutex::new(FxHashMap::default()),
    })
}

/// Set once harper's dictionary is loaded and a rule group built.
static READY: AtomicBool = AtomicBool::new(false);

/// Whether grammar can lint without first loading harper (about a second):
/// until then the `grammar` check says nothing, so that the first
/// diagnostics of an opened scene wait for nobody, and the language server
/// publishes again once [`warm_up`] is done.
pub fn is_ready() -> bool {
    READY.load(Ordering::Acquire)
}

/// Loads harper's dictionary and builds a rule group for the workspace's
/// rules and dialect, when its grammar is on and that is not done yet; it
/// blocks for about a second the first time. Whether it did anything.
pub fn warm_up(workspace: &crate::index::Workspace) -> bool {
    let language = &workspace.config().language;
    if is_ready() || language.grammar == crate::index::config::GrammarScope::Off {
        return false;
    }
    let rules = Rules::new(&language.rules, workspace.editor_rules());
    lint_paragraph("The words are ready.", &rules, language.dialect);
    READY.store(true, Ordering::Release);
    true
}

fn harper_dialect(dialect: Dialect) -> HarperDialect {
    match dialect {
        Dialect::American => HarperDialect::American,
        Dialect::British => HarperDialect::British,
        Dialect::Canadian => HarperDialect::Canadian,
        Dialect::Australian => HarperDialect::Australian,
        Dialect::Indian => HarperDialect::Indian,
    }
}

/// What harper's rules in force find in `text`, one paragraph's prose
/// (anything else in it blanked with spaces, so offsets are the file's).
pub fn lint_paragraph(text: &str, rules: &Rules, dialect: Dialect) -> Findings {
    let settings = {
        let mut hasher = FxHasher::default();
        (rules.fingerprint(), dialect).hash(&mut hasher);
        hasher.finish()
    };
    let key = {
        let mut hasher = FxHasher::default();
        text.hash(&mut hasher);
        (hasher.finish(), settings)
    };
    let proofreader = proofreader();
    if let Some(found) = lock(&proofreader.memo).get(&key) {
        return found.clone();
    }
    let mut group = take_group(proofreader, rules, dialect, settings);
    let found: Findings = lint_with(&mut group, text).into();
    lock(&proofreader.pool).push((dialect, settings, group));
    let mut memo = lock(&proofreader.memo);
    if memo.len() >= MEMO_CAPACITY {
        memo.clear();
    }
    memo.insert(key, found.clone());
    found
}

/// A group set for `rules` and `dialect`: one from the pool, set again if
/// it was set for other rules, or a new one.
fn take_group(
    proofreader: &Proofreader,
    rules: &Rules,
    dialect: Dialect,
    settings: u64,
) -> LintGroup {
    let taken = {
        let mut pool = lock(&proofreader.pool);
        let same = pool
            .iter()
            .position(|(d, s, _)| *d == dialect && *s == settings);
        let same_dialect = || pool.iter().position(|(d, _, _)| *d == dialect);
        same.or_else(same_dialect).map(|at| pool.swap_remove(at))
    };
    match taken {
        Some((_, set_for, group)) if set_for == settings => group,
        Some((_, _, group)) => configured(group, rules),
        None => configured(
            LintGroup::new_curated(super::speller::curated().clone(), harper_dialect(dialect)),
            rules,
        ),
    }
}

fn configured(mut group: LintGroup, rules: &Rules) -> LintGroup {
    let names: Vec<String> = group.iter_keys().map(str::to_owned).collect();
    for name in names {
        let on = rules.is_on(&name);
        group.config.set_rule_enabled(name, on);
    }
    group
}

fn lint_with(group: &mut LintGroup, text: &str) -> Vec<GrammarLint> {
    let document = Document::new_plain_english(text, super::speller::curated().as_ref());
    // Each char's byte offset, and the end: harper's spans count chars.
    let offsets: Vec<usize> = text
        .char_indices()
        .map(|(at, _)| at)
        .chain(std::iter::once(text.len()))
        .collect();
    let byte = |char_at: usize| offsets.get(char_at).copied().unwrap_or(text.len());
    let mut found = Vec::new();
    for (rule, lints) in group.organized_lints(&document) {
        for lint in lints {
            let range = TextRange::new(byte(lint.span.start), byte(lint.span.end));
            if range.is_empty() || is_licensed(&rule, range.slice(text), &text[range.end..]) {
                continue;
            }
            let replacements = lint
                .suggestions
                .iter()
                .map(|suggestion| match suggestion {
                    Suggestion::ReplaceWith(chars) => Replacement {
                        range,
                        text: chars.iter().collect(),
                    },
                    Suggestion::InsertAfter(chars) => Replacement {
                        range: TextRange::empty(range.end),
                        text: chars.iter().collect(),
                    },
                    Suggestion::Remove => Replacement {
                        range,
                        text: String::new(),
                    },
                })
                .collect();
            found.push(GrammarLint {
                range,
                rule: rule.clone(),
                message: lint.message,
                wrong_word: matches!(
                    lint.lint_kind,
                    LintKind::Typo
                        | LintKind::Eggcorn
                        | LintKind::Malapropism
                        | LintKind::Spelling
                        | LintKind::WordChoice
                ),
                replacements,
            });
        }
    }
    found.sort_by_key(|lint| (lint.range.start, lint.range.end));
    found
}

/// English that a rule mistakes for an error: "She had had enough", "that
/// that", the possessive before a gerund ("on their being joined", "its
/// being a degradation"), "the good will of", "ought of civility".
fn is_licensed(rule: &str, found: &str, after: &str) -> bool {
    let first = found.split_whitespace().next().unwrap_or_default();
    let is = |word: &str| first.eq_ignore_ascii_case(word);
    match rule {
        "RepeatedWords" => is("had") || is("that"),
        "TheirToTheyre" | "ItsContraction" => after.trim_start().starts_with("being"),
        "ModalOf" => is("will") || is("ought"),
        _ => false,
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lint(text: &str) -> Findings {
        lint_paragraph(text, &Rules::default(), Dialect::American)
    }

    #[test]
    fn a_doubled_word_and_a_sound_alike_are_found_with_their_fixes() {
        let text = "She opened the the door. Their going to the market.";
        let found = lint(text);
        let rules: Vec<&str> = found.iter().map(|lint| lint.rule.as_str()).collect();
        assert!(rules.contains(&"RepeatedWords"), "{found:?}");
        let doubled = found
            .iter()
            .find(|lint| lint.rule == "RepeatedWords")
            .unwrap();
        assert!(doubled.range.slice(text).contains("the the"));
        assert!(!doubled.replacements.is_empty());
        assert!(
            found.iter().any(|lint| lint.range.slice(text) == "Their"),
            "{found:?}"
        );
    }

    #[test]
    fn had_had_and_a_possessive_before_a_gerund_are_english() {
        assert!(lint("By noon she had had enough of the road.").is_empty());
        assert!(lint("On their being joined by the others, she left.").is_empty());
        assert!(lint("It grew on the good will of the house.").is_empty());
    }

    #[test]
    fn offsets_are_bytes_after_curly_quotes_and_dashes() {
        let text = "“Well—” She set down the the cup.";
        let found = lint(text);
        let doubled = found.iter().find(|lint| lint.rule == "RepeatedWords");
        assert_eq!(doubled.map(|lint| lint.range.slice(text)), Some("the the"));
    }

    #[test]
    fn a_rule_turned_off_finds_nothing_and_the_same_text_is_linted_once() {
        let text = "He walked to the the gate.";
        let off = Rules {
            overrides: [("RepeatedWords".to_owned(), false)].into(),
        };
        assert!(lint_paragraph(text, &off, Dialect::American).is_empty());
        let first = lint(text);
        let again = lint(text);
        assert!(Arc::ptr_eq(&first, &again));
    }
}
