//! The command line: argument types and the `check` command's renderers.

pub mod check;
