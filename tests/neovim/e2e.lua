-- Drives the control-room Neovim plugin in a real headless Neovim, as a
-- writer would, and writes what it saw to the JSON report that
-- tests/neovim.rs asserts on. Environment: CONTROL_ROOM_TEST_ROOT (a copy of
-- the example manuscript), CONTROL_ROOM_TEST_BIN (the server binary),
-- CONTROL_ROOM_TEST_REPORT (where the report goes).

local root = assert(os.getenv("CONTROL_ROOM_TEST_ROOT"))
local binary = assert(os.getenv("CONTROL_ROOM_TEST_BIN"))
local report_path = assert(os.getenv("CONTROL_ROOM_TEST_REPORT"))
local report = { steps = {} }

local function step(name)
  table.insert(report.steps, name)
end

local function wait(what, timeout_ms, condition)
  if not vim.wait(timeout_ms, condition, 20) then
    error("timed out waiting for " .. what, 2)
  end
end

local function buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
end

local function diagnostics(bufnr)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(found, {
      code = d.code,
      lnum = d.lnum,
      col = d.col,
      end_lnum = d.end_lnum,
      end_col = d.end_col,
      severity = d.severity,
      message = d.message,
    })
  end
  table.sort(found, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  return found
end

local function has_code(bufnr, code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.code == code then
      return d
    end
  end
  return nil
end

-- Pickers and prompts answer at once in a test: the first item, no input.
local picked = {}
vim.ui.select = function(items, opts, on_choice)
  local shown = {}
  for _, item in ipairs(items) do
    table.insert(shown, opts.format_item and opts.format_item(item) or tostring(item))
  end
  table.insert(picked, { prompt = opts.prompt, items = shown })
  on_choice(items[1], 1)
end
local asked = {}
vim.ui.input = function(opts, on_confirm)
  table.insert(asked, opts.prompt)
  on_confirm(nil)
end

local function main()
  local control_room = require("control_room")

  -- An older Neovim is refused with a clear message.
  local messages = {}
  local notify = vim.notify
  vim.notify = function(message, level)
    table.insert(messages, { message = message, level = level })
  end
  control_room.minimum_version = "99.0"
  report.refused = control_room.setup({}) == false
  report.refusal = messages[1] and messages[1].message
  control_room.minimum_version = "0.9"
  vim.notify = notify

  assert(control_room.setup({
    cmd = { binary, "lsp" },
    settings = { controlRoom = { diagnostics = { debounceMs = 30 } } },
    open_charts = false,
  }))
  report.commands = {}
  for name, _ in pairs(vim.api.nvim_get_commands({})) do
    if name:match("^ControlRoom") then
      table.insert(report.commands, name)
    end
  end
  table.sort(report.commands)

  -- Progress, as the standard handler reports it.
  report.progress = {}
  vim.api.nvim_create_autocmd("LspProgress", {
    callback = function(event)
      local params = event.data.params or {}
      local value = params.value or {}
      table.insert(report.progress, {
        token = params.token,
        kind = value.kind,
        title = value.title,
        message = value.message,
        status = control_room.status(),
      })
    end,
  })

  -- 1. Scenes: the server starts, diagnostics arrive.
  local gate = root .. "/Story/Scenes/SCN-the-gate.md"
  vim.cmd.edit(vim.fn.fnameescape(gate))
  local gate_buf = vim.api.nvim_get_current_buf()
  wait("the server to attach", 10000, function()
    return control_room.client(gate_buf) ~= nil
  end)
  report.root_dir = control_room.client(gate_buf).config.root_dir
  report.offset_encoding = control_room.client(gate_buf).offset_encoding
  report.outside_root = control_room.find_root("/") == nil
  wait("the gate's diagnostics", 20000, function()
    return has_code(gate_buf, "attribute-mismatch") ~= nil and has_code(gate_buf, "anti-pattern") ~= nil
  end)
  report.gate_diagnostics = diagnostics(gate_buf)

  -- Inlay hints: the plugin turned them on, and Neovim holds the server's
  -- hint at the scene's heading (the day, the point of view's age).
  local function inlay_hints(bufnr)
    local found = {}
    for _, item in ipairs(vim.lsp.inlay_hint.get({ bufnr = bufnr }) or {}) do
      local hint = item.inlay_hint
      local label = hint.label
      if type(label) == "table" then
        local parts = {}
        for _, part in ipairs(label) do
          table.insert(parts, part.value)
        end
        label = table.concat(parts)
      end
      table.insert(found, {
        label = label,
        line = hint.position.line,
        character = hint.position.character,
        line_text = vim.api.nvim_buf_get_lines(bufnr, hint.position.line, hint.position.line + 1, false)[1],
      })
    end
    return found
  end
  report.inlay_hints_enabled = vim.lsp.inlay_hint.is_enabled({ bufnr = gate_buf })
  wait("the gate's inlay hints", 20000, function()
    return #inlay_hints(gate_buf) > 0
  end)
  -- Neovim asks once when the plugin turns hints on (the server may not
  -- have read the cards yet) and again only when told to: give the
  -- point of view's age the time to arrive, without asking again.
  vim.wait(10000, function()
    local hints = inlay_hints(gate_buf)
    return #hints > 0 and hints[1].label:find(",", 1, true) ~= nil
  end, 50)
  report.gate_inlay_hints = inlay_hints(gate_buf)
  step("inlay hints")

  local scene = root .. "/Story/Scenes/SCN-the-saltmaster.md"
  vim.cmd.edit(vim.fn.fnameescape(scene))
  local scene_buf = vim.api.nvim_get_current_buf()
  wait("the scene's diagnostics", 20000, function()
    return has_code(scene_buf, "name-typo") ~= nil
  end)
  report.scene_diagnostics = diagnostics(scene_buf)
  step("diagnostics")

  -- 2. The quick fix for the misspelt name, through Neovim's code actions.
  local typo = has_code(scene_buf, "name-typo")
  vim.api.nvim_win_set_cursor(0, { typo.lnum + 1, typo.col })
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      return action.kind == "quickfix" and action.title:find("Kael", 1, true) ~= nil
    end,
  })
  wait("the quick fix to apply", 10000, function()
    local line = vim.api.nvim_buf_get_lines(scene_buf, typo.lnum, typo.lnum + 1, false)[1]
    return line:find("Kael said", 1, true) ~= nil
  end)
  report.fixed_line = vim.api.nvim_buf_get_lines(scene_buf, typo.lnum, typo.lnum + 1, false)[1]
  wait("the typo's diagnostic to go", 10000, function()
    return has_code(scene_buf, "name-typo") == nil
  end)
  report.after_fix = diagnostics(scene_buf)
  step("quick fix")

  -- Semantic tokens, through Neovim's own highlighter: names by kind,
  -- dialogue, and Old Tomas struck through in a scene after his death.
  vim.cmd.edit(vim.fn.fnameescape(root .. "/Story/Scenes/SCN-the-high-tide.md"))
  local tide_buf = vim.api.nvim_get_current_buf()
  local function find(needle)
    for row, line in ipairs(vim.api.nvim_buf_get_lines(tide_buf, 0, -1, false)) do
      local col = line:find(needle, 1, true)
      if col then
        return row - 1, col - 1, line
      end
    end
    error("no " .. needle .. " in the scene", 2)
  end
  -- The tokens Neovim holds at the start of `needle`, with the text each covers.
  local function tokens_at(needle)
    local row, col, line = find(needle)
    local found = {}
    for _, token in ipairs(vim.lsp.semantic_tokens.get_at_pos(tide_buf, row, col) or {}) do
      local modifiers = vim.tbl_keys(token.modifiers or {})
      table.sort(modifiers)
      table.insert(found, {
        type = token.type,
        modifiers = modifiers,
        col = token.start_col,
        text = line:sub(token.start_col + 1, token.end_col),
      })
    end
    return found
  end
  wait("the scene's semantic tokens", 20000, function()
    local tomas = tokens_at("Tomas said")[1]
    return tomas ~= nil and #tomas.modifiers > 0
  end)
  report.semantic = {
    tomas = tokens_at("Tomas said"),
    kael = tokens_at("Kael had the seventh"),
    place = tokens_at("fortress had let"),
    dialogue = tokens_at("Mind the crown"),
  }
  -- A line with curly quotes and accents before the names: Neovim counts
  -- in bytes, as it told the server.
  local row, _, original = find("\"I know,\" Kael said.")
  vim.api.nvim_buf_set_lines(tide_buf, row, row + 1, false, { "“Où est Tomas ?” demanda Iria." })
  wait("the edited line's semantic tokens", 20000, function()
    local iria = tokens_at("Iria.")[1]
    return iria ~= nil and iria.type == "character"
  end)
  report.semantic.accented = {
    iria = tokens_at("Iria."),
    tomas = tokens_at("Tomas ?"),
    iria_byte = select(2, find("Iria.")),
  }
  vim.api.nvim_buf_set_lines(tide_buf, row, row + 1, false, { original })
  vim.bo[tide_buf].modified = false
  report.semantic.links = {}
  for _, group in ipairs({ "@lsp.type.character", "@lsp.type.place", "@lsp.type.dialogue" }) do
    report.semantic.links[group] = vim.api.nvim_get_hl(0, { name = group }).link
  end
  step("semantic tokens")

  -- 3. Draft scene from the outline entry of the missing scene.
  vim.cmd.edit(vim.fn.fnameescape(root .. "/Story/SCN-outline.md"))
  local outline_buf = vim.api.nvim_get_current_buf()
  wait("the outline to attach", 10000, function()
    return control_room.client(outline_buf) ~= nil
  end)
  local entry
  for index, line in ipairs(vim.api.nvim_buf_get_lines(outline_buf, 0, -1, false)) do
    if line:find("SCN-the-reckoning", 1, true) then
      entry = index
      break
    end
  end
  assert(entry, "the outline names SCN-the-reckoning")
  vim.api.nvim_win_set_cursor(0, { entry, 3 })
  vim.cmd("ControlRoomDraftScene")
  local drafted = root .. "/Story/Scenes/SCN-the-reckoning.md"
  local drafted_buf
  wait("the drafted scene's buffer", 60000, function()
    drafted_buf = vim.fn.bufnr(drafted)
    return drafted_buf ~= -1
      and vim.api.nvim_buf_is_loaded(drafted_buf)
      and buffer_text(drafted_buf):find("# The Reckoning", 1, true) ~= nil
  end)
  report.draft_text = buffer_text(drafted_buf)
  report.asked = asked
  wait("the run's progress to end", 20000, function()
    for _, event in ipairs(report.progress) do
      if type(event.token) == "string" and event.token:match("^control%-room/run/") and event.kind == "end" then
        return true
      end
    end
    return false
  end)
  step("draft scene")

  -- 4. The runs: the draft's run is listed, and picking it opens its report.
  vim.cmd("ControlRoomRuns")
  wait("the run's report to open", 10000, function()
    return vim.api.nvim_buf_get_name(0):match("report%.md$") ~= nil
  end)
  report.runs_picked = picked[1]
  report.opened_report = vim.api.nvim_buf_get_name(0)
  report.report_text = buffer_text(0)
  vim.cmd("ControlRoomCancel")
  step("runs")

  -- 5. Check the whole manuscript into the quickfix list.
  vim.cmd("ControlRoomCheck")
  wait("the quickfix list", 10000, function()
    return vim.fn.getqflist({ title = 0 }).title == "control-room" and #vim.fn.getqflist() > 0
  end)
  report.quickfix = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    table.insert(report.quickfix, vim.fn.bufname(item.bufnr) .. ":" .. item.lnum .. ": " .. item.text)
  end
  step("check")

  -- 5b. The book's outline into the quickfix list.
  vim.cmd("ControlRoomOutline")
  wait("the outline", 10000, function()
    return vim.fn.getqflist({ title = 0 }).title:find("^control%-room: ") ~= nil
  end)
  report.outline = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    local name = item.bufnr > 0 and vim.fn.fnamemodify(vim.fn.bufname(item.bufnr), ":t") or ""
    table.insert(report.outline, name .. "|" .. item.text)
  end
  vim.cmd("cclose")
  step("outline")

  vim.cmd("ControlRoomCast")
  wait("the cast", 10000, function()
    return vim.fn.getqflist({ title = 0 }).title == "control-room: cast and places"
  end)
  report.cast = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    table.insert(report.cast, vim.fn.fnamemodify(vim.fn.bufname(item.bufnr), ":t") .. ":" .. item.lnum .. "|" .. item.text)
  end
  vim.cmd("cclose")
  step("cast")

  -- 6. Compile the manuscript to Markdown beside it.
  local compiled = vim.fn.fnamemodify(root, ":h") .. "/from-neovim.md"
  vim.cmd("ControlRoomCompile md " .. vim.fn.fnameescape(compiled))
  wait("the compiled manuscript", 10000, function()
    return vim.fn.filereadable(compiled) == 1
  end)
  report.compiled_text = table.concat(vim.fn.readfile(compiled), "\n")
  step("compile")

  -- 7. The Foreman: the mode for a statusline, and a turn at the desk.
  vim.cmd("ControlRoomMode")
  wait("the mode", 10000, function()
    return require("control_room").mode_line() ~= ""
  end)
  report.mode_line = require("control_room").mode_line()
  vim.cmd("ControlRoomAsk Neovim: what comes next?")
  local desk = root .. "/Notes/foreman.md"
  -- The reply streams into the desk's buffer: read it as the writer sees it.
  local function desk_text()
    local bufnr = vim.fn.bufnr(desk)
    if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
      return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
    end
    return vim.fn.filereadable(desk) == 1 and table.concat(vim.fn.readfile(desk), "\n") or ""
  end
  wait("the Foreman's reply in the desk", 20000, function()
    local text = desk_text()
    return text:find("## Foreman", 1, true) ~= nil and text:find("the Foreman is writing", 1, true) == nil
  end)
  report.desk_text = desk_text()
  step("foreman")

  -- 8. A voice tournament on the gate's first paragraph: its file lands.
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/Story/Scenes/SCN-the-gate.md"))
  vim.cmd("12,12ControlRoomVoiceTournament sparse, lyrical")
  local tournaments = root .. "/Compendium/Voice/tournaments"
  wait("the tournament's file", 20000, function()
    return #vim.fn.glob(tournaments .. "/*.md", false, true) == 1
  end)
  local found = vim.fn.glob(tournaments .. "/*.md", false, true)[1]
  wait("the tournament's versions", 10000, function()
    return table.concat(vim.fn.readfile(found), "\n"):find("## 2. lyrical", 1, true) ~= nil
  end)
  report.tournament_text = table.concat(vim.fn.readfile(found), "\n")
  step("voice")

  -- 9. The presence chart, written where the browser opens it.
  vim.cmd("ControlRoomChart presence")
  local chart = root .. "/.control-room/charts/presence.svg"
  wait("the presence chart", 10000, function()
    return vim.fn.filereadable(chart) == 1
  end)
  report.chart_text = table.concat(vim.fn.readfile(chart), "\n")
  vim.cmd("ControlRoomChart timeline")
  local timeline = root .. "/.control-room/charts/timeline.svg"
  wait("the timeline chart", 10000, function()
    return vim.fn.filereadable(timeline) == 1
  end)
  report.timeline_text = table.concat(vim.fn.readfile(timeline), "\n")
  step("chart")

  -- 10. The story's health, in a scratch buffer beside, with the writer's
  -- reading of the gate for B1 kept first.
  vim.cmd("ControlRoomHealthOverride B1 SCN-the-gate not challenged -- thanking her costs nothing")
  wait("the override", 10000, function()
    return vim.fn.filereadable(root .. "/.control-room/health/overrides.jsonl") == 1
  end)
  local before = vim.api.nvim_get_current_buf()
  vim.cmd("ControlRoomHealth")
  wait("the story's health", 10000, function()
    return vim.api.nvim_get_current_buf() ~= before and vim.bo.filetype == "markdown"
      and buffer_text(0):find("The story's health", 1, true) ~= nil
  end)
  report.story_health = buffer_text(0)
  step("story health")

  -- 11. :checkhealth control_room.
  vim.cmd("checkhealth control_room")
  report.health = buffer_text(0)
  step("health")
end

local ok, failure = xpcall(main, debug.traceback)
report.ok = ok
report.error = not ok and failure or nil
local file = assert(io.open(report_path, "w"))
file:write(vim.json.encode(report))
file:close()
vim.cmd(ok and "qa!" or "cquit! 1")
