//! A request no recipe takes, on the command line: the Chief splits it into
//! a session plan, saved as `plan.json` and `plan.md` and run with
//! `control-room plan run`, or asks one question, shown numbered; the
//! choice typed on standard input is handed back to be run in its place.

use std::io::BufRead;
use std::path::Path;

use super::running::tokio_runtime;
use crate::foreman::chief::{self, Decomposition};
use crate::plan::{PlanFiles, markdown};
use crate::runs::runner::{Runner, new_id, now};
use crate::runs::store::Disk;

/// What the Chief's answer leaves to do.
pub enum Decided {
    /// Nothing more: the command ends with this exit code.
    Ended(i32),
    /// The writer chose this request, which a recipe takes: run it.
    Run(String),
}

/// Decomposes `request`; a plan's id is printed, a question's choice handed back.
pub fn decompose(root: &Path, runner: &Runner, request: &str) -> anyhow::Result<Decided> {
    let Some(model) = runner.model.clone() else {
        anyhow::bail!("no recipe takes “{request}”, and there is no model to ask the Chief");
    };
    eprintln!("no recipe takes “{request}” as it is: asking the Chief to split it");
    let runtime = tokio_runtime()?;
    let decomposition = runtime.block_on(chief::decompose(
        &runner.workspace,
        runner.prompts.as_ref(),
        &runner.registry,
        model.as_ref(),
        request,
    ));
    match decomposition {
        Err(error) => {
            eprintln!("error: {error}");
            Ok(Decided::Ended(1))
        }
        Ok(Decomposition::Plan(tasks)) => {
            let plan = chief::plan_of(
                &tasks,
                &runner.registry,
                &runner.workspace,
                new_id("sp_"),
                now(),
            );
            let files = PlanFiles::new(root, &plan.session_id);
            files.save(&Disk::default(), &plan)?;
            println!("{}", plan.session_id);
            eprint!("{}", markdown::render(&plan));
            eprintln!("run it with: control-room plan run {}", plan.session_id);
            Ok(Decided::Ended(0))
        }
        Ok(Decomposition::Clarify { question, choices }) => {
            println!("{question}");
            for (number, choice) in choices.iter().enumerate() {
                println!("  {}. {choice}", number + 1);
            }
            println!(
                "Type a number to run that choice (or run it yourself: control-room run \"…\")."
            );
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line)?;
            match line
                .trim()
                .parse::<usize>()
                .ok()
                .and_then(|n| choices.get(n.wrapping_sub(1)))
            {
                Some(choice)
                    if crate::runs::router::route(
                        &runner.registry,
                        Some(&runner.workspace),
                        choice,
                    )
                    .routable =>
                {
                    println!("running: {choice}");
                    Ok(Decided::Run(choice.clone()))
                }
                Some(choice) => {
                    eprintln!(
                        "error: no recipe takes “{choice}” either; say it as a task a recipe takes"
                    );
                    Ok(Decided::Ended(1))
                }
                None => Ok(Decided::Ended(1)),
            }
        }
    }
}
