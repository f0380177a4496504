//! The language server: the only module that knows LSP.
pub fn run_stdio() -> anyhow::Result<()> {
    anyhow::bail!("not yet")
}
