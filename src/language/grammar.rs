//! harper's rules over one paragraph, each paragraph's findings kept by the
//! hash of its text.
//!
//! A `LintGroup` takes about 0.4 s to build and needs `&mut` to lint (it
//! keeps caches), so built groups wait in a pool, one taken per paragraph
//! and put back: the checks of several files lint in parallel. The findings
//! of a paragraph depend only on its text, the rules and the dialect, so
//! they are kept under those (up to [`MEMO_CAPACITY`] paragraphs): an edit
//! lints the paragraph it touched, and a scene opened again lints nothing.
//! The memo is saved beside the index's cache ([`super::saved`]), so a
//! manuscript checked before is checked again without loading harper at
//! all; harper loads on the first paragraph the memo does not hold (in the
//! language server, in the background: [`load_if_wanted`]).

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use harper_core::linting::{FlatConfig, LintGroup, LintKind, Suggestion};
use harper_core::{Dialect as HarperDialect, Document};
use rustc_hash::{FxHashMap, FxHasher};
use sha2::{Digest, Sha256};

use super::licence::is_licensed;
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

pub type Findings = Arc<[GrammarLint]>;

/// A paragraph's place in the memo: 128 bits of the SHA-256 of its text
/// (the memo outlives the process), and the hash of the rules and dialect.
pub(crate) type MemoKey = (u128, u64);

/// A paragraph's findings, and whether this process has asked for them
/// (only those are saved: a paragraph since rewritten drops out).
pub(crate) struct Memoised {
    pub findings: Findings,
    pub asked: bool,
}

struct Proofreader {
    /// Built groups, with the dialect and rules they are set for.
    pool: Mutex<Vec<(Dialect, u64, LintGroup)>>,
    memo: Mutex<FxHashMap<MemoKey, Memoised>>,
    /// Paragraphs linted by harper since the process started.
    linted: AtomicUsize,
}

fn proofreader() -> &'static Proofreader {
    static PROOFREADER: OnceLock<Proofreader> = OnceLock::new();
    PROOFREADER.get_or_init(|| Proofreader {
        pool: Mutex::new(Vec::new()),
        memo: Mutex::new(FxHashMap::default()),
        linted: AtomicUsize::new(0),
    })
}

/// Set once harper's dictionary is loaded and a rule group built, or when
/// the caller may wait for it ([`lint_on_demand`]).
static READY: AtomicBool = AtomicBool::new(false);

/// Whether grammar can lint a paragraph the memo does not hold without
/// first loading harper (about a second): until then the `grammar` check
/// reports only what the memo holds, so that the first diagnostics of an
/// opened scene wait for nobody, and the language server publishes again
/// once [`load_if_wanted`] has loaded harper.
pub fn is_ready() -> bool {
    READY.load(Ordering::Acquire)
}

/// Set when a check left a paragraph unlinted because the memo did not hold
/// it and harper was not loaded: harper is wanted ([`load_if_wanted`]).
static WANTED: AtomicBool = AtomicBool::new(false);

/// Set while one caller loads harper for [`load_if_wanted`].
static LOADING: AtomicBool = AtomicBool::new(false);

/// Says that a paragraph went unlinted for want of harper.
pub(crate) fn note_unlinted() {
    WANTED.store(true, Ordering::Release);
}

/// Whether a check left a paragraph unlinted for want of harper, and harper
/// is still not loaded.
pub fn wanted() -> bool {
    WANTED.load(Ordering::Acquire) && !is_ready()
}

/// Loads harper ([`warm_up`]) when a check left a paragraph unlinted for
/// want of it and no other caller is loading it: the language server loads
/// harper only once an open scene holds a paragraph its memo lacks, so a
/// manuscript opened to be read, whose paragraphs the memo holds, never
/// loads it. Whether it loaded harper: the caller then checks again.
pub fn load_if_wanted(workspace: &crate::index::Workspace) -> bool {
    /// Lets the next caller load, however this one ends (a panic included).
    struct Loading;
    impl Drop for Loading {
        fn drop(&mut self) {
            LOADING.store(false, Ordering::Release);
        }
    }
    if !wanted() || LOADING.swap(true, Ordering::AcqRel) {
        return false;
    }
    let _loading = Loading;
    let loaded = warm_up(workspace);
    if !loaded {
        // Grammar was turned off meanwhile: nothing waits for harper.
        WANTED.store(false, Ordering::Release);
    }
    loaded
}

/// Lets the checks load harper themselves, on the first paragraph the memo
/// does not hold: for `check`, which waits for its answer anyway and needs
/// no harper at all when the memo holds every paragraph.
pub fn lint_on_demand() {
    READY.store(true, Ordering::Release);
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
    let settings = settings(&rules, language.dialect);
    let proofreader = proofreader();
    let group = take_group(proofreader, &rules, language.dialect, settings);
    lock(&proofreader.pool).push((language.dialect, settings, group));
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

/// What the memo holds for `text` under these rules and dialect, without
/// harper.
pub fn cached(text: &str, rules: &Rules, dialect: Dialect) -> Option<Findings> {
    look_up(memo_key(text, rules, dialect), text)
}

/// The memo's findings for `text` kept under `key`, when they fit it.
fn look_up(key: MemoKey, text: &str) -> Option<Findings> {
    let mut memo = lock(&proofreader().memo);
    let memoised = memo.get_mut(&key)?;
    // Saved findings are read as untrusted: each must fit the paragraph.
    let fits = |range: TextRange| {
        range.end <= text.len()
            && text.is_char_boundary(range.start)
            && text.is_char_boundary(range.end)
    };
    let sound = memoised.findings.iter().all(|lint| {
        fits(lint.range)
            && lint
                .replacements
                .iter()
                .all(|replacement| fits(replacement.range))
    });
    if !sound {
        memo.remove(&key);
        return None;
    }
    memoised.asked = true;
    Some(memoised.findings.clone())
}

/// What harper's rules in force find in `text`, one paragraph's prose
/// (anything else in it blanked with spaces, so offsets are the file's):
/// from the memo, or linted (loading harper the first time).
pub fn lint_paragraph(text: &str, rules: &Rules, dialect: Dialect) -> Findings {
    let key = memo_key(text, rules, dialect);
    if let Some(found) = look_up(key, text) {
        return found;
    }
    let (text_hash, settings) = key;
    let proofreader = proofreader();
    let mut group = take_group(proofreader, rules, dialect, settings);
    let found: Findings = lint_with(&mut group, text).into();
    lock(&proofreader.pool).push((dialect, settings, group));
    proofreader.linted.fetch_add(1, Ordering::Relaxed);
    remember(text_hash, settings, found.clone(), true);
    found
}

/// Puts findings in the memo, which starts again once full.
pub(crate) fn remember(text: u128, settings: u64, findings: Findings, asked: bool) {
    let mut memo = lock(&proofreader().memo);
    if memo.len() >= MEMO_CAPACITY {
        memo.clear();
    }
    memo.insert((text, settings), Memoised { findings, asked });
}

/// The memo's paragraphs asked for in this process, for saving.
pub(crate) fn asked() -> Vec<(MemoKey, Findings)> {
    lock(&proofreader().memo)
        .iter()
        .filter(|(_, memoised)| memoised.asked)
        .map(|(key, memoised)| (*key, memoised.findings.clone()))
        .collect()
}

/// How many paragraphs harper has linted in this process.
pub fn linted() -> usize {
    proofreader().linted.load(Ordering::Relaxed)
}

/// Where the findings of `text` under these rules and dialect are kept.
pub(crate) fn memo_key(text: &str, rules: &Rules, dialect: Dialect) -> MemoKey {
    (text_hash(text), settings(rules, dialect))
}

fn text_hash(text: &str) -> u128 {
    let digest = Sha256::digest(text.as_bytes());
    u128::from_le_bytes(digest[..16].try_into().expect("SHA-256 has 32 bytes"))
}

/// The hash of the rules in force and the dialect.
fn settings(rules: &Rules, dialect: Dialect) -> u64 {
    let mut hasher = FxHasher::default();
    (rules.fingerprint(), dialect).hash(&mut hasher);
    hasher.finish()
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

/// The group with only the rules in force in its configuration: harper
/// hashes the configuration for each chunk it lints, and looks each rule up
/// in it, so the 900 rules a novel never wants are left out of it.
fn configured(mut group: LintGroup, rules: &Rules) -> LintGroup {
    let mut config = FlatConfig::default();
    for name in group.iter_keys().filter(|name| rules.is_on(name)) {
        config.set_rule_enabled(name, true);
    }
    group.config = config;
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
            if range.is_empty()
                || is_licensed(
                    &rule,
                    &text[..range.start],
                    range.slice(text),
                    &text[range.end..],
                )
            {
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
