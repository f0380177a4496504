-- The plugin as the archive unpacks it: `neovim/` beside `bin/control-room`,
-- no `cmd` given and no control-room on PATH. Writes which server the plugin
-- found, how, and what `:checkhealth control_room` says, to
-- CONTROL_ROOM_TEST_REPORT.

local report_path = assert(os.getenv("CONTROL_ROOM_TEST_REPORT"))
local report = {}

local function main()
  local control_room = require("control_room")
  assert(control_room.setup({ autostart = false }))
  local path, how = control_room.server()
  report.server = path
  report.how = how
  report.command = control_room.command()
  vim.cmd("checkhealth control_room")
  report.health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
end

local ok, failure = xpcall(main, debug.traceback)
report.ok = ok
report.error = not ok and failure or nil
local file = assert(io.open(report_path, "w"))
file:write(vim.json.encode(report))
file:close()
vim.cmd(ok and "qa!" or "cquit! 1")
