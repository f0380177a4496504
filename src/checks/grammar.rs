//! `grammar`: what harper's rules a novelist wants find in a scene's
//! paragraphs (see `language::rules`): a word for its sound-alike, a doubled
//! word, a wrong article, a broken idiom, a verb that disagrees. Dialogue has
//! a speaker's licence: fragments, stammers and interruptions are not
//! errors there, so only a wrong word (a typo, an eggcorn, a malapropism) is
//! reported inside quotation marks. Checked where `[language] grammar` says
//! (by default `"open"`: the scenes open in the editor, and every scene in
//! `control-room check`; `"off"`: nowhere), each paragraph linted once for
//! its text and kept between runs (`language::saved`); until harper is
//! loaded, only what that memo holds (a paragraph it lacks asks for harper:
//! `language::grammar::load_if_wanted`).

use super::{Code, Diagnostic, FileEdit, Fix, FixKind, LazyProse, Severity};
use crate::index::{SourceFile, Workspace};
use crate::language::grammar::{cached, lint_paragraph};
use crate::language::rules::Rules;
use crate::syntax::BlockKind;
use crate::text::TextRange;

pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    prose: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if file.scene().is_none() || !workspace.proofreads(&file.path) {
        return;
    }
    let ready = crate::language::grammar::is_ready();
    let language = &workspace.config().language;
    let rules = Rules::new(&language.rules, workspace.editor_rules());
    let text = &*file.text;
    let syntax = &file.syntax;
    for block in syntax
        .blocks
        .iter()
        .filter(|block| block.kind == BlockKind::Paragraph)
    {
        let masked = masked_prose(text, block.range, syntax.prose_in(block.range));
        // Until harper is loaded, what the memo holds.
        let found = if ready {
            lint_paragraph(&masked, &rules, language.dialect)
        } else {
            match cached(&masked, &rules, language.dialect) {
                Some(found) => found,
                None => {
                    crate::language::grammar::note_unlinted();
                    continue;
                }
            }
        };
        for lint in found.iter() {
            let range = lint.range.shifted(block.range.start);
            if !lint.wrong_word && in_dialogue(prose, range) {
                continue;
            }
            let mut diagnostic = Diagnostic::new(
                file,
                range,
                Severity::Information,
                Code::Grammar,
                format!("{} ({})", lint.message.trim_end_matches('.'), lint.rule),
            );
            for replacement in &lint.replacements {
                let range = replacement.range.shifted(block.range.start);
                let title = if replacement.text.is_empty() {
                    format!("Remove “{}”", range.slice(text))
                } else if range.is_empty() {
                    format!("Insert “{}”", replacement.text)
                } else {
                    format!("Replace with “{}”", replacement.text)
                };
                diagnostic = diagnostic.with_fix(Fix {
                    title,
                    edits: vec![FileEdit {
                        path: file.path.clone(),
                        range,
                        new_text: replacement.text.clone(),
                    }],
                    kind: FixKind::Correction,
                });
            }
            diagnostics.push(diagnostic);
        }
    }
}

/// The block's text with everything that is not prose (markers, code, link
/// targets, comments) blanked byte for byte, so offsets stay the file's.
fn masked_prose(text: &str, block: TextRange, prose: impl Iterator<Item = TextRange>) -> String {
    let mut masked = String::with_capacity(block.len());
    let mut at = block.start;
    for range in prose {
        masked.extend(std::iter::repeat_n(' ', range.start - at));
        masked.push_str(range.slice(text));
        at = range.end;
    }
    masked.extend(std::iter::repeat_n(' ', block.end.saturating_sub(at)));
    masked
}

/// Whether the lint starts inside dialogue.
fn in_dialogue(prose: &LazyProse, range: TextRange) -> bool {
    let prose = prose.get();
    let at = prose.token_at(range.start);
    prose
        .tokens
        .get(at)
        .is_some_and(|token| token.quoted && token.range.start < range.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_prose_is_blanked_byte_for_byte() {
        let text = "x *Kael* saw [the](http://x.y) “gate”.";
        let prose = [
            TextRange::new(3, 7),
            TextRange::new(9, 13),
            TextRange::new(14, 17),
        ];
        let masked = masked_prose(text, TextRange::new(0, text.len()), prose.into_iter());
        assert_eq!(masked.len(), text.len());
        assert_eq!(&masked[3..7], "Kael");
        assert_eq!(&masked[14..17], "the");
        assert!(masked[17..].trim().is_empty());
    }
}
