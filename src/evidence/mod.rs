//! Evidence validation (evidence-rules.md), LSP-free: the server checks every
//! `Evidence:` line against its own signed receipts and the current text,
//! never trusting the model.
//!
//! A conference reply has exactly one Evidence line or is `ABSTAIN`
//! ([`Validator::reply`]); any document is checked line by line, and a
//! conference transcript reply by reply with each reply's role
//! ([`Validator::document`]). Each rule gives a [`Code`]; only
//! `evidence-stale` is a warning.

pub mod book;
pub mod line;
pub mod transcript;

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

pub use self::book::{Lookup, ReceiptBook};
use self::line::EvidenceLine;
use crate::index::{FileContent, Workspace};
use crate::receipts::ToolReceipt;
use crate::storage::sha256_hex;
use crate::text::TextRange;

/// Where conference transcripts and other issues live.
pub const ISSUES_DIR: &str = ".control-room/issues";

/// What a reply or line breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    /// A reply without an Evidence line (and not `ABSTAIN`).
    Missing,
    /// A reply with more than one.
    Multiple,
    /// A quote not found in the file it cites.
    Quote,
    /// A receipt id that is unknown, of another round, or whose signature fails.
    Receipt,
    /// The cited file changed since the receipt read it.
    Stale,
    /// A citation outside the role's sources.
    Source,
    /// A claim without its quote, location or scope.
    Claim,
}

impl Code {
    /// Every code.
    pub const ALL: [Code; 7] = [
        Code::Missing,
        Code::Multiple,
        Code::Quote,
        Code::Receipt,
        Code::Stale,
        Code::Source,
        Code::Claim,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::Missing => "evidence-missing",
            Code::Multiple => "evidence-multiple",
            Code::Quote => "evidence-quote",
            Code::Receipt => "evidence-receipt",
            Code::Stale => "evidence-stale",
            Code::Source => "evidence-source",
            Code::Claim => "evidence-claim",
        }
    }

    /// Stale evidence is a warning (the text moved on); the rest are errors.
    pub fn is_warning(self) -> bool {
        self == Code::Stale
    }
}

/// One broken rule, at a byte range of the text validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub code: Code,
    pub range: TextRange,
    pub message: String,
}

/// What a conference reply comes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// One grounded Evidence line; warnings (stale) may come with it.
    Accepted {
        warnings: Vec<Problem>,
    },
    Abstained,
    Rejected {
        problems: Vec<Problem>,
    },
}

impl Verdict {
    /// One line for the transcript.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Accepted { warnings } if warnings.is_empty() => "accepted".to_owned(),
            Verdict::Accepted { warnings } => format!("accepted, with {}", list(warnings)),
            Verdict::Abstained => "abstained".to_owned(),
            Verdict::Rejected { problems } => format!("rejected: {}", list(problems)),
        }
    }

    pub fn is_accepted(&self) -> bool {
        matches!(self, Verdict::Accepted { .. })
    }
}

fn list(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|problem| format!("{} ({})", problem.code.as_str(), problem.message))
        .collect::<Vec<_>>()
        .join("; ")
}

/// What a cited file is, for the role source rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    Outline,
    Scene,
    Compendium,
    Issue,
    Other,
}

impl SourceKind {
    fn describe(self) -> &'static str {
        match self {
            SourceKind::Outline => "the outline",
            SourceKind::Scene => "a scene",
            SourceKind::Compendium => "the compendium",
            SourceKind::Issue => "an issue",
            SourceKind::Other => "a file that is not manuscript",
        }
    }
}

/// The sources a role may cite, and how to say so; `None` for any.
pub fn role_sources(role: &str) -> Option<(&'static [SourceKind], &'static str)> {
    use SourceKind::*;
    Some(match role {
        "planner" => (&[Outline], "the outline"),
        "writer" | "editor" | "critic" => (&[Scene], "scenes"),
        "continuity" | "librarian" => (&[Compendium, Scene], "the compendium or scenes"),
        "chief" => (
            &[Outline, Scene, Compendium, Issue],
            "the outline, scenes, the compendium or issues",
        ),
        _ => return None,
    })
}

/// The texts evidence may cite.
pub trait Sources {
    /// The current text of the workspace file `path`.
    fn text(&self, path: &str) -> Option<Arc<str>>;
    fn kind(&self, path: &str) -> SourceKind;
}

/// The workspace's files (the editor's text of open ones), and issues under
/// `.control-room/issues/` read from disk.
pub struct WorkspaceSources<'a> {
    pub workspace: &'a Workspace,
}

impl Sources for WorkspaceSources<'_> {
    fn text(&self, path: &str) -> Option<Arc<str>> {
        if let Some(file) = self.workspace.file(path) {
            return file.load_error.is_none().then(|| file.text.clone());
        }
        if path.starts_with(ISSUES_DIR) && crate::storage::check_relative_path(path).is_ok() {
            return read_issue(self.workspace.root(), path);
        }
        None
    }

    fn kind(&self, path: &str) -> SourceKind {
        if path.starts_with(ISSUES_DIR) {
            return SourceKind::Issue;
        }
        match self.workspace.file(path).map(|file| &file.content) {
            Some(FileContent::Scene(_)) => SourceKind::Scene,
            Some(FileContent::Outline(_)) => SourceKind::Outline,
            Some(FileContent::Card(_) | FileContent::AntiPatterns(_)) => SourceKind::Compendium,
            _ => SourceKind::Other,
        }
    }
}

fn read_issue(root: &Path, path: &str) -> Option<Arc<str>> {
    std::fs::read_to_string(root.join(path))
        .ok()
        .map(Into::into)
}

/// A cited file's text as quotes are compared, and its sha256.
struct Cited {
    normalised: String,
    sha256: String,
}

/// Validates evidence against `sources` and the receipts in `book`.
pub struct Validator<'a> {
    sources: &'a dyn Sources,
    book: &'a ReceiptBook,
    cited: RefCell<HashMap<String, Option<Arc<Cited>>>>,
}

impl<'a> Validator<'a> {
    pub fn new(sources: &'a dyn Sources, book: &'a ReceiptBook) -> Validator<'a> {
        Validator {
            sources,
            book,
            cited: RefCell::new(HashMap::new()),
        }
    }

    fn cited(&self, path: &str) -> Option<Arc<Cited>> {
        if let Some(known) = self.cited.borrow().get(path) {
            return known.clone();
        }
        let cited = self.sources.text(path).map(|text| {
            Arc::new(Cited {
                normalised: line::normalise(&text),
                sha256: sha256_hex(text.as_bytes()),
            })
        });
        self.cited
            .borrow_mut()
            .insert(path.to_owned(), cited.clone());
        cited
    }

    /// A conference reply by `role` in `round` (its receipts' session).
    /// Problem ranges are byte offsets into `reply`.
    pub fn reply(&self, reply: &str, role: &str, round: &str) -> Verdict {
        if reply.trim() == "ABSTAIN" {
            return Verdict::Abstained;
        }
        let lines: Vec<(usize, &str)> = lines_outside_fences(reply).collect();
        let evidence: Vec<(usize, EvidenceLine)> = lines
            .iter()
            .filter_map(|(offset, text)| line::parse(text).map(|line| (*offset, line)))
            .collect();
        let mut problems = match evidence.as_slice() {
            [] => vec![Problem {
                code: Code::Missing,
                range: TextRange::new(0, reply.len().min(first_line_len(reply))),
                message: "the reply has no Evidence line and is not ABSTAIN".to_owned(),
            }],
            [(offset, found)] => {
                let text = line_at(reply, *offset);
                self.line(found, text, *offset, Some(round), Some(role))
            }
            [_, rest @ ..] => rest
                .iter()
                .map(|(offset, _)| Problem {
                    code: Code::Multiple,
                    range: TextRange::new(*offset, *offset + line_at(reply, *offset).len()),
                    message: format!(
                        "the reply has {} Evidence lines; exactly one is allowed",
                        evidence.len()
                    ),
                })
                .collect(),
        };
        if problems.iter().all(|problem| problem.code.is_warning()) {
            Verdict::Accepted { warnings: problems }
        } else {
            problems.sort_by_key(|problem| problem.code.is_warning());
            Verdict::Rejected { problems }
        }
    }

    /// Every problem of a document: a conference transcript reply by reply
    /// (with its round and each reply's role), anything else line by line.
    pub fn document(&self, text: &str) -> Vec<Problem> {
        match transcript::read(text) {
            Some(read) => {
                let mut problems = Vec::new();
                for reply in &read.replies {
                    let body = &text[reply.body.start..reply.body.end];
                    let plain = transcript::unquote(body);
                    if plain.text.trim().is_empty() {
                        continue;
                    }
                    match self.reply(&plain.text, &reply.role, &read.conference_id) {
                        Verdict::Abstained => {}
                        Verdict::Accepted { warnings: found }
                        | Verdict::Rejected { problems: found } => {
                            problems.extend(found.into_iter().map(|mut problem| {
                                problem.range = match problem.code {
                                    Code::Missing => reply.heading,
                                    _ => plain.to_original(problem.range, reply.body.start),
                                };
                                problem
                            }));
                        }
                    }
                }
                problems
            }
            None => {
                let mut problems = Vec::new();
                for (offset, text) in lines_outside_fences(text) {
                    if let Some(found) = line::parse(text) {
                        problems.extend(self.line(&found, text, offset, None, None));
                    }
                }
                problems
            }
        }
    }

    /// The problems of one Evidence line at `offset`; receipts must belong
    /// to `round` when given, citations to `role`'s sources.
    pub fn line(
        &self,
        found: &EvidenceLine,
        text: &str,
        offset: usize,
        round: Option<&str>,
        role: Option<&str>,
    ) -> Vec<Problem> {
        // Each rule reports ranges within the line; they are moved to the
        // line's place in the text once all rules have run.
        let (mut problems, receipts) = self.receipt_problems(found, round);
        problems.extend(self.quote_problems(found, &receipts));
        problems.extend(self.stale_problems(found, &receipts));
        problems.extend(self.source_problems(found, role));
        problems.extend(claim_problem(found, text.len()));
        for problem in &mut problems {
            problem.range = problem.range.shifted(offset);
        }
        problems
    }

    /// The problems of the line's receipt ids, and the receipts that verify
    /// and belong to `round` (when given), each with its range.
    fn receipt_problems(
        &self,
        found: &EvidenceLine,
        round: Option<&str>,
    ) -> (Vec<Problem>, Vec<(TextRange, &'a ToolReceipt)>) {
        let mut problems = Vec::new();
        let mut receipts = Vec::new();
        for (range, id) in &found.receipts {
            let problem = |message: String| Problem {
                code: Code::Receipt,
                range: *range,
                message,
            };
            if !crate::receipts::is_receipt_id(id) {
                problems.push(problem(format!(
                    "`{id}` is not a receipt id (rcpt_ and 12 lowercase hex digits)"
                )));
                continue;
            }
            match self.book.get(id) {
                Lookup::Verified(receipt) => match round {
                    Some(round) if receipt.session_id != round => problems.push(problem(format!(
                        "{id} belongs to another round ({}), not to {round}",
                        receipt.session_id
                    ))),
                    _ => receipts.push((*range, receipt)),
                },
                Lookup::Tampered { .. } => problems.push(problem(format!(
                    "{id}'s signature does not verify: the receipt was changed after it was signed"
                ))),
                Lookup::Unknown => problems.push(problem(format!(
                    "{id} is not a receipt of {}",
                    round.map_or("this workspace".to_owned(), |round| format!(
                        "round {round}"
                    ))
                ))),
            }
        }
        (problems, receipts)
    }

    /// The problems of the line's quotes: each must be in the cited file, or
    /// else in a file one of its receipts read.
    fn quote_problems(
        &self,
        found: &EvidenceLine,
        receipts: &[(TextRange, &ToolReceipt)],
    ) -> Vec<Problem> {
        if let Some((range, path)) = &found.file
            && self.cited(path).is_none()
        {
            return vec![Problem {
                code: Code::Quote,
                range: *range,
                message: format!("{path} is not a file of this workspace"),
            }];
        }
        let candidates = quote_candidates(found, receipts);
        let mut problems = Vec::new();
        for (range, quote) in &found.quotes {
            let wanted = line::normalise(quote);
            let found_in = candidates.iter().find(|path| {
                self.cited(path)
                    .is_some_and(|cited| cited.normalised.contains(&wanted))
            });
            if found_in.is_none() {
                let message = match (&found.file, candidates.as_slice()) {
                    (Some((_, path)), _) => format!("“{quote}” is not in {path}"),
                    (None, []) => format!(
                        "“{quote}” names no file to be found in, and no receipt that read one"
                    ),
                    (None, paths) => format!(
                        "“{quote}” is not in the files its receipts read ({})",
                        paths.join(", ")
                    ),
                };
                problems.push(Problem {
                    code: Code::Quote,
                    range: *range,
                    message,
                });
            }
        }
        problems
    }

    /// The warnings for cited files that changed since a receipt read them,
    /// at most one per receipt.
    fn stale_problems(
        &self,
        found: &EvidenceLine,
        receipts: &[(TextRange, &ToolReceipt)],
    ) -> Vec<Problem> {
        let mut problems = Vec::new();
        for (range, receipt) in receipts {
            for read in &receipt.file_refs {
                let cited_here = match &found.file {
                    Some((_, path)) => *path == read.path,
                    None => true,
                };
                if !cited_here {
                    continue;
                }
                if let Some(cited) = self.cited(&read.path)
                    && cited.sha256 != read.sha256
                {
                    let range = found.file.as_ref().map_or(*range, |(range, _)| *range);
                    problems.push(Problem {
                        code: Code::Stale,
                        range,
                        message: format!(
                            "{} changed since {} read it (lines {}–{})",
                            read.path, receipt.receipt_id, read.start_line, read.end_line
                        ),
                    });
                    break;
                }
            }
        }
        problems
    }

    /// The problem of a cited file outside `role`'s sources, if there is one.
    fn source_problems(&self, found: &EvidenceLine, role: Option<&str>) -> Option<Problem> {
        if let (Some(role), Some((range, path))) = (role, &found.file)
            && let Some((allowed, described)) = role_sources(role)
            && self.cited(path).is_some()
        {
            let kind = self.sources.kind(path);
            if !allowed.contains(&kind) {
                return Some(Problem {
                    code: Code::Source,
                    range: *range,
                    message: format!(
                        "the {role} cites {} ({path}); the {role} cites {described}",
                        kind.describe()
                    ),
                });
            }
        }
        None
    }
}

/// The files a line's quotes may be found in: the file it cites, or else
/// every file its receipts read.
fn quote_candidates(found: &EvidenceLine, receipts: &[(TextRange, &ToolReceipt)]) -> Vec<String> {
    match &found.file {
        Some((_, path)) => vec![path.clone()],
        None => {
            let mut paths: Vec<String> = receipts
                .iter()
                .flat_map(|(_, receipt)| receipt.file_refs.iter().map(|r| r.path.clone()))
                .collect();
            paths.dedup();
            paths
        }
    }
}

/// The problem of a claim without its quote, location or scope, spanning
/// the whole line of `len` bytes, if there is one.
fn claim_problem(found: &EvidenceLine, len: usize) -> Option<Problem> {
    // A claim needs a quote or a location; a claim of absence needs a scope.
    let message = if found.negative {
        (found.file.is_none() && !found.scope).then_some(
            "missing-scope: a claim that something is absent must name where it looked (a scene, a file)",
        )
    } else if found.quotes.is_empty() && !found.location {
        Some(if found.file.is_some() {
            "missing-location: it cites a file but quotes nothing and gives no line or section"
        } else {
            "missing-quote: it quotes nothing and gives no file, line or section"
        })
    } else {
        None
    }?;
    Some(Problem {
        code: Code::Claim,
        range: TextRange::new(0, len),
        message: message.to_owned(),
    })
}

/// Each line of `text` with its byte offset, without the line break, skipping
/// fenced code blocks.
pub fn lines_outside_fences(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    let mut fenced = false;
    text.split_inclusive('\n').filter_map(move |raw| {
        let start = offset;
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let trimmed = line.trim_start_matches([' ', '>']).trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            return None;
        }
        (!fenced).then_some((start, line))
    })
}

fn line_at(text: &str, offset: usize) -> &str {
    let rest = &text[offset..];
    let end = rest.find('\n').unwrap_or(rest.len());
    rest[..end].trim_end_matches('\r')
}

fn first_line_len(text: &str) -> usize {
    text.find('\n').unwrap_or(text.len())
}

/// Whether `text` has an Evidence line (outside code): worth validating.
pub fn has_evidence(text: &str) -> bool {
    (text.contains("vidence") || text.contains("VIDENCE"))
        && lines_outside_fences(text).any(|(_, line)| line::marker_end(line).is_some())
}

#[cfg(test)]
mod tests;
