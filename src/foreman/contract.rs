//! The Foreman's output contract: a reply is a message to the writer and
//! the actions it asks for. It writes files only through the actions that
//! carry text (`write_template`, `apply_edit`): never a `<content_update>`,
//! never a scene's prose as its message. And it says only what the system
//! did: a mode it claims to have moved to is a move nothing made.
//!
//! A broken reply goes back to the model with the reason, as a system
//! message; one still broken after the retries is refused on the desk.

use crate::kb::mode::Mode;
use crate::llm::protocol::ParsedReply;

/// Why a reply breaks the contract.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Broken {
    #[error("the reply has no <message> for the writer and no action")]
    Empty,
    #[error(
        "the reply puts prose for {target} in a <content_update>; the Foreman changes files only through write_template (Story Bible parts) and apply_edit (a passage of a scene), and starts a draft with write_scene"
    )]
    ContentUpdate { target: String },
    #[error(
        "the message is a scene's prose ({words} words of narrative), not a word to the writer; the Foreman starts a draft with write_scene and never writes one itself"
    )]
    Draft { words: usize },
    #[error(
        "the message says the project moved to {claimed}, but nothing moved it: the mode is still {actual}; only the writer's confirmation of an advance_mode moves it, so propose it instead"
    )]
    ClaimedMove {
        claimed: &'static str,
        actual: &'static str,
    },
}

/// Checks `reply`, the model's in `mode` (the mode it is still in).
pub fn check(reply: &ParsedReply, mode: Mode) -> Result<(), Broken> {
    if let Some(update) = reply.content_updates.first() {
        let target = if update.target.is_empty() {
            "no file".to_owned()
        } else {
            update.target.clone()
        };
        return Err(Broken::ContentUpdate { target });
    }
    let message = reply.message.trim();
    if message.is_empty() && reply.actions.is_empty() {
        return Err(Broken::Empty);
    }
    if let Some(words) = draft_words(message) {
        return Err(Broken::Draft { words });
    }
    if let Some(claimed) = claimed_move(message).filter(|claimed| *claimed != mode) {
        return Err(Broken::ClaimedMove {
            claimed: claimed.label(),
            actual: mode.label(),
        });
    }
    Ok(())
}

/// The words of `message` when it reads as a scene's prose: at least 150
/// words in three paragraphs or more, with dialogue, that hardly speak to
/// the writer ("you", "your" fewer than one word in a hundred) and hold no
/// list or heading.
fn draft_words(message: &str) -> Option<usize> {
    let words: Vec<&str> = message.split_whitespace().collect();
    let paragraphs = message
        .split("\n\n")
        .filter(|paragraph| !paragraph.trim().is_empty())
        .count();
    let dialogue = message.contains('“') || message.matches('"').count() >= 2;
    let addressed = words
        .iter()
        .filter(|word| {
            let word = word
                .trim_matches(|c: char| !c.is_alphabetic())
                .to_lowercase();
            matches!(
                word.as_str(),
                "you" | "your" | "yours" | "you're" | "you’re"
            )
        })
        .count();
    let structured = message.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("- ") || line.starts_with("* ") || line.starts_with('#')
    });
    (words.len() >= 150
        && paragraphs >= 3
        && dialogue
        && addressed * 100 < words.len()
        && !structured)
        .then_some(words.len())
}

/// The mode a message says the project is now in ("Moving you to DIRECTOR
/// now", "you are now in EDITOR mode"), if it says so.
fn claimed_move(message: &str) -> Option<Mode> {
    let lower = message.to_lowercase().replace('’', "'");
    const CLAIMS: &[&str] = &[
        "moving you to ",
        "moving you into ",
        "moved you to ",
        "moved you into ",
        "moving the project to ",
        "moved the project to ",
        "switching you to ",
        "switched you to ",
        "advancing you to ",
        "advanced you to ",
        "you are now in ",
        "you're now in ",
        "we are now in ",
        "we're now in ",
        "the project is now in ",
        "welcome to ",
    ];
    CLAIMS.iter().find_map(|claim| {
        lower.match_indices(claim).find_map(|(at, _)| {
            let after = &lower[at + claim.len()..];
            let after = after
                .trim_start_matches("the ")
                .trim_start()
                .replace(' ', "_");
            Mode::ALL
                .iter()
                .copied()
                .find(|mode| after.starts_with(mode.id()))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::protocol::parse;

    #[test]
    fn prose_for_a_file_and_an_empty_reply_break_the_contract() {
        let reply = parse(
            "<message>Here it is.</message><content_update target=\"Story/Scenes/SCN-a.md\">She ran.</content_update>",
        );
        assert_eq!(
            check(&reply, Mode::Director),
            Err(Broken::ContentUpdate {
                target: "Story/Scenes/SCN-a.md".into()
            })
        );
        assert_eq!(check(&parse("   "), Mode::Architect), Err(Broken::Empty));
        assert_eq!(
            check(
                &parse("<message>The flaw is clear.</message>"),
                Mode::Architect
            ),
            Ok(())
        );
    }

    #[test]
    fn a_scene_written_as_the_message_breaks_it_and_guidance_that_quotes_a_line_does_not() {
        let paragraph = "The rain had not stopped since the ferry left the harbour, and Iria stood at the rail with her collar up, counting the lights of the coast as they went out one by one behind the swell.";
        let scene = format!(
            "{paragraph}\n\n“Cold,” said Kael, and he did not look at her.\n\n{paragraph}\n\n{paragraph}\n\n{paragraph}\n\n{paragraph}"
        );
        let reply = parse(&format!("<message>{scene}</message>"));
        assert!(
            matches!(check(&reply, Mode::Architect), Err(Broken::Draft { .. })),
            "{reply:?}"
        );
        let guidance = format!(
            "Your opening line, “Cold,” said Kael, works because it withholds. Before you draft, though, your beat sheet needs its midpoint.\n\n- Beat 8: what does Iria learn?\n- Beat 9: what does it cost you to keep the secret?\n\n{paragraph}"
        );
        assert_eq!(
            check(
                &parse(&format!("<message>{guidance}</message>")),
                Mode::Architect
            ),
            Ok(())
        );
    }

    #[test]
    fn a_message_that_claims_a_move_nothing_made_breaks_it() {
        let reply =
            parse("<message>Your Story Bible looks good. Moving you to DIRECTOR now.</message>");
        assert_eq!(
            check(&reply, Mode::Architect),
            Err(Broken::ClaimedMove {
                claimed: Mode::Director.label(),
                actual: Mode::Architect.label()
            })
        );
        // Naming a mode, or proposing a move, is not claiming one.
        let proposal =
            parse("<message>The gate to DIRECTOR is open; shall I propose moving on?</message>");
        assert_eq!(check(&proposal, Mode::Architect), Ok(()));
        // Saying where the project already is, is true.
        let true_claim = parse("<message>You are now in DIRECTOR mode.</message>");
        assert_eq!(check(&true_claim, Mode::Director), Ok(()));
    }
}
