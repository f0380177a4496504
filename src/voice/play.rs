//! Playing a voice tournament: every contestant drafts the same test
//! passage under the same context, concurrently, and the versions land side
//! by side in one Markdown file, each under its numbered heading with the
//! voice it was asked for, the model that wrote it and its measured traits.
//! The file is the writer's to read and edit; picking reads the version as
//! it is in the file then. Round two crosses two versions; "why does this
//! work?" asks the model for its account of one.
//!
//! A contestant's reply is held to the prose contract (no talk about the
//! task, no echo of the prompt, not cut off), and sent back with the
//! problem at most twice; a contestant that never writes usable prose is
//! shown failed with the reason, and the others still land.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::contestant::{Contestant, TestPassage};
use super::file::TournamentFile;
use super::tournament::{Entry, Tournament, Version, measure};
use super::{Unusable, VoiceError};
use crate::index::Workspace;
use crate::llm::model::{Message, Model, ModelRequest};
use crate::runs::contract::{self, PathGuard};
use crate::runs::prompts::{Output, PromptBuilder, PromptInputs, PromptStep, SlotKind, SlotText};

/// Rounds after the first when a contestant's reply goes back with its problem.
const MAX_RETRIES: usize = 2;

/// What a tournament needs.
#[derive(Clone)]
pub struct Voice {
    pub workspace: Arc<Workspace>,
    pub prompts: Arc<dyn PromptBuilder>,
    pub model: Arc<dyn Model>,
}

/// What the contestants are told the passage is.
pub fn brief(workspace: &Workspace, passage: &TestPassage) -> Result<String, VoiceError> {
    match passage {
        TestPassage::Description(text) => Ok(text.clone()),
        TestPassage::Selection {
            path,
            start_line,
            end_line,
            text,
        } => Ok(format!(
            "Re-voice this passage of {path} (lines {start_line}–{end_line}), keeping what happens \
             in it and who is there:\n\n{text}"
        )),
        TestPassage::Scene { id } => scene_brief(workspace, id),
    }
}

fn scene_brief(workspace: &Workspace, id: &str) -> Result<String, VoiceError> {
    let catalog = workspace.catalog();
    let entry = catalog
        .outline()
        .and_then(|file| file.outline())
        .and_then(|outline| outline.entries.iter().find(|entry| entry.scene_id == id))
        .ok_or_else(|| VoiceError::NotInOutline(id.to_owned()))?;
    let scene = catalog.scene(id).and_then(|file| file.scene());
    let mut out = format!("Scene {id}");
    if let Some(title) = scene.and_then(|scene| scene.title.as_deref()) {
        out.push_str(&format!(" “{title}”"));
    }
    out.push_str(&format!(": {}", entry.beat));
    for beat in &entry.sub_beats {
        out.push_str(&format!("\n- {beat}"));
    }
    if let Some(scene) = scene {
        if let Some(pov) = &scene.pov {
            out.push_str(&format!("\nPoint of view: {}", pov.text));
        }
        if let Some(location) = &scene.location {
            out.push_str(&format!("\nWhere: {}", location.text));
        }
        if !scene.characters.is_empty() {
            let names: Vec<&str> = scene.characters.iter().map(|c| c.text.as_str()).collect();
            out.push_str(&format!("\nWho is there: {}", names.join(", ")));
        }
    }
    Ok(out)
}

/// Runs every contestant at once; `on_done(done, of, label)` is told as
/// each finishes. Fails only when none wrote anything usable.
pub async fn run(
    voice: &Voice,
    tournament: &Tournament,
    on_done: &(dyn Fn(usize, usize, &str) + Send + Sync),
    cancel: &CancellationToken,
) -> Result<Vec<Entry>, VoiceError> {
    let brief = brief(&voice.workspace, &tournament.passage)?;
    let mut asks = JoinSet::new();
    for (at, contestant) in tournament.contestants.iter().enumerate() {
        let request = contestant_request(voice, tournament, &brief, at, contestant)?;
        let model = voice.model.clone();
        asks.spawn(async move {
            let began = std::time::Instant::now();
            let outcome = ask(&*model, request).await;
            (at, outcome, began.elapsed().as_millis())
        });
    }
    let mut outcomes: Vec<Option<Result<Version, Unusable>>> =
        vec![None; tournament.contestants.len()];
    let mut done = 0;
    loop {
        let joined = tokio::select! {
            joined = asks.join_next() => joined,
            () = cancel.cancelled() => {
                asks.abort_all();
                return Err(VoiceError::Cancelled);
            }
        };
        let Some(joined) = joined else { break };
        let Ok((at, outcome, elapsed_ms)) = joined else {
            // A contestant's task that panicked or was aborted: the others
            // still land, and it shows as unfinished.
            continue;
        };
        done += 1;
        on_done(done, outcomes.len(), &tournament.contestants[at].label);
        outcomes[at] = Some(outcome.map(|(text, served_by, attempts)| {
            let traits = measure(&text);
            Version {
                text,
                served_by,
                traits,
                attempts,
                elapsed_ms,
            }
        }));
    }
    let entries: Vec<Entry> = tournament
        .contestants
        .iter()
        .cloned()
        .zip(outcomes)
        .map(|(contestant, outcome)| Entry {
            contestant,
            outcome: outcome.unwrap_or(Err(Unusable::Unfinished)),
        })
        .collect();
    if entries.iter().all(|entry| entry.outcome.is_err()) {
        let reasons = entries
            .iter()
            .filter_map(|entry| {
                let why = entry.outcome.as_ref().err()?;
                Some((entry.contestant.label.clone(), why.clone()))
            })
            .collect();
        return Err(VoiceError::NoVersion(reasons));
    }
    Ok(entries)
}

fn contestant_request(
    voice: &Voice,
    tournament: &Tournament,
    brief: &str,
    at: usize,
    contestant: &Contestant,
) -> Result<ModelRequest, VoiceError> {
    let mut target = voice.model.target("writer");
    if let (Some(target), Some(model)) = (target.as_mut(), &contestant.model) {
        target.model = model.clone();
    }
    let mut args = Map::new();
    if let TestPassage::Scene { id } = &tournament.passage {
        args.insert("scene_id".into(), json!(id));
        if let Some(file) = voice.workspace.catalog().scene(id) {
            args.insert("scene_path".into(), Value::String(file.path.to_string()));
        }
    }
    let task = format!("voice tournament {}: {}", tournament.id, contestant.label);
    let step_id = format!("tournament-{}", at + 1);
    let assembly = voice
        .prompts
        .build(
            PromptStep {
                step_id: &step_id,
                agent_archetype: "writer",
                prompt_type: "voice_contestant",
            },
            &PromptInputs::for_target(
                &task,
                &args,
                vec![
                    slot("test_passage", brief, SlotKind::Artifact),
                    slot(
                        "voice_strategy",
                        &contestant.instructions,
                        SlotKind::Artifact,
                    ),
                    slot("words", &tournament.words.to_string(), SlotKind::Pointer),
                ],
                target.as_ref(),
                Some(&voice.workspace),
            ),
        )
        .map_err(|error| VoiceError::Prompt(error.to_string()))?;
    Ok(ModelRequest {
        model: contestant.model.clone(),
        ..assembly.request(step_id, "writer", "voice_contestant")
    })
}

fn slot<'a>(name: &'a str, text: &str, kind: SlotKind) -> SlotText<'a> {
    SlotText {
        name,
        text: text.to_owned(),
        kind,
    }
}

/// Asks until the reply is usable prose, at most twice again: (text,
/// `provider/model`, attempts), or why not.
async fn ask(model: &dyn Model, first: ModelRequest) -> Result<(String, String, usize), Unusable> {
    let mut request = first.clone();
    let mut last = Unusable::Unfinished;
    for attempt in 0..=MAX_RETRIES {
        if attempt > 0 {
            request.step_id = format!("{}.retry-{attempt}", first.step_id);
        }
        let reply = model
            .complete(&request)
            .await
            .map_err(|error| Unusable::Model(error.to_string()))?;
        let problem = usable(&reply.text, reply.cut_off, &request.messages);
        match problem {
            Ok(text) => {
                let served = format!("{}/{}", reply.actor.provider, reply.actor.model);
                return Ok((text, served, attempt + 1));
            }
            Err(why) => {
                last = why.clone();
                request.messages.push(Message::assistant(if reply.cut_off {
                    format!("{} […]", crate::text::clip(&reply.text, 400))
                } else {
                    reply.text.clone()
                }));
                request.messages.push(Message::user(format!(
                    "That reply cannot be used: {why}. Write the passage again: its prose \
                     only, in the voice asked for{}.",
                    if reply.cut_off { ", and shorter" } else { "" }
                )));
            }
        }
    }
    Err(Unusable::Retried {
        tries: MAX_RETRIES + 1,
        last: Box::new(last),
    })
}

/// The reply's prose, or why it is not a version.
fn usable(raw: &str, cut_off: bool, prompt: &[Message]) -> Result<String, Unusable> {
    if cut_off {
        return Err(Unusable::CutOff);
    }
    let mut checks = Vec::new();
    let accepted = contract::check_reply(
        raw,
        Output::Prose,
        None,
        &PathGuard::new(Vec::<String>::new()),
        &mut checks,
    )
    .map_err(Unusable::Contract)?;
    if let Some(echo) = contract::echo_of_prompt(&accepted.text, prompt) {
        return Err(Unusable::Contract(contract::Violation::Contract(echo)));
    }
    let text = accepted.text.trim().to_owned();
    if text.split_whitespace().count() < 20 {
        return Err(Unusable::TooFew(text.split_whitespace().count()));
    }
    Ok(text)
}

/// Round two: the versions `lead` and `other` of `file` (the tournament
/// file as it is now) crossed in three shares, 70/30, 50/50 and 30/70;
/// each cross asks `lead`'s model, when it named one.
pub fn cross(
    file: &TournamentFile,
    lead: &str,
    other: &str,
    words: Option<u32>,
) -> Result<Tournament, VoiceError> {
    let lead = file.version(lead)?;
    let other = file.version(other)?;
    if lead.number == other.number {
        return Err(VoiceError::CrossOfOne);
    }
    for version in [lead, other] {
        if version.text.trim().is_empty() {
            return Err(VoiceError::EmptyVersion {
                number: version.number,
                label: version.label.clone(),
                to: "cross",
            });
        }
    }
    let model = Contestant::parse(&lead.label)
        .ok()
        .and_then(|contestant| contestant.model);
    let contestants = [70, 50, 30]
        .into_iter()
        .map(|share| {
            Contestant::crossed(
                (&lead.label, &lead.text),
                (&other.label, &other.text),
                share,
                model.clone(),
            )
        })
        .collect();
    let mut tournament = Tournament::new(file.test_passage(), contestants, words)?;
    tournament.round = file.round + 1;
    tournament.parent = Some(file.id.clone());
    Ok(tournament)
}

/// "Why does this work?": the model's account of version `which` of the
/// tournament file `text`, in a novelist's terms, as the `### Why does this
/// work?` section to insert after the version's last line (0-based).
pub async fn why(voice: &Voice, text: &str, which: &str) -> Result<(usize, String), VoiceError> {
    let file =
        TournamentFile::read(text).ok_or_else(|| VoiceError::NotATournament("this".to_owned()))?;
    let version = file.version(which)?;
    if version.text.trim().is_empty() {
        return Err(VoiceError::EmptyVersion {
            number: version.number,
            label: version.label.clone(),
            to: "explain",
        });
    }
    let traits = measure(&version.text);
    let target = voice.model.target("critic");
    let args = Map::new();
    let task = format!("why version {} of {} works", version.number, file.id);
    let assembly = voice
        .prompts
        .build(
            PromptStep {
                step_id: "voice-why",
                agent_archetype: "critic",
                prompt_type: "voice_why",
            },
            &PromptInputs::for_target(
                &task,
                &args,
                vec![
                    slot("contestant", &version.text, SlotKind::Artifact),
                    slot("traits", &traits.lines().join("\n"), SlotKind::Pointer),
                    slot("voice_strategy", &version.voice, SlotKind::Pointer),
                ],
                target.as_ref(),
                Some(&voice.workspace),
            ),
        )
        .map_err(|error| VoiceError::Prompt(error.to_string()))?;
    let request = assembly.request("voice-why".to_owned(), "critic", "voice_why");
    let (answer, _, _) = ask(&*voice.model, request)
        .await
        .map_err(VoiceError::NoAccount)?;
    Ok((
        version.last_line,
        format!("### Why does this work?\n\n{}\n", answer.trim()),
    ))
}
