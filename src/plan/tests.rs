//! Session plans: states from dependencies, the order tasks run in, every
//! problem a plan can have, routing to recipes or to scoping, and `plan.md`
//! read back to the same plan, with the writer's edits and mistakes.

use super::markdown::{self, LineProblem};
use super::*;
use crate::runs::prompts::Prompts;

fn registry() -> Registry {
    let dir = tempfile::tempdir().unwrap();
    Registry::load(dir.path(), &Prompts::load(dir.path()))
}

fn task(id: u32, description: &str, deps: &[u32]) -> Task {
    let mut task = Task::new(id, description);
    task.recipe_id = Some("creative_draft_scene".to_owned());
    task.deps = deps.to_vec();
    task
}

fn plan(tasks: Vec<Task>) -> Plan {
    Plan::new(
        "sp_0123456789ab".to_owned(),
        "writer",
        "2026-11-23T20:00:00.000Z".to_owned(),
        tasks,
    )
}

fn statuses(plan: &Plan) -> Vec<(u32, &'static str)> {
    plan.tasks
        .iter()
        .map(|task| (task.id, task.status.as_str()))
        .collect()
}

#[test]
fn dependencies_decide_pending_and_blocked_and_the_plan_its_status() {
    let mut plan = plan(vec![
        task(1, "draft scene SCN-a", &[]),
        task(2, "draft scene SCN-b", &[1]),
        task(3, "check consistency SCN-b", &[1, 2]),
    ]);
    plan.settle();
    assert_eq!(
        statuses(&plan),
        [(1, "pending"), (2, "blocked"), (3, "blocked")]
    );
    assert_eq!(plan.ready(), [1]);
    assert_eq!(plan.status, "running");

    plan.task_mut(1).unwrap().status = TaskStatus::Done;
    plan.settle();
    assert_eq!(
        statuses(&plan),
        [(1, "done"), (2, "pending"), (3, "blocked")]
    );
    assert_eq!(plan.ready(), [2]);

    plan.task_mut(2).unwrap().status = TaskStatus::Failed;
    plan.settle();
    assert_eq!(plan.status, "failed");
    assert_eq!(plan.ready(), Vec::<u32>::new());

    for task in &mut plan.tasks {
        task.status = TaskStatus::Done;
    }
    plan.settle();
    assert_eq!(plan.status, "done");
}

#[test]
fn tasks_run_after_their_dependencies_whatever_their_numbers() {
    let plan = plan(vec![
        task(1, "c", &[3]),
        task(2, "a", &[]),
        task(3, "b", &[2]),
        task(4, "d", &[]),
    ]);
    assert_eq!(plan.order(), [2, 3, 1, 4]);
}

#[test]
fn unknown_and_self_dependencies_cycles_and_unknown_recipes_are_problems() {
    let mut bad_recipe = task(5, "e", &[]);
    bad_recipe.recipe_id = Some("no_such_recipe".to_owned());
    let plan = plan(vec![
        task(1, "a", &[2]),
        task(2, "b", &[3]),
        task(3, "c", &[1]),
        task(4, "d", &[4, 9]),
        bad_recipe,
    ]);
    let problems = plan.problems(&registry());
    let found: Vec<(u32, Option<&str>, &str)> = problems
        .iter()
        .map(|p| (p.task, p.field, p.message.as_str()))
        .collect();
    assert_eq!(
        found[..3],
        [
            (4, Some("deps"), "task 4 depends on itself"),
            (
                4,
                Some("deps"),
                "task 4 depends on task 9, which is not in the plan"
            ),
            (5, Some("recipe"), found[2].2),
        ]
    );
    assert!(
        found[2]
            .2
            .starts_with("no recipe `no_such_recipe`; known: ")
    );
    assert!(found[2].2.contains("creative_draft_scene"));
    let cycle: Vec<(u32, &str)> = found[3..].iter().map(|(t, _, m)| (*t, *m)).collect();
    let message = "tasks depend on each other in a cycle: 1 → 2 → 3 → 1";
    assert_eq!(cycle, [(1, message), (2, message), (3, message)]);
    assert!(problems.iter().all(|p| p.is_error));
    // Tasks in a cycle (a task on itself too) come last and never get ready.
    assert_eq!(plan.order(), [5, 1, 2, 3, 4]);
    let mut settled = plan.clone();
    settled.settle();
    assert_eq!(settled.ready(), [5]);
}

#[test]
fn a_task_no_recipe_takes_needs_scoping_with_the_routers_reason() {
    let mut plan = plan(vec![
        Task::new(1, "draft scene SCN-the-reckoning"),
        Task::new(2, "make it sing"),
    ]);
    plan.route(&registry(), None);
    plan.settle();
    assert_eq!(
        plan.tasks[0].recipe_id.as_deref(),
        Some("creative_draft_scene")
    );
    assert_eq!(statuses(&plan), [(1, "pending"), (2, "needs_scoping")]);
    let question = plan.tasks[1].scoping_question.clone().unwrap();
    assert!(question.contains("make it sing"), "{question}");
    let problems = plan.problems(&registry());
    assert_eq!(problems.len(), 1);
    assert!(!problems[0].is_error);
    assert_eq!(
        problems[0].message,
        format!("task 2 needs scoping: {question}")
    );
    // Said more plainly, it routes, and the question goes.
    plan.tasks[1].description = "review prose SCN-the-gate".to_owned();
    plan.route(&registry(), None);
    assert_eq!(plan.tasks[1].status, TaskStatus::Pending);
    assert_eq!(plan.tasks[1].scoping_question, None);
    assert!(plan.tasks[1].recipe_id.is_some());
}

#[test]
fn plan_md_reads_back_to_the_same_plan() {
    let mut first = task(1, "Write Scene 21", &[]);
    first.status = TaskStatus::Done;
    first.run_id = Some("run_abc".to_owned());
    first.dod = Some("Scene file exists, continuity pass".to_owned());
    first
        .args
        .insert("scene_id".to_owned(), serde_json::json!("SCN-21"));
    let mut scoped = Task::new(4, "Foreshadowing audit");
    scoped.status = TaskStatus::NeedsScoping;
    scoped.scoping_question = Some("Which themes need foreshadowing? Which scenes?".to_owned());
    let mut plan = plan(vec![first, task(2, "Write Scene 22", &[1]), scoped]);
    plan.settle();
    let text = markdown::render(&plan);
    let parsed = markdown::parse(&text);
    assert_eq!(parsed.problems, Vec::<LineProblem>::new());
    assert_eq!(markdown::merge(&plan, &parsed), plan);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[parsed.line_of(2, None).unwrap()],
        "- [ ] 2. Write Scene 22"
    );
    assert_eq!(
        lines[parsed.line_of(2, Some("deps")).unwrap()],
        "  - deps: 1"
    );
}

#[test]
fn the_writers_edits_and_mistakes_in_plan_md() {
    let text = "# Plan\n\nSome notes of mine.\n\n\
- [x] 1. Draft scene SCN-a\n  - status: pending\n\
- [ ] 2. Draft scene SCN-b\n  - deps: 1, x\n  - status: sleeping\n  - colour: blue\n\
- [ ] 2. Again\n\
- [X] 3. Check it\n\
- [ ] 4. Redo SCN-a\n  - status: done\n  - args: [1]\n";
    let parsed = markdown::parse(text);
    let problems: Vec<(usize, &str)> = parsed
        .problems
        .iter()
        .map(|p| (p.line, p.message.as_str()))
        .collect();
    assert_eq!(problems.len(), 5, "{problems:#?}");
    assert_eq!(
        problems[0],
        (7, "`x` is not a task number; write `deps: 1, 2`")
    );
    assert!(problems[1].1.starts_with("`sleeping` is not a task status"));
    assert!(problems[2].1.starts_with("`colour` is not a task field"));
    assert_eq!(problems[3], (10, "task 2 is numbered twice"));
    assert_eq!(problems[4].0, 14);
    let tasks: Vec<(u32, &str, Vec<u32>)> = parsed
        .tasks
        .iter()
        .map(|t| (t.id, t.status.as_str(), t.deps.clone()))
        .collect();
    assert_eq!(
        tasks,
        [
            // The ticked box wins over the status field…
            (1, "done", vec![]),
            (2, "pending", vec![1]),
            (3, "done", vec![]),
            // …and so does an unticked one: the task runs again.
            (4, "pending", vec![]),
        ]
    );
}

#[test]
fn a_running_task_keeps_its_run_when_the_writer_edits_plan_md() {
    let mut running = task(1, "draft scene SCN-a", &[]);
    running.status = TaskStatus::Running;
    running.run_id = Some("run_0000000000aa".to_owned());
    let plan = plan(vec![running]);
    let edited = markdown::render(&plan).replace("  - status: running\n", "");
    let merged = markdown::merge(&plan, &markdown::parse(&edited));
    assert_eq!(merged.tasks[0].status, TaskStatus::Running);
    assert_eq!(merged.tasks[0].run_id.as_deref(), Some("run_0000000000aa"));
}

#[test]
fn plans_are_saved_in_both_files_and_listed_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut older = plan(vec![task(1, "a", &[])]);
    older.session_id = "sp_000000000001".to_owned();
    older.created_at = "2026-11-01T00:00:00.000Z".to_owned();
    let newer = plan(vec![task(1, "b", &[])]);
    for plan in [&older, &newer] {
        PlanFiles::new(dir.path(), &plan.session_id)
            .save(&Disk::default(), plan)
            .unwrap();
    }
    let files = PlanFiles::new(dir.path(), &newer.session_id);
    assert_eq!(files.load().unwrap(), newer);
    let text = std::fs::read_to_string(files.markdown()).unwrap();
    assert_eq!(text, markdown::render(&newer));
    let listed: Vec<String> = list(dir.path()).into_iter().map(|p| p.session_id).collect();
    assert_eq!(listed, [newer.session_id.clone(), older.session_id.clone()]);
    std::fs::write(files.json(), "{").unwrap();
    let error = files.load().unwrap_err().to_string();
    assert!(error.contains("plan.json"), "{error}");
}

#[test]
fn status_edits_touch_only_boxes_status_and_run_lines() {
    let text = "# My plan\n\nNotes I keep here.\n\n\
- [ ] 1. Draft the reckoning\n  - recipe: creative_draft_scene\n  - status: running\n\
  a note under the task\n\
- [x] 2. Check it\n  - deps: 1\n";
    let mut plan = plan(vec![
        task(1, "Draft the reckoning", &[]),
        task(2, "Check it", &[1]),
    ]);
    plan.tasks[0].status = TaskStatus::Done;
    plan.tasks[0].run_id = Some("run_0000000000aa".to_owned());
    plan.tasks[1].status = TaskStatus::Pending;
    let edited = crate::text::apply_edits(text, &markdown::status_edits(text, &plan));
    assert_eq!(
        edited,
        "# My plan\n\nNotes I keep here.\n\n\
- [x] 1. Draft the reckoning\n  - recipe: creative_draft_scene\n  - status: done\n  - run: run_0000000000aa\n\
  a note under the task\n\
- [ ] 2. Check it\n  - deps: 1\n  - status: pending\n"
    );
    // In step already: nothing to do.
    assert!(markdown::status_edits(&edited, &plan).is_empty());
}

#[test]
fn a_checklist_whose_tasks_were_split_is_rendered_anew_when_kept_in_step() {
    let text = "- [ ] 1. Draft the reckoning\n  - status: running\n  my note\n";
    let mut plan = plan(vec![task(1, "Draft the reckoning", &[])]);
    plan.tasks[0].status = TaskStatus::Done;
    // The same tasks: only the box and the state lines change.
    let edits = markdown::edits_in_step(text, &plan);
    assert!(crate::text::apply_edits(text, &edits).contains("  my note\n"));
    // Task 1 split into 2 and 3: the checklist lists them.
    let split = self::plan(vec![
        task(2, "Draft the reckoning: the judgement", &[]),
        task(3, "Draft the reckoning: the road", &[2]),
    ]);
    let edited = crate::text::apply_edits(text, &markdown::edits_in_step(text, &split));
    assert_eq!(edited, markdown::render(&split));
    assert!(markdown::edits_in_step(&edited, &split).is_empty());
}

fn finished(status: RunStatus, error: Option<&str>, review: Option<ReviewState>) -> RunManifest {
    RunManifest {
        run_id: "run_aaaaaaaaaaaa".into(),
        recipe_id: "creative_draft_scene_reviewed".into(),
        session_id: "sp_0123456789ab".into(),
        status,
        created_at: "2026-11-23T20:00:00.000Z".into(),
        updated_at: "2026-11-23T20:01:00.000Z".into(),
        completed_at: Some("2026-11-23T20:01:00.000Z".into()),
        task: crate::runs::store::RunTask {
            description: "x".into(),
            session_plan_task_id: Some(1),
            initial_args: Default::default(),
        },
        current_step_index: 0,
        total_steps: 0,
        phase: None,
        error: error.map(str::to_owned),
        review,
        scene: None,
        fresh: false,
    }
}

fn review(outcome: Outcome, reason: &str, subtasks: &[&str]) -> Option<ReviewState> {
    Some(ReviewState {
        iterations: 1,
        outcome,
        reason: Some(reason.to_owned()),
        subtasks: subtasks.iter().map(|s| (*s).to_owned()).collect(),
    })
}

use crate::runs::review::{Outcome, ReviewState};

#[test]
fn a_finished_run_sets_its_task_and_a_failed_dod_links_the_issue() {
    let registry = registry();
    let mut plan = plan(vec![
        task(1, "draft scene SCN-a", &[]),
        task(2, "draft scene SCN-b", &[1]),
    ]);
    plan.settle();
    let cancelled = finished(RunStatus::Cancelled, None, None);
    assert_eq!(
        plan.finish_task(1, &cancelled, &registry, None),
        TaskStatus::Pending
    );
    let failed = finished(
        RunStatus::Failed,
        Some(
            "the Definition of Done failed (slot `draft` is empty); see .control-room/issues/DOD-run_aaaaaaaaaaaa.md",
        ),
        None,
    );
    assert_eq!(
        plan.finish_task(1, &failed, &registry, None),
        TaskStatus::Failed
    );
    assert_eq!(
        plan.task(1).unwrap().issue.as_deref(),
        Some(".control-room/issues/DOD-run_aaaaaaaaaaaa.md")
    );
    assert_eq!(plan.status, "failed");
    let text = markdown::render(&plan);
    assert!(
        text.contains("  - issue: .control-room/issues/DOD-run_aaaaaaaaaaaa.md\n"),
        "{text}"
    );
    assert_eq!(
        markdown::parse(&text).tasks,
        plan.tasks,
        "the issue reads back"
    );
    let done = finished(RunStatus::Done, None, None);
    assert_eq!(
        plan.finish_task(1, &done, &registry, None),
        TaskStatus::Done
    );
    assert_eq!(plan.task(1).unwrap().issue, None);
    assert_eq!(statuses(&plan), [(1, "done"), (2, "pending")]);
}

#[test]
fn review_outcomes_rescope_or_split_the_task() {
    let registry = registry();
    let mut plan = plan(vec![
        task(1, "draft scene SCN-a", &[]),
        task(2, "draft scene SCN-b", &[1]),
        task(3, "draft scene SCN-c", &[1, 2]),
    ]);
    plan.settle();
    let scope = finished(
        RunStatus::Failed,
        Some("misscoped"),
        review(
            Outcome::NeedsScoping,
            "the reviewer judged the task misscoped: two turns",
            &[],
        ),
    );
    assert_eq!(
        plan.finish_task(2, &scope, &registry, None),
        TaskStatus::NeedsScoping
    );
    assert_eq!(
        plan.task(2).unwrap().scoping_question.as_deref(),
        Some("the reviewer judged the task misscoped: two turns")
    );

    let split = finished(
        RunStatus::Failed,
        Some("too big"),
        review(
            Outcome::Split,
            "too big",
            &["draft scene SCN-a: the quarrel", "the parting"],
        ),
    );
    let before = markdown::render(&plan);
    assert_eq!(
        plan.finish_task(1, &split, &registry, None),
        TaskStatus::Pending
    );
    let ids: Vec<u32> = plan.tasks.iter().map(|t| t.id).collect();
    assert_eq!(ids, [4, 5, 2, 3]);
    assert_eq!(plan.task(4).unwrap().deps, Vec::<u32>::new());
    assert_eq!(plan.task(5).unwrap().deps, [4]);
    assert_eq!(
        plan.task(3).unwrap().deps,
        [5, 2],
        "dependents wait on the last part"
    );
    // The unroutable part keeps the task's recipe.
    assert_eq!(
        plan.task(5).unwrap().recipe_id.as_deref(),
        Some("creative_draft_scene")
    );
    assert_eq!(plan.task(4).unwrap().split_from, Some(1));
    // plan.md: the split task's block becomes its parts; the writer's note stays.
    let with_note = before.replace("- [ ] 2.", "A note of mine.\n\n- [ ] 2.");
    let edited = crate::text::apply_edits(&with_note, &markdown::status_edits(&with_note, &plan));
    assert!(edited.contains("A note of mine."), "{edited}");
    assert!(!edited.contains("1. draft scene SCN-a\n"), "{edited}");
    assert!(
        edited.contains("- [ ] 4. draft scene SCN-a: the quarrel\n"),
        "{edited}"
    );
    assert!(
        edited.contains("- [ ] 5. the parting\n  - recipe: creative_draft_scene\n  - deps: 4\n"),
        "{edited}"
    );
    assert!(
        edited.contains("  - question: the reviewer judged the task misscoped: two turns"),
        "{edited}"
    );
    let reread = markdown::merge(&plan, &markdown::parse(&edited));
    assert_eq!(
        reread.tasks.iter().map(|t| t.id).collect::<Vec<_>>(),
        [4, 5, 2, 3]
    );
    assert_eq!(reread.task(5).unwrap().split_from, Some(1));
    // A part judged too big again goes to the writer instead of splitting again.
    let again = finished(
        RunStatus::Failed,
        Some("too big"),
        review(Outcome::Split, "still too big", &["a", "b"]),
    );
    assert_eq!(
        plan.finish_task(4, &again, &registry, None),
        TaskStatus::NeedsScoping
    );
    assert_eq!(plan.tasks.len(), 4);
}
