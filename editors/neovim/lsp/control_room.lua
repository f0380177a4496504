--- The control-room language server for `vim.lsp.config` / `vim.lsp.enable`
--- (Neovim 0.11 and later) and nvim-lspconfig 2, which read `lsp/<name>.lua`
--- from the runtimepath: `vim.lsp.enable("control_room")`.
return {
  -- The program beside the plugin, built in its folder, or on PATH (see
  -- `require("control_room").server()`).
  cmd = require("control_room").command(),
  filetypes = { "markdown" },
  root_dir = function(bufnr, on_dir)
    local root = require("control_room").find_root(vim.api.nvim_buf_get_name(bufnr))
    if root then
      on_dir(root)
    end
  end,
}
