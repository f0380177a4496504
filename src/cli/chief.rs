//! A request no recipe takes, on the command line: the Chief splits it into
//! a session plan, saved as `plan.json` and `plan.md` and run with
//! `control-room plan run`, or asks one question, shown numbered; a
//! choice typed on standard input is run in its place.

use std::io::BufRead;
use std::path::Path;

use super::run::{ModelArgs, tokio_runtime};
use crate::foreman::chief::{self, Decomposition};
use crate::plan::{PlanFiles, markdown};
use crate::runs::runner::{Runner, new_id, now};
use crate::runs::store::Disk;

/// Decomposes `request`; a plan's id is printed, a question's choice run.
pub fn decompose(
    root: &Path,
    runner: &Runner,
    request: &str,
    task: Option<&str>,
    args: &[String],
    model_args: &ModelArgs,
) -> anyhow::Result<i32> {
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
            Ok(1)
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
            Ok(0)
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
                    super::run::run(root, choice, task, args, model_args)
                }
                Some(choice) => {
                    eprintln!(
                        "error: no recipe takes “{choice}” either; say it as a task a recipe takes"
                    );
                    Ok(1)
                }
                None => Ok(1),
            }
        }
    }
}
