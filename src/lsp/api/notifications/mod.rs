//! One file per LSP notification the server answers.

pub(crate) mod did_change;
pub(crate) mod did_change_configuration;
pub(crate) mod did_change_watched_files;
pub(crate) mod did_close;
pub(crate) mod did_open;
pub(crate) mod did_save;
pub(crate) mod initialized;
pub(crate) mod work_done_progress_cancel;
