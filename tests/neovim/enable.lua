-- The server started by Neovim 0.11's own `vim.lsp.enable`, from the
-- plugin's `lsp/control_room.lua` (the form nvim-lspconfig 2 reads too),
-- with the plugin's commands only. Writes the scene's diagnostics and the
-- client's root to CONTROL_ROOM_TEST_REPORT.

local root = assert(os.getenv("CONTROL_ROOM_TEST_ROOT"))
local binary = assert(os.getenv("CONTROL_ROOM_TEST_BIN"))
local report_path = assert(os.getenv("CONTROL_ROOM_TEST_REPORT"))
local report = {}

local function main()
  local control_room = require("control_room")
  -- Inlay hints turned off: the plugin leaves them off.
  assert(control_room.setup({ autostart = false, inlay_hints = false }))
  vim.lsp.config("control_room", { cmd = { binary, "lsp" } })
  vim.lsp.enable("control_room")
  vim.cmd.edit(vim.fn.fnameescape(root .. "/Story/Scenes/SCN-the-saltmaster.md"))
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.wait(20000, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.code == "name-typo" then
        return true
      end
    end
    return false
  end, 20), "timed out waiting for the scene's diagnostics")
  local clients = vim.lsp.get_clients({ bufnr = bufnr })
  report.clients = #clients
  report.offers_inlay_hints = clients[1].server_capabilities.inlayHintProvider == true
  report.inlay_hints_enabled = vim.lsp.inlay_hint.is_enabled({ bufnr = bufnr })
  report.root_dir = clients[1].config.root_dir
  report.codes = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(report.codes, d.code)
  end
  -- Outside a manuscript nothing starts.
  vim.cmd.edit(vim.fn.fnameescape(root .. "/../outside.md"))
  vim.wait(300)
  report.outside_clients = #vim.lsp.get_clients({ bufnr = vim.api.nvim_get_current_buf() })
end

local ok, failure = xpcall(main, debug.traceback)
report.ok = ok
report.error = not ok and failure or nil
local file = assert(io.open(report_path, "w"))
file:write(vim.json.encode(report))
file:close()
vim.cmd(ok and "qa!" or "cquit! 1")
