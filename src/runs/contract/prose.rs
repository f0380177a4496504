//! What makes a prose reply no prose: a reply cut off at its length limit,
//! talk about the task instead of the task done, and an echo of the prompt.

use super::Violation;
use crate::llm::model::{Message, ModelReply, Role};
use crate::receipts::Check;

/// How a model begins when it talks about the task instead of doing it.
const REFUSALS: [&str; 8] = [
    "i'm sorry",
    "i am sorry",
    "as an ai",
    "as a language model",
    "i cannot",
    "i can't",
    "i'm unable",
    "i am unable",
];

/// Why a prose reply is talk rather than the prose asked for, if it is.
pub(super) fn talk_not_prose(text: &str) -> Option<String> {
    let lower = text.trim_start().to_lowercase();
    REFUSALS
        .iter()
        .any(|opening| lower.starts_with(opening))
        .then(|| {
            let begins: String = text.chars().take(80).collect();
            format!("the reply talks about the task instead of doing it; it begins: {begins}")
        })
}

/// How the prompt's own scaffolding begins: canon cards, outline beats,
/// headings. A reply line that is one of these, word for word, was copied;
/// a line of the writer's prose given as input and kept by a revision was
/// not.
const SCAFFOLDING: [&str; 12] = [
    "■",
    "#",
    "beat:",
    "scene ",
    "canon cards",
    "previous:",
    "next:",
    "summary:",
    "aliases:",
    "status:",
    "eyes:",
    "conflicts with canon",
];

/// Why a prose reply is an echo of its prompt rather than an answer, if it
/// is: it begins with the task's own words, or most of its lines (three at
/// least, of 20 characters or more) are the prompt's instructions or its
/// scaffolding (cards, beats, headings), word for word. The writer's own
/// text in the prompt does not count: a revision keeps much of it.
pub fn echo_of_prompt(text: &str, prompt: &[Message]) -> Option<String> {
    // The instructions: the system message, and the requests after the
    // first (the reasons a reply was asked for again). The model's own
    // earlier replies are not: a revision keeps their lines.
    let first_request = prompt.iter().position(|message| message.role == Role::User);
    let system: String = prompt
        .iter()
        .enumerate()
        .filter(|(at, message)| {
            message.role == Role::System
                || (message.role == Role::User && first_request.is_some_and(|first| *at > first))
        })
        .map(|(_, message)| message.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let asked: String = prompt
        .iter()
        .map(|message| message.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let copied_line = |line: &str| {
        let lower = line.to_lowercase();
        system.contains(line)
            || (asked.contains(line) && SCAFFOLDING.iter().any(|mark| lower.starts_with(mark)))
    };
    let first = text.lines().find(|line| !line.trim().is_empty())?.trim();
    let lower = first.to_lowercase();
    if lower.starts_with("draft the scene") || lower.starts_with("draft a scene from outline") {
        return Some(format!(
            "the reply repeats the task (“{}”) instead of doing it",
            crate::text::clip(first, 80)
        ));
    }
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| line.chars().count() >= 20)
        .collect();
    let copied = lines.iter().filter(|line| copied_line(line)).count();
    (copied >= 3 && copied * 5 >= lines.len() * 3).then(|| {
        format!(
            "the reply copies its prompt instead of answering it: {copied} of its {} lines stand word for word in the prompt",
            lines.len()
        )
    })
}

/// A reply the server cut off at its length limit breaks its contract (a
/// check the receipt keeps): it is asked again, for less, and never
/// accepted as finished.
pub fn finished(reply: &ModelReply, checks: &mut Vec<Check>) -> Result<(), Violation> {
    match reply.cut_off_message() {
        Some(message) => {
            checks.push(Check::new("finished", false, message));
            // What the model is told names no setting of ours: a small
            // model repeats what it is told into its next reply.
            let limit = reply
                .effective
                .max_tokens
                .map_or(String::new(), |limit| format!(" of {limit} tokens"));
            Err(Violation::Contract(format!(
                "the reply was cut off at its length limit{limit} before it finished; answer again, much shorter, with only what was asked"
            )))
        }
        None => Ok(()),
    }
}

/// [`echo_of_prompt`] as a check: a broken contract when the reply echoes.
pub fn not_an_echo(
    text: &str,
    prompt: &[Message],
    checks: &mut Vec<Check>,
) -> Result<(), Violation> {
    match echo_of_prompt(text, prompt) {
        Some(message) => {
            checks.push(Check::new("prose", false, &message));
            Err(Violation::Contract(message))
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_that_echoes_its_prompt_is_caught_and_prose_is_not() {
        use crate::llm::model::Message;
        let prompt = [
            Message::system("You are the writer."),
            Message::user(
                "Draft the scene SCN-the-reckoning.\nBeat: Ysolde answers for the barred gate, and Kael takes the road back.\n■ Kael Maren (character, Compendium/Characters/CHAR-kael-maren.md)\n  summary: A warden of the salt road, one of the last still walking it.\n  eyes: grey; hair: black; age: 34 and more",
            ),
        ];
        let echo = "Draft the scene SCN-the-reckoning.\nThe tide rose.";
        assert!(
            echo_of_prompt(echo, &prompt)
                .unwrap()
                .contains("repeats the task")
        );
        let copied = "Beat: Ysolde answers for the barred gate, and Kael takes the road back.\n■ Kael Maren (character, Compendium/Characters/CHAR-kael-maren.md)\nsummary: A warden of the salt road, one of the last still walking it.\nThe sea.";
        assert!(
            echo_of_prompt(copied, &prompt)
                .unwrap()
                .contains("3 of its 3 lines")
        );
        let prose = "Ysolde stood at the barred gate with the keys at her throat.\nKael did not look at her.\nThe road back to the ninth waystone was long and wet and his.";
        assert_eq!(echo_of_prompt(prose, &prompt), None);
        // A revision keeps the lines of the draft it was given.
        let draft = "Ysolde stood at the barred gate with the keys at her throat.\nKael did not look at her at all.\nThe road back to the ninth waystone was long.";
        let revising = [
            prompt[0].clone(),
            Message::user(format!("Revise this draft:\n{draft}")),
        ];
        assert_eq!(echo_of_prompt(draft, &revising), None);
        // The reasons a reply was asked for again are instructions: a reply
        // that parrots them is no prose.
        let reasons = "Your reply could not be used: it was cut off at its length limit.\nReply again with the prose itself, or the prose inside tags.\nQuote text exactly as it is written, and name only the files.";
        let again = [
            prompt[0].clone(),
            prompt[1].clone(),
            Message::assistant("The tide."),
            Message::user(reasons),
        ];
        assert!(echo_of_prompt(reasons, &again).is_some());
        // The model's own earlier draft, sent back with feedback, is not.
        let with_feedback = [
            prompt[0].clone(),
            prompt[1].clone(),
            Message::assistant(draft),
            Message::user("The gates failed: name Ysolde once more."),
        ];
        assert_eq!(echo_of_prompt(draft, &with_feedback), None);
    }
}
