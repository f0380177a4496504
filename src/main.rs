//! The `control-room` binary: the language server, the command-line checker,
//! and the pipeline engine's commands.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use control_room::cli::check::{FailOn, exit_status, write_human, write_json};
use control_room::cli::{knowledge, run, running};
use control_room::index::Workspace;

/// A language server and checker for novels kept as Markdown.
#[derive(Parser)]
#[command(name = "control-room", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The manuscript: this folder, or the nearest folder above it that holds
    /// one (control-room.toml, or Story/ and Compendium/). Default: here.
    #[arg(long, global = true, value_name = "DIR")]
    dir: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the language server over stdio (what editors start).
    Lsp,
    /// Make a new manuscript to start from in DIR (a new or empty folder;
    /// default: here): settings, an outline, a scene, a character and a
    /// place card, and the Story Bible's templates.
    New {
        /// The folder to make it in.
        #[arg(value_name = "DIR")]
        folder: Option<PathBuf>,
    },
    /// Make a manuscript of a book you have: one Markdown or text file, or a
    /// Word, OpenDocument, EPUB or RTF file (read with pandoc), cut into
    /// scenes at its chapter headings and scene breaks, with an outline.
    Import {
        /// The book's file.
        source: PathBuf,
        /// The folder to make the manuscript in, new or empty (default: one
        /// named after the file, here).
        #[arg(long, value_name = "DIR")]
        into: Option<PathBuf>,
    },
    /// Check a manuscript and print its diagnostics.
    Check {
        /// The manuscript (the same as --dir).
        #[arg(value_name = "DIR")]
        folder: Option<PathBuf>,
        /// Output for people (like rustc) or for scripts (one JSON object).
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Also fail (exit 1) on warnings.
        #[arg(long, value_enum)]
        deny: Option<Deny>,
        /// Check the grammar of every scene, even where `[language] grammar`
        /// is "off" (by default `check` checks it unless it is).
        #[arg(long)]
        grammar: bool,
    },
    /// Compile the manuscript into one file: the scenes in outline order
    /// under its chapter headings, only their prose (DOCX, EPUB and PDF
    /// through pandoc; DOCX in standard manuscript format).
    Compile {
        /// The manuscript (the same as --dir).
        #[arg(value_name = "DIR")]
        folder: Option<PathBuf>,
        /// The format to write.
        #[arg(long, value_enum, default_value_t = CompileFormat::Docx)]
        to: CompileFormat,
        /// The file to write (default: <title>.<format> in the manuscript
        /// folder; Markdown in .control-room/compiled/). `-o -` prints Markdown.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Words per scene, chapter and manuscript against their targets, and
    /// the words of each recent day from git.
    Stats {
        /// The manuscript (the same as --dir).
        #[arg(value_name = "DIR")]
        folder: Option<PathBuf>,
        /// Output for people, or one JSON object for scripts.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Who speaks each paragraph of dialogue, and how it was found: the
    /// reading the continuity checks act on.
    Speakers {
        /// The manuscript (the same as --dir).
        #[arg(value_name = "DIR")]
        folder: Option<PathBuf>,
        /// Output for people, or one JSON object for scripts.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Add a word to the manuscript's dictionary (`[language] dictionary`),
    /// so that `spelling` takes it from then on.
    Dictionary {
        /// The word, as the writer spells it.
        word: String,
    },
    /// Print which recipe a task routes to, as JSON.
    Route {
        /// The task, in words ("draft scene SCN-the-gate").
        task: String,
    },
    /// Run a recipe (by id, or the one a task routes to).
    Run {
        /// A recipe id (`creative_draft_scene`) or a task in words.
        target: String,
        /// An argument of the run, NAME=VALUE (a value starting with `[` or `{` is JSON).
        #[arg(long = "arg", value_name = "NAME=VALUE")]
        args: Vec<String>,
        /// The task's description (defaults to the recipe's label and scene).
        #[arg(long)]
        task: Option<String>,
        #[command(flatten)]
        model: running::ModelArgs,
    },
    /// Print the prompt an agent step of a recipe would be sent.
    Prompt {
        /// A recipe id (`creative_draft_scene`).
        recipe: String,
        /// An agent step of the recipe (`draft`).
        step: String,
        /// An argument of the run, NAME=VALUE (a value starting with `[` or `{` is JSON).
        #[arg(long = "arg", value_name = "NAME=VALUE")]
        args: Vec<String>,
        /// The task's description (defaults to the recipe's label and scene).
        #[arg(long)]
        task: Option<String>,
        /// Take the inputs from this run's finished steps instead of running the tools now.
        #[arg(long, value_name = "RUN_ID")]
        run: Option<String>,
        /// Assemble for this model (default: the model `[llm]` gives the step's agent).
        #[arg(long, value_name = "NAME")]
        model: Option<String>,
        /// Assemble for this tier of the capability matrix (full, medium, minimal).
        #[arg(long)]
        tier: Option<String>,
        /// Print the messages, parts and figures as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Convene a conference: the Chief gathers evidence with tools, then each
    /// agent gives one grounded opinion; prints the transcript's path.
    Conference {
        /// The question for the agents.
        question: String,
        /// The agents asked (default: planner, writer, editor, continuity, critic, librarian).
        #[arg(long, value_delimiter = ',')]
        agents: Vec<String>,
        /// The tools the Chief may call (default: all).
        #[arg(long, value_delimiter = ',')]
        tools: Vec<String>,
        /// Let the Chief answer without calling a tool first.
        #[arg(long)]
        no_require_tool: bool,
        /// The passage the question is about: PATH or PATH:START-END (1-based lines).
        #[arg(long, value_name = "PATH[:START-END]")]
        passage: Option<String>,
        /// How many agents are asked at once (default 6).
        #[arg(long)]
        concurrency: Option<usize>,
        #[command(flatten)]
        model: running::ModelArgs,
        /// The manuscript (the same as --dir).
        #[arg(value_name = "DIR")]
        folder: Option<PathBuf>,
    },
    /// Check what an editor needs: the version, the manuscript root, and
    /// whether each model server answers (exits 1 when something is amiss).
    Doctor {
        /// A folder in the manuscript (the same as --dir).
        #[arg(value_name = "DIR")]
        folder: Option<PathBuf>,
        /// The editor's `controlRoom.llm` settings, as JSON.
        #[arg(long, value_name = "JSON")]
        llm: Option<String>,
        /// Output for people, or one JSON object for scripts.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Make, show or run a session plan: tasks with dependencies, each run
    /// through a recipe.
    Plan {
        #[command(subcommand)]
        command: PlanCommand,
    },
    /// List, show, cancel or resume runs.
    Runs {
        #[command(subcommand)]
        command: RunsCommand,
    },
    /// Remember a passage: the decision it makes (about the one character
    /// or place it names) goes into the knowledge base the agents read.
    Remember {
        /// PATH or PATH:START-END (1-based lines).
        #[arg(value_name = "PATH[:START-END]")]
        passage: String,
    },
    /// The agents' findings the editor shows, or dismiss one.
    Findings {
        #[command(subcommand)]
        command: Option<FindingsCommand>,
    },
    /// The knowledge base's decisions that contradict their card, the Story
    /// Bible or a promoted fact (exits 1 when there is one).
    Decisions,
    /// What a diagnostic code means: when it is emitted, its default
    /// severity, and where it comes from.
    Explain {
        /// A code, such as `dead-character` or `plan-dependency`.
        code: String,
    },
    /// Ask the Foreman: the message goes to the desk (Notes/foreman.md) and
    /// the reply, and what its actions did, come back under it.
    Ask {
        /// The message (default: the desk's last unanswered one).
        message: Option<String>,
        #[command(flatten)]
        model: running::ModelArgs,
    },
    /// The project's mode (ARCHITECT, VOICE_CALIBRATION, DIRECTOR, EDITOR)
    /// and the gate out of it; `advance` or `set` to move.
    Mode {
        #[command(subcommand)]
        command: Option<ModeCommand>,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Write a scene's scaffold beside it (SCN-x.scaffold.md): its beat,
    /// cast, callbacks, foreshadowing and length, for "Draft scene" to draft
    /// from.
    Scaffold {
        /// The scene, as the outline names it (SCN-…).
        scene: String,
        /// What the point of view wants here.
        #[arg(long)]
        goal: Option<String>,
        /// What stands in the way.
        #[arg(long)]
        conflict: Option<String>,
    },
    /// The story's knowledge graph: its entities and relations, who carries
    /// the book, and how far two characters are (--between A B).
    Graph {
        #[arg(long, num_args = 2, value_names = ["A", "B"])]
        between: Option<Vec<String>>,
        #[arg(long)]
        json: bool,
    },
    /// The story's health: pacing plateaus, beat progress, cast function
    /// and motifs read from the text; timeline semantics, flaw challenges
    /// and theme resonance as a model read each scene (and the writer's
    /// overrides); each with a score and what to do.
    Health {
        #[arg(long)]
        json: bool,
        #[command(subcommand)]
        command: Option<HealthCommand>,
    },
    /// Draw a chart as SVG (or PNG, for a file ending .png): `presence` (who
    /// is in which scene), `timeline` (story dates against the telling),
    /// `beats` (the beat sheet against the manuscript), `run RUN` (a run's
    /// steps in time).
    Chart {
        kind: String,
        /// The run, for `run`.
        run: Option<String>,
        /// Where to write it (default .control-room/charts/KIND.svg).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Voice calibration: tournaments, the gold standard and the bundle.
    Voice {
        #[command(subcommand)]
        command: control_room::cli::voice::VoiceCommand,
    },
    /// Adopt the decision on LINE of the knowledge base: the card, the Story
    /// Bible or the promoted fact it contradicts is changed to what it says.
    Promote {
        /// The decision's line in .control-room/kb/decisions.jsonl (1-based).
        line: usize,
    },
    /// Withdraw the decision on LINE of the knowledge base, keeping the card,
    /// the Story Bible or the promoted fact it contradicts.
    Withdraw {
        /// The decision's line in .control-room/kb/decisions.jsonl (1-based).
        line: usize,
    },
}

#[derive(Subcommand)]
enum ModeCommand {
    /// Move to the next mode through its gate (in EDITOR: mark the
    /// manuscript complete).
    Advance {
        /// Go on though the gate is shut (with --because).
        #[arg(long, requires = "because")]
        skip: bool,
        /// Why the gate is skipped; recorded with the risk.
        #[arg(long)]
        because: Option<String>,
    },
    /// Move to MODE: back freely, forward through every gate between.
    Set {
        mode: String,
        #[arg(long, requires = "because")]
        skip: bool,
        #[arg(long)]
        because: Option<String>,
    },
}

/// `control-room health`: the report, or an override.
fn health(dir: &Path, json: bool, command: Option<HealthCommand>) -> anyhow::Result<i32> {
    match command {
        None => control_room::cli::health::health(dir, json),
        Some(HealthCommand::Override {
            check,
            scene,
            verdict,
            why,
            clear,
        }) => {
            if verdict.is_none() && !clear {
                anyhow::bail!(
                    "say the verdict for {check} of {scene}, or --clear to take yours back"
                );
            }
            let verdict = if clear { None } else { verdict };
            control_room::cli::health::set_override(dir, &check, &scene, verdict, &why)
        }
        Some(HealthCommand::Read { scenes, model }) => {
            control_room::cli::health::read(dir, &scenes, &model)
        }
    }
}

#[derive(Subcommand)]
enum HealthCommand {
    /// Say what a check a model reads (A3, B1, C2) finds in a scene, over
    /// whatever a run said; kept until cleared.
    Override {
        /// A3 (timeline semantics), B1 (fatal-flaw challenges) or C2 (theme resonance).
        check: String,
        /// The scene's id.
        scene: String,
        /// The verdict: A3 agrees|disagrees, B1 challenged|"not challenged",
        /// C2 strong|weak|none (or "cannot judge").
        verdict: Option<String>,
        /// Why, in the writer's words (shown in the report).
        #[arg(long, default_value = "")]
        why: String,
        /// Take the override back: the model's reading counts again.
        #[arg(long, conflicts_with = "verdict")]
        clear: bool,
    },
    /// Have the model read scenes for A3, B1 and C2: "Read a scene's story
    /// health" on each scene named, or on every written scene of the
    /// outline (an unchanged scene's answers are reused, not asked again).
    Read {
        /// A scene's id (repeat for more); every written scene when none.
        #[arg(long = "scene")]
        scenes: Vec<String>,
        #[command(flatten)]
        model: control_room::cli::running::ModelArgs,
    },
}

#[derive(Subcommand)]
enum FindingsCommand {
    /// Every finding shown, with its id (the default).
    List,
    /// Record a finding as dismissed: it is not shown again.
    Dismiss { finding_id: String },
}

#[derive(Subcommand)]
enum RunsCommand {
    /// Every run, newest first.
    List,
    /// A run's manifest, steps and slots, as JSON.
    Show { run_id: String },
    /// Stop a run (the current step is abandoned; finished steps are kept).
    Cancel { run_id: String },
    /// Continue an unfinished run from its first unfinished step.
    Resume {
        run_id: String,
        #[command(flatten)]
        model: running::ModelArgs,
    },
}

#[derive(Subcommand)]
enum PlanCommand {
    /// A new plan of the tasks given, each routed to a recipe; prints its id.
    New {
        /// The tasks, in words ("draft scene SCN-the-gate"), numbered from 1.
        #[arg(required = true)]
        tasks: Vec<String>,
        /// TASK:DEP: task TASK waits for task DEP (repeat for more).
        #[arg(long = "dep", value_name = "TASK:DEP")]
        deps: Vec<String>,
    },
    /// Every plan, newest first.
    List,
    /// The plan as plan.md, with what is wrong with it on stderr.
    Show { session_id: String },
    /// Run the ready tasks, one run each, in dependency order.
    Run {
        session_id: String,
        /// Start this task first even if it is blocked.
        #[arg(long, value_name = "TASK")]
        force: Option<u32>,
        #[command(flatten)]
        model: running::ModelArgs,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Human,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum CompileFormat {
    Docx,
    Epub,
    Pdf,
    Md,
}

impl CompileFormat {
    fn format(self) -> control_room::export::Format {
        use control_room::export::Format;
        match self {
            CompileFormat::Docx => Format::Docx,
            CompileFormat::Epub => Format::Epub,
            CompileFormat::Pdf => Format::Pdf,
            CompileFormat::Md => Format::Md,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Deny {
    Warnings,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            // clap uses 2 for usage errors already; help and version are success.
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    let global = cli.dir;
    let dir = global.clone().unwrap_or_else(|| PathBuf::from("."));
    let folder =
        |positional: Option<PathBuf>| positional.or(global.clone()).unwrap_or_else(|| ".".into());
    let result = match cli.command {
        Command::Lsp => control_room::lsp::run_stdio().map(|()| 0),
        Command::New { folder: positional } => new_manuscript(&folder(positional)),
        Command::Import { source, into } => import_book(&source, into),
        Command::Check {
            folder: positional,
            format,
            deny,
            grammar,
        } => check(folder(positional), format, deny, grammar),
        Command::Compile {
            folder: positional,
            to,
            output,
        } => {
            control_room::cli::compile::compile(&folder(positional), to.format(), output.as_deref())
        }
        Command::Stats {
            folder: positional,
            format,
        } => control_room::cli::stats::stats(&folder(positional), matches!(format, Format::Json)),
        Command::Speakers {
            folder: positional,
            format,
        } => control_room::cli::speakers::speakers(
            &folder(positional),
            matches!(format, Format::Json),
        ),
        Command::Dictionary { word } => add_to_dictionary(&dir, &word),
        Command::Route { task } => run::route(&dir, &task),
        Command::Run {
            target,
            args,
            task,
            model,
        } => run::run(&dir, &target, task.as_deref(), &args, &model),
        Command::Conference {
            question,
            agents,
            tools,
            no_require_tool,
            passage,
            concurrency,
            model,
            folder: positional,
        } => control_room::cli::conference::conference(
            &folder(positional),
            &control_room::cli::conference::Options {
                question: &question,
                agents: &agents,
                tools: &tools,
                no_require_tool,
                passage: passage.as_deref(),
                concurrency,
            },
            &model,
        ),
        Command::Prompt {
            recipe,
            step,
            args,
            task,
            run,
            model,
            tier,
            json,
        } => run::prompt(
            &dir,
            &run::PromptArgs {
                recipe: &recipe,
                step: &step,
                task: task.as_deref(),
                args: &args,
                run: run.as_deref(),
                model: model.as_deref(),
                tier: tier.as_deref(),
                json,
            },
        ),
        Command::Doctor {
            folder: positional,
            llm,
            format,
        } => doctor(&folder(positional), llm.as_deref(), format),
        Command::Plan { command } => plan_command(&dir, command),
        Command::Runs { command } => runs_command(&dir, command),
        Command::Remember { passage } => knowledge::remember(&dir, &passage),
        Command::Findings { command } => match command {
            None | Some(FindingsCommand::List) => knowledge::list_findings(&dir),
            Some(FindingsCommand::Dismiss { finding_id }) => knowledge::dismiss(&dir, &finding_id),
        },
        Command::Decisions => knowledge::decisions(&dir),
        Command::Explain { code } => Ok(control_room::cli::explain::explain(&code)),
        Command::Promote { line } => knowledge::promote(&dir, line),
        Command::Withdraw { line } => knowledge::withdraw(&dir, line),
        Command::Ask { message, model } => {
            control_room::cli::ask::ask(&dir, message.as_deref(), &model)
        }
        Command::Voice { command } => control_room::cli::voice::dispatch(&dir, command),
        Command::Graph { between, json } => graph(&dir, between, json),
        Command::Health { json, command } => health(&dir, json, command),
        Command::Chart { kind, run, output } => chart(&dir, &kind, &run, &output),
        Command::Scaffold {
            scene,
            goal,
            conflict,
        } => scaffold(&dir, scene, goal, conflict),
        Command::Mode { command, json } => mode(&dir, command, json),
    };
    match result {
        Ok(status) => ExitCode::from(status as u8),
        Err(error) => {
            eprintln!(
                "control-room: {}",
                control_room::text::printable(&format!("{error:#}"))
            );
            ExitCode::from(2)
        }
    }
}

fn plan_command(dir: &std::path::Path, command: PlanCommand) -> anyhow::Result<i32> {
    use control_room::cli::plan;
    match command {
        PlanCommand::New { tasks, deps } => plan::new(
            dir,
            &plan::NewPlan {
                tasks: &tasks,
                deps: &deps,
            },
        ),
        PlanCommand::List => plan::list(dir),
        PlanCommand::Show { session_id } => plan::show(dir, &session_id),
        PlanCommand::Run {
            session_id,
            force,
            model,
        } => plan::run(dir, &session_id, force, &model),
    }
}

fn runs_command(dir: &std::path::Path, command: RunsCommand) -> anyhow::Result<i32> {
    match command {
        RunsCommand::List => run::list(dir),
        RunsCommand::Show { run_id } => run::show(dir, &run_id),
        RunsCommand::Cancel { run_id } => run::cancel(dir, &run_id),
        RunsCommand::Resume { run_id, model } => run::resume(dir, &run_id, &model),
    }
}

fn check(dir: PathBuf, format: Format, deny: Option<Deny>, grammar: bool) -> anyhow::Result<i32> {
    let root = control_room::cli::workspace_root(&dir)?;
    let mut workspace = Workspace::load(&root);
    // `check` has no open scene: grammar on is grammar everywhere, each
    // paragraph from the memo of earlier runs, harper loaded on the first
    // one it does not hold.
    let proofread = grammar
        || workspace.config().language.grammar != control_room::index::config::GrammarScope::Off;
    if proofread {
        workspace.proofread_everything();
        control_room::language::saved::load(&root);
        control_room::language::grammar::lint_on_demand();
    }
    let diagnostics = control_room::health::check_workspace(&workspace);
    if proofread {
        // The memo only saves time: a folder that cannot be written is
        // checked afresh next time.
        let _ = control_room::language::saved::save(&root);
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match format {
        Format::Human => write_human(&mut out, &workspace, &diagnostics)?,
        Format::Json => write_json(&mut out, &workspace, &diagnostics)?,
    }
    out.flush()?;
    let fail_on = match deny {
        Some(Deny::Warnings) => FailOn::Warnings,
        None => FailOn::Errors,
    };
    Ok(exit_status(&diagnostics, fail_on))
}

/// `control-room dictionary WORD`: appends the word to the dictionary file.
/// `control-room new`: the files made, and what to do next.
fn new_manuscript(dir: &std::path::Path) -> anyhow::Result<i32> {
    let made = control_room::manuscript::new::new(dir)?;
    println!("A new manuscript in {}:", dir.display());
    for path in made {
        println!("  {path}");
    }
    let shown = dir.display().to_string();
    let shown = if shown.contains(char::is_whitespace) {
        format!("\"{shown}\"")
    } else {
        shown
    };
    println!(
        "\nOpen the folder in your editor to write; `control-room check {shown}` checks it from here.\n\
         The Story Bible's templates (Story/Bible/) say what each still needs."
    );
    Ok(0)
}

/// `control-room import`: what was made.
fn import_book(source: &std::path::Path, into: Option<PathBuf>) -> anyhow::Result<i32> {
    let into = into.unwrap_or_else(|| {
        PathBuf::from(
            source
                .file_stem()
                .map_or_else(|| "Imported".into(), |stem| stem.to_os_string()),
        )
    });
    let made = control_room::manuscript::import::import(source, &into)?;
    print!("{}", made.report(&into));
    Ok(0)
}

fn add_to_dictionary(dir: &std::path::Path, word: &str) -> anyhow::Result<i32> {
    let root = control_room::cli::workspace_root(dir)?;
    let workspace = Workspace::new(&root);
    let path = workspace.dictionary_path();
    control_room::ide::dictionary::add_word(
        &control_room::storage::Disk::default(),
        &root,
        path,
        word,
    )?;
    println!("“{word}” is in {path}");
    Ok(0)
}

/// `control-room doctor`: prints the report, exits 1 when something is amiss.
fn doctor(dir: &std::path::Path, llm: Option<&str>, format: Format) -> anyhow::Result<i32> {
    use control_room::cli::doctor;
    let editor_llm = llm
        .map(serde_json::from_str::<serde_json::Value>)
        .transpose()
        .map_err(|error| anyhow::anyhow!("--llm is not JSON: {error}"))?;
    let report = doctor::examine(dir, editor_llm.as_ref())?;
    match format {
        Format::Human => println!("{}", doctor::human(&report.json)),
        Format::Json => println!("{}", report.json),
    }
    Ok(if report.healthy { 0 } else { 1 })
}

fn mode(dir: &Path, command: Option<ModeCommand>, json: bool) -> anyhow::Result<i32> {
    use control_room::cli::mode;
    match command {
        None => mode::show(dir, json),
        Some(ModeCommand::Advance { skip, because }) => mode::advance(dir, None, skip, because),
        Some(ModeCommand::Set {
            mode: to,
            skip,
            because,
        }) => mode::advance(dir, Some(&to), skip, because),
    }
}

fn graph(dir: &Path, between: Option<Vec<String>>, json: bool) -> anyhow::Result<i32> {
    let between = between
        .as_deref()
        .map(|pair| (pair[0].as_str(), pair[1].as_str()));
    control_room::cli::graph::graph(dir, between, json)
}

fn scaffold(
    dir: &Path,
    scene: String,
    goal: Option<String>,
    conflict: Option<String>,
) -> anyhow::Result<i32> {
    control_room::cli::voice::scaffold(dir, &scene, goal.as_deref(), conflict.as_deref())
}

fn chart(
    dir: &Path,
    kind: &str,
    run: &Option<String>,
    output: &Option<PathBuf>,
) -> anyhow::Result<i32> {
    control_room::cli::chart::chart(dir, kind, run.as_deref(), output.as_deref())
}
