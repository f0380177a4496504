//! Phase 2, the opinions: every participating agent gets the same injected
//! evidence, no tools and no sight of the others' replies; they are asked at
//! once, at most `concurrency` at a time, and each reply is validated against
//! the round's receipts and the current text.

use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::{
    Asked, Conference, ConferenceError, Event, Reply, ReplyOutcome, Request, Round, artifact, ask,
    check,
};
use crate::evidence::{self, ReceiptBook, Validator, Verdict, WorkspaceSources};
use crate::llm::model::{ModelRequest, Written};
use crate::llm::protocol;
use crate::runs::prompts::{SlotKind, SlotText};
use crate::runs::recipe::AgentStep;

impl Conference {
    /// Every agent at once (at most `concurrency` at a time), then each reply validated.
    pub(super) async fn phase_two(
        &self,
        request: &Request,
        round: &mut Round,
        evidence: &str,
        events: &(dyn Fn(Event) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<(), ConferenceError> {
        let semaphore = Arc::new(Semaphore::new(request.concurrency.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        let (writing, mut written) = tokio::sync::mpsc::unbounded_channel();
        for (index, agent) in request.agents.iter().enumerate() {
            let step = AgentStep {
                step_id: format!("opinion_{agent}"),
                agent_archetype: agent.clone(),
                input_slots: vec![],
                output_slot: format!("opinion_{agent}"),
                prompt_type: "conference_opinion".into(),
            };
            let sources = evidence::role_sources(agent).map_or("any workspace file", |(_, s)| s);
            let assembly = self.prompt(
                &step,
                request,
                vec![
                    SlotText {
                        name: "evidence",
                        text: evidence.to_owned(),
                        kind: SlotKind::Pointer,
                    },
                    artifact("sources", sources),
                ],
            )?;
            let model_request = ModelRequest {
                step_id: step.step_id.clone(),
                agent_archetype: agent.clone(),
                prompt_type: step.prompt_type.clone(),
                reply_limit: Some(assembly.reply_limit()),
                context_window: Some(assembly.window()),
                messages: assembly.messages,
                json_reply: false,
                schema: None,
                model: None,
            };
            let model = self.model.clone();
            let semaphore = semaphore.clone();
            let cancel = cancel.clone();
            let writing = writing.clone();
            let agent = agent.clone();
            tasks.spawn(async move {
                let _permit = semaphore.acquire_owned().await;
                let on_text = move |written: Written<'_>| {
                    let _ = writing.send(Event::Writing {
                        agent: agent.clone(),
                        words: written.words,
                        tail: written.tail.to_owned(),
                    });
                };
                (index, ask(&*model, &model_request, &on_text, &cancel).await)
            });
        }
        drop(writing);
        let total = request.agents.len();
        let mut answers: Vec<Option<Asked>> = (0..total).map(|_| None).collect();
        let mut done = 0;
        events(Event::Opinions { done, total });
        loop {
            // Words as the agents write them, until every agent has answered.
            let joined = tokio::select! {
                Some(event) = written.recv() => {
                    events(event);
                    continue;
                }
                joined = tasks.join_next() => joined,
            };
            let Some(joined) = joined else { break };
            let (index, asked) = match joined {
                Ok((index, Ok(asked))) => (index, asked),
                Ok((_, Err(error))) => {
                    tasks.abort_all();
                    return Err(error);
                }
                Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
                Err(_) => return Err(ConferenceError::Cancelled),
            };
            answers[index] = Some(asked);
            done += 1;
            events(Event::Opinions { done, total });
        }
        self.validate(request, round, answers);
        Ok(())
    }

    /// Each reply validated against the round's receipts and the current
    /// text, and recorded in the round with its packet and receipt.
    fn validate(&self, request: &Request, round: &mut Round, answers: Vec<Option<Asked>>) {
        // The round's receipts, and those on disk so that a receipt of
        // another round, or a tampered one, is told apart from an unknown one.
        let mut book = ReceiptBook::with_receipts(&self.key, &round.receipts);
        book.refresh(self.workspace.root());
        let sources = WorkspaceSources {
            workspace: &self.workspace,
        };
        let validator = Validator::new(&sources, &book);
        for (agent, asked) in request.agents.iter().zip(answers) {
            let asked = asked.expect("every task answered");
            let step_id = format!("opinion_{agent}");
            let (outcome, text, checks) = match &asked.reply {
                Ok(reply) => {
                    let text = protocol::parse(&reply.text).prose().trim().to_owned();
                    let verdict = validator.reply(&text, agent, &round.request.conference_id);
                    let checks = vec![check(
                        "evidence",
                        !matches!(verdict, Verdict::Rejected { .. }),
                        &verdict.describe(),
                    )];
                    (
                        ReplyOutcome::Answered {
                            text: text.clone(),
                            verdict,
                        },
                        Some(text),
                        checks,
                    )
                }
                Err(error) => (
                    ReplyOutcome::Failed {
                        error: error.to_string(),
                    },
                    None,
                    vec![],
                ),
            };
            self.record(round, &step_id, agent, &asked, text.as_deref(), checks);
            round.replies.push(Reply {
                agent: agent.clone(),
                outcome,
            });
        }
    }
}
