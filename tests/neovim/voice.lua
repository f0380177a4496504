-- The voice in Neovim: a tournament's file shows its lenses; the plugin's
-- commands pick a version as the gold standard, lock the voice and unlock
-- it. Writes what it saw to CONTROL_ROOM_TEST_REPORT.

local root = assert(os.getenv("CONTROL_ROOM_TEST_ROOT"))
local binary = assert(os.getenv("CONTROL_ROOM_TEST_BIN"))
local tournament = assert(os.getenv("CONTROL_ROOM_TEST_TOURNAMENT"))
local report_path = assert(os.getenv("CONTROL_ROOM_TEST_REPORT"))
local report = {}

local function read(path)
  local file = io.open(path, "r")
  if file == nil then
    return nil
  end
  local text = file:read("*a")
  file:close()
  return text
end

local function main()
  local control_room = require("control_room")
  assert(control_room.setup({ cmd = { binary, "lsp" }, inlay_hints = false }))
  vim.cmd.edit(vim.fn.fnameescape(root .. "/" .. tournament))
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.wait(20000, function()
    return #vim.lsp.get_clients({ bufnr = bufnr }) > 0
  end, 20), "the server did not attach")
  -- The lenses arrive as the plugin refreshes them.
  assert(vim.wait(20000, function()
    return #vim.lsp.codelens.get(bufnr) > 0
  end, 50), "no code lens came")
  report.lenses = {}
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr)) do
    if lens.command then
      table.insert(report.lenses, lens.command.title)
    end
  end
  -- Pick version 2 from its own file (no tournament named), with a why.
  vim.cmd("ControlRoomVoicePick 2 -- It keeps the long line.")
  local gold = root .. "/Compendium/Voice/gold-standard.md"
  assert(vim.wait(20000, function()
    return (read(gold) or ""):find("\nlocked: false\n", 1, true) ~= nil
  end, 50), "no gold standard was written")
  report.gold = read(gold)
  -- The writer opens it, and locks the voice from there.
  vim.cmd("edit! " .. vim.fn.fnameescape(gold))
  local gold_buffer = vim.api.nvim_get_current_buf()
  local function front_matter()
    return table.concat(vim.api.nvim_buf_get_lines(gold_buffer, 0, 4, false), "\n")
  end
  assert(vim.wait(20000, function()
    return #vim.lsp.get_clients({ bufnr = gold_buffer }) > 0
  end, 20), "the server did not attach to the gold standard")
  vim.cmd("ControlRoomVoiceLock")
  assert(vim.wait(20000, function()
    return front_matter():find("\nlocked: true", 1, true) ~= nil
  end, 50), "the voice was not locked: " .. front_matter())
  report.locked = true
  local seen = {}
  local asked = 0
  assert(vim.wait(20000, function()
    seen = {}
    for _, lens in ipairs(vim.lsp.codelens.get(gold_buffer)) do
      if lens.command then
        table.insert(seen, lens.command.title)
        if lens.command.title == "Unlock this voice" then
          return true
        end
      end
    end
    asked = asked + 1
    if asked % 20 == 0 then
      vim.lsp.codelens.refresh({ bufnr = gold_buffer })
    end
    return false
  end, 50), "the gold standard offers no Unlock lens: " .. vim.inspect(seen))
  report.unlock_lens = true
  vim.cmd("ControlRoomVoiceUnlock")
  assert(vim.wait(20000, function()
    return front_matter():find("\nlocked: false", 1, true) ~= nil
  end, 50), "the voice was not unlocked: " .. front_matter())
  report.unlocked = true
end

local ok, failure = xpcall(main, debug.traceback)
report.ok = ok
report.error = not ok and failure or nil
local file = assert(io.open(report_path, "w"))
file:write(vim.json.encode(report))
file:close()
vim.cmd(ok and "qa!" or "cquit! 1")
