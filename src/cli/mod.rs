//! The command line: the `check` command's renderers and the engine's commands.

pub mod check;
pub mod run;
