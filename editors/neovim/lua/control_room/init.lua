--- control-room for Neovim: starts the control-room language server for
--- Markdown buffers under a manuscript root, and adds commands to draft a
--- scene, convene a conference, list, open and cancel runs, check the
--- whole manuscript, compile it into one file, ask the Foreman, and show
--- and advance the project's mode (`mode_line()` for a statusline).
---
---   require("control_room").setup({
---     cmd = { "control-room", "lsp" },
---     settings = { controlRoom = { diagnostics = { debounceMs = 150 },
---                                  llm = { provider = "openai", model = "llama3.1:8b" } } },
---   })
---
--- Progress of runs goes through Neovim's own `$/progress` handler (see
--- `:help lsp-handlers` and `vim.lsp.status()`); `status()` gives a short
--- line for a statusline.

local M = {}

--- The oldest Neovim this plugin supports.
M.minimum_version = "0.9"

M.name = "control_room"

--- The defaults `setup` merges the writer's options into.
M.defaults = {
  --- The server and its arguments. A bare `control-room` (the default) is
  --- the program beside the plugin (`bin/` of the archive it came in, or
  --- `target/release/` of the repository lazy.nvim built), else the one on
  --- PATH; a path is used as it is.
  cmd = { "control-room", "lsp" },
  --- The filetypes the server attaches to.
  filetypes = { "markdown" },
  --- Sent as `initializationOptions` and `workspace/didChangeConfiguration`:
  --- `{ controlRoom = { diagnostics = { severity = {…}, debounceMs = n }, llm = {…} } }`.
  --- `llm.apiKeyEnv` names the variable holding the key; never put a key here.
  settings = { controlRoom = {} },
  --- Echo the step of running runs as their progress arrives.
  echo_progress = true,
  --- Open a chart in the browser (`vim.ui.open`) once it is written.
  open_charts = true,
  --- Show the server's inlay hints (each scene's day, time and point of
  --- view's age at its heading; each outline entry's day; each line of
  --- dialogue's speaker) in its buffers; Neovim 0.10 and later.
  inlay_hints = true,
  --- Show the server's code lenses (the voice's Pick, Why, Cross, Lock and
  --- Unlock, the outline's Draft scene…); `:ControlRoomLens` runs one.
  code_lenses = true,
  --- Called with (client, bufnr) when the server attaches to a buffer.
  on_attach = nil,
}

M.options = vim.deepcopy(M.defaults)

--- The server's semantic token types and the groups they are linked to
--- unless the colorscheme or the writer links them otherwise (a dead
--- character's names carry `@lsp.mod.deprecated`, struck through).
M.highlights = {
  ["@lsp.type.character"] = "Identifier",
  ["@lsp.type.place"] = "Special",
  ["@lsp.type.dialogue"] = "String",
}

local function link_highlights()
  for group, target in pairs(M.highlights) do
    vim.api.nvim_set_hl(0, group, { link = target, default = true })
  end
end

--- Whether this Neovim is recent enough.
function M.supported()
  return vim.fn.has("nvim-" .. M.minimum_version) == 1
end

local function notify(message, level)
  vim.notify("control-room: " .. message, level or vim.log.levels.INFO)
end

--- The manuscript root `path` lies in: the nearest folder (from the file's
--- own upwards) with `control-room.toml`, or with both `Story/` and
--- `Compendium/`. Nil outside a manuscript.
function M.find_root(path)
  if path == nil or path == "" then
    return nil
  end
  path = vim.fs.normalize(vim.fn.fnamemodify(path, ":p"))
  local start = vim.fn.isdirectory(path) == 1 and path or vim.fs.dirname(path)
  local function marked(dir)
    return vim.fn.filereadable(dir .. "/control-room.toml") == 1
      or (vim.fn.isdirectory(dir .. "/Story") == 1 and vim.fn.isdirectory(dir .. "/Compendium") == 1)
  end
  if marked(start) then
    return start
  end
  for dir in vim.fs.parents(start) do
    if marked(dir) then
      return dir
    end
  end
  return nil
end

--- The server's client for `bufnr` (default: the current buffer), or, with
--- no buffer attached, the first one running.
function M.client(bufnr)
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  local clients = get({ name = M.name, bufnr = bufnr or vim.api.nvim_get_current_buf() })
  if #clients == 0 then
    clients = get({ name = M.name })
  end
  return clients[1]
end

-- `client:request` from 0.11 on; `client.request` before.
local function request(client, method, params, handler, bufnr)
  if vim.fn.has("nvim-0.11") == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- The column of byte `byte` of `line` in the client's position encoding.
local function column(client, line, byte)
  local encoding = client and client.offset_encoding or "utf-16"
  if encoding == "utf-8" then
    return byte
  end
  if vim.fn.has("nvim-0.11") == 1 then
    return vim.str_utfindex(line, encoding, byte, false)
  end
  local utf32, utf16 = vim.str_utfindex(line, byte)
  return encoding == "utf-32" and utf32 or utf16
end

--- Runs a server command; `callback(result)` gets its answer, and an error
--- is shown to the writer.
function M.execute(command, argument, callback, bufnr)
  local client = M.client(bufnr)
  if client == nil then
    notify("the server is not running here; open a scene of a manuscript first", vim.log.levels.WARN)
    return
  end
  local params = { command = command, arguments = argument ~= nil and { argument } or {} }
  request(client, "workspace/executeCommand", params, function(err, result)
    if err then
      notify(err.message or tostring(err), vim.log.levels.ERROR)
      return
    end
    if callback then
      callback(result)
    end
  end, bufnr or vim.api.nvim_get_current_buf())
end

--- The folder this plugin was installed from: `editors/neovim` of the
--- repository, or `neovim` of the archive.
local function plugin_folder()
  local source = debug.getinfo(1, "S").source:gsub("^@", "")
  return vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(vim.fn.fnamemodify(source, ":p"))))
end

--- The server program and how it was found: `"setup"` (a path given to
--- `setup`), `"beside the plugin"` (the archive's `bin/`), `"built"`
--- (`target/release/` of the repository the plugin is in, as lazy.nvim's
--- `build` leaves it) or `"PATH"`; nil when there is none.
function M.server()
  local program = M.options.cmd[1]
  if program ~= "control-room" then
    local path = vim.fn.exepath(program)
    return path ~= "" and path or nil, "setup"
  end
  local folder = plugin_folder()
  local name = vim.fn.has("win32") == 1 and "control-room.exe" or "control-room"
  for _, candidate in ipairs({
    { folder .. "/../bin/" .. name, "beside the plugin" },
    { folder .. "/../../target/release/" .. name, "built" },
  }) do
    local path = vim.fs.normalize(vim.fn.fnamemodify(candidate[1], ":p"))
    if vim.fn.executable(path) == 1 then
      return path, candidate[2]
    end
  end
  local path = vim.fn.exepath(program)
  return path ~= "" and path or nil, "PATH"
end

--- `cmd` with its program resolved by `server()`.
function M.command()
  local command = vim.deepcopy(M.options.cmd)
  command[1] = M.server() or command[1]
  return command
end

--- The config `vim.lsp.start` gets for a buffer at `root`.
function M.config(root)
  local options = M.options
  return {
    name = M.name,
    cmd = M.command(),
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fs.basename(root) } },
    init_options = options.settings,
    settings = options.settings,
    on_attach = options.on_attach,
  }
end

--- Starts (or reuses) the server for `bufnr` when it is in a manuscript.
function M.attach(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local root = M.find_root(vim.api.nvim_buf_get_name(bufnr))
  if root == nil then
    return nil
  end
  if M.server() == nil then
    notify(
      ("cannot find `%s`: install it from its archive (./install.sh), or let lazy.nvim build it, or set `cmd` in setup()"):format(
        M.options.cmd[1]
      ),
      vim.log.levels.ERROR
    )
    return nil
  end
  return vim.lsp.start(M.config(root), { bufnr = bufnr })
end

-- Runs in flight, by progress token: { title, message, percentage }.
M.progress = {}

--- A short line for a statusline: the running runs and their step.
function M.status()
  local parts = {}
  for _, run in pairs(M.progress) do
    local text = run.title or "run"
    if run.message and run.message ~= "" then
      text = text .. ": " .. run.message
    end
    table.insert(parts, text)
  end
  table.sort(parts)
  return table.concat(parts, " | ")
end

-- Keeps `M.progress` from the standard `$/progress` handler's events
-- (`LspProgress` from 0.10 on; 0.9 keeps them in `client.messages`).
local function track_progress(group)
  if vim.fn.has("nvim-0.10") == 0 then
    return
  end
  vim.api.nvim_create_autocmd("LspProgress", {
    group = group,
    callback = function(event)
      local client = vim.lsp.get_client_by_id(event.data.client_id)
      if client == nil or client.name ~= M.name then
        return
      end
      local params = event.data.params or {}
      local token, value = params.token, params.value or {}
      if type(token) ~= "string" or not token:match("^control%-room/") then
        return
      end
      if value.kind == "end" then
        M.progress[token] = nil
      else
        local run = M.progress[token] or {}
        run.title = value.title or run.title
        run.message = value.message or run.message
        run.percentage = value.percentage or run.percentage
        M.progress[token] = run
      end
      if M.options.echo_progress then
        local line = value.kind == "end" and ((value.message or "done") .. " (" .. (token:match("[^/]+$") or "") .. ")")
          or M.status()
        vim.api.nvim_echo({ { "control-room: " .. line } }, false, {})
      end
    end,
  })
end

--- Whether this Neovim can show inlay hints (0.10 and later).
function M.inlay_hints_supported()
  return vim.fn.has("nvim-0.10") == 1 and vim.lsp.inlay_hint ~= nil and vim.lsp.inlay_hint.enable ~= nil
end

-- Calls `attached(bufnr, client)` for each buffer this plugin's server
-- attaches to (however it was started: the plugin, `vim.lsp.enable` or
-- nvim-lspconfig) when the server offers `capability` and the option
-- `option` is not false.
local function on_our_attach(group, option, capability, attached)
  vim.api.nvim_create_autocmd("LspAttach", {
    group = group,
    callback = function(event)
      if M.options[option] == false then
        return
      end
      local client = vim.lsp.get_client_by_id(event.data.client_id)
      if client == nil or client.name ~= M.name then
        return
      end
      if not (client.server_capabilities or {})[capability] then
        return
      end
      attached(event.buf, client)
    end,
  })
end

-- Shows the server's code lenses (the voice's Pick, Why, Cross and Lock,
-- the outline's Draft scene…) in each buffer it attaches to, refreshed as
-- the buffer changes, unless `code_lenses` is false; `:ControlRoomLens`
-- runs the one on the cursor's line.
local function enable_code_lenses(group)
  on_our_attach(group, "code_lenses", "codeLensProvider", function(bufnr)
    local function refresh()
      vim.lsp.codelens.refresh({ bufnr = bufnr })
    end
    refresh()
    vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "BufWritePost", "TextChanged" }, {
      group = group,
      buffer = bufnr,
      callback = refresh,
    })
  end)
end

-- Turns inlay hints on for each buffer the server attaches to when the
-- server offers them and `inlay_hints` is not false.
local function enable_inlay_hints(group)
  if not M.inlay_hints_supported() then
    return
  end
  on_our_attach(group, "inlay_hints", "inlayHintProvider", function(bufnr)
    vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
  end)
end

--- `:ControlRoomDraftScene [SCN-id]`: drafts the scene named, else the one
--- the cursor's outline entry or scene offers "Draft scene" for, else asks.
function M.draft_scene(scene_id)
  local function run(id)
    if id == nil or id == "" then
      return
    end
    M.execute("controlRoom.runRecipe", { recipe = "creative_draft_scene", scene = id }, function(result)
      notify(("drafting %s (run %s)"):format(id, result and result.run_id or "?"))
    end)
  end
  if scene_id and scene_id ~= "" then
    return run(scene_id)
  end
  local client = M.client()
  if client == nil then
    return run(nil)
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local cursor = vim.api.nvim_win_get_cursor(0)
  local line = vim.api.nvim_buf_get_lines(bufnr, cursor[1] - 1, cursor[1], false)[1] or ""
  local position = { line = cursor[1] - 1, character = column(client, line, cursor[2]) }
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = position, ["end"] = position },
    context = { diagnostics = {} },
  }
  request(client, "textDocument/codeAction", params, function(err, actions)
    for _, action in ipairs((not err and actions) or {}) do
      if type(action.title) == "string" and action.title:match("^Draft scene") then
        local command = action.command
        if type(command) == "table" and command.command then
          M.execute(command.command, command.arguments and command.arguments[1], function(result)
            notify(("%s (run %s)"):format(action.title, result and result.run_id or "?"))
          end, bufnr)
          return
        end
      end
    end
    vim.ui.input({ prompt = "Draft which scene (SCN-…)? " }, run)
  end, bufnr)
end

--- `:[range]ControlRoomConference [question]`: asks every agent about the
--- lines given (if any), grounded in evidence; the transcript opens when done.
function M.conference(question, first_line, last_line)
  local bufnr = vim.api.nvim_get_current_buf()
  local function convene(text)
    if text == nil then
      return
    end
    local argument = {}
    if text ~= "" then
      argument.question = text
    end
    if first_line then
      local last = vim.api.nvim_buf_get_lines(bufnr, last_line - 1, last_line, false)[1] or ""
      argument.uri = vim.uri_from_bufnr(bufnr)
      argument.range = {
        start = { line = first_line - 1, character = 0 },
        ["end"] = { line = last_line - 1, character = column(M.client(bufnr), last, #last) },
      }
    elseif text == "" then
      return
    end
    M.execute("controlRoom.conference", argument, function(result)
      notify(("conference %s convened"):format(result and result.conference_id or "?"))
    end, bufnr)
  end
  if question and question ~= "" then
    return convene(question)
  end
  vim.ui.input({ prompt = "Question for the conference: ", default = first_line and "What do you think of this passage?" or "" }, convene)
end

local function describe(run)
  local step = run.step or (run.total_steps and ("step %s/%s"):format(run.current_step_index or 0, run.total_steps)) or ""
  return ("%s  %-9s  %s  %s"):format(run.run_id, run.status or "?", run.label or run.recipe_id or "", step)
end

--- `:ControlRoomRuns`: every run, newest first; the one picked opens its report.
function M.runs()
  M.execute("controlRoom.listRuns", nil, function(runs)
    if runs == nil or #runs == 0 then
      notify("no runs yet")
      return
    end
    vim.ui.select(runs, { prompt = "Runs", format_item = describe }, function(run)
      if run then
        M.execute("controlRoom.openRun", { run_id = run.run_id })
      end
    end)
  end)
end

--- `:ControlRoomCancel [run-id]`: cancels the run named, else one picked
--- among those running.
function M.cancel(run_id)
  local function cancel(id)
    M.execute("controlRoom.cancelRun", { run_id = id }, function(result)
      notify(("run %s: %s"):format(id, result and result.status or "?"))
    end)
  end
  if run_id and run_id ~= "" then
    return cancel(run_id)
  end
  M.execute("controlRoom.listRuns", nil, function(runs)
    local running = vim.tbl_filter(function(run)
      return run.in_flight or run.status == "running"
    end, runs or {})
    if #running == 0 then
      notify("no run is running")
      return
    end
    vim.ui.select(running, { prompt = "Cancel which run?", format_item = describe }, function(run)
      if run then
        cancel(run.run_id)
      end
    end)
  end)
end

local severity_types = { "E", "W", "I", "N" }

--- The quickfix items of a `workspace/diagnostic` answer.
local function quickfix_items(result)
  local items = {}
  for _, report in ipairs((result and result.items) or {}) do
    local filename = vim.uri_to_fname(report.uri)
    for _, diagnostic in ipairs(report.items or {}) do
      local start = diagnostic.range.start
      local code = diagnostic.code and ("[" .. tostring(diagnostic.code) .. "] ") or ""
      table.insert(items, {
        filename = filename,
        lnum = start.line + 1,
        col = start.character + 1,
        text = code .. diagnostic.message,
        type = severity_types[diagnostic.severity or 2] or "W",
      })
    end
  end
  table.sort(items, function(a, b)
    if a.filename ~= b.filename then
      return a.filename < b.filename
    end
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  return items
end

--- `:ControlRoomCheck`: reads the whole manuscript again, checks every file,
--- and puts every diagnostic of the manuscript in the quickfix list.
function M.check()
  M.execute("controlRoom.checkWorkspace", nil, function(summary)
    summary = summary or {}
    notify(("%d files: %d errors, %d warnings, %d notes"):format(
      summary.files or 0,
      summary.errors or 0,
      summary.warnings or 0,
      (summary.information or 0) + (summary.hints or 0)
    ))
    local client = M.client()
    if client == nil then
      return
    end
    request(client, "workspace/diagnostic", { previousResultIds = {} }, function(err, result)
      if err then
        notify(err.message or tostring(err), vim.log.levels.ERROR)
        return
      end
      vim.fn.setqflist({}, " ", { title = "control-room", items = quickfix_items(result) })
    end)
  end)
end

--- The quickfix items of the book's outline (`controlRoom.outline`): each
--- chapter a line of its own, then its scenes with their words against
--- target, point of view and date; a missing scene points at the outline.
function M.outline_items(view, root)
  local items = {}
  local function scene_item(scene)
    local parts = { scene.missing and "missing: not written yet" or scene.label }
    if not scene.missing then
      for _, part in ipairs({ scene.pov, scene.date }) do
        if type(part) == "string" and part ~= "" then
          table.insert(parts, part)
        end
      end
    end
    local path = type(scene.path) == "string" and (root .. "/" .. scene.path) or nil
    return {
      filename = path,
      lnum = path and 1 or 0,
      valid = path and 1 or 0,
      text = ("%s  %s"):format(scene.title, table.concat(parts, " · ")),
    }
  end
  for _, chapter in ipairs(view.chapters or {}) do
    if chapter.title ~= "" then
      local words = chapter.target ~= vim.NIL and chapter.target ~= nil
          and ("%d / %d words"):format(chapter.words, chapter.target)
        or ("%d words"):format(chapter.words)
      table.insert(items, { text = ("## %s  %s"):format(chapter.title, words), valid = 0 })
    end
    for _, scene in ipairs(chapter.scenes or {}) do
      table.insert(items, scene_item(scene))
    end
  end
  if #(view.unlisted or {}) > 0 then
    table.insert(items, { text = "## Not in the outline", valid = 0 })
    for _, scene in ipairs(view.unlisted) do
      table.insert(items, scene_item(scene))
    end
  end
  return items
end

--- `:ControlRoomOutline`: the book's chapters and scenes in the quickfix
--- list, in story order; `:cc N` opens a scene.
function M.outline(callback)
  M.execute("controlRoom.outline", nil, function(view)
    local client = M.client()
    if view == nil or client == nil then
      return
    end
    local items = M.outline_items(view, client.config.root_dir)
    vim.fn.setqflist({}, " ", { title = ("control-room: %s"):format(view.title), items = items })
    if callback then
      callback(view, items)
    else
      vim.cmd("copen")
    end
  end)
end

--- `:ControlRoomCast`: every card in the quickfix list, characters first,
--- each with how many scenes it is in; `:cc N` opens the card.
function M.cast(callback)
  M.execute("controlRoom.cast", nil, function(cards)
    local client = M.client()
    if cards == nil or client == nil then
      return
    end
    local items = {}
    for _, card in ipairs(cards) do
      local scenes = card.scenes == 0 and "in no scene yet"
        or ("in %d scene%s"):format(card.scenes, card.scenes == 1 and "" or "s")
      local position = card.name_position ~= vim.NIL and card.name_position or nil
      table.insert(items, {
        filename = client.config.root_dir .. "/" .. card.path,
        lnum = position and position.line + 1 or 1,
        col = position and position.character + 1 or 1,
        text = ("%s (%s)  %s"):format(card.name, card.kind, scenes),
      })
    end
    vim.fn.setqflist({}, " ", { title = "control-room: cast and places", items = items })
    if callback then
      callback(cards, items)
    else
      vim.cmd("copen")
    end
  end)
end

--- The formats `:ControlRoomCompile` takes.
M.compile_formats = { "docx", "epub", "pdf", "md" }

--- `:ControlRoomCompile [docx|epub|pdf|md] [file]`: the scenes in outline
--- order as one file (default DOCX in standard manuscript format, named for
--- the book beside the manuscript's folders); asks for the format if none
--- is given. `callback(result)` gets the server's answer.
function M.compile(format, output, callback)
  local function run(chosen)
    if chosen == nil or chosen == "" then
      return
    end
    local argument = { format = chosen }
    if output ~= nil and output ~= "" then
      argument.output = vim.fn.fnamemodify(output, ":p")
    end
    M.execute("controlRoom.compile", argument, function(result)
      result = result or {}
      local left = vim.list_extend(vim.deepcopy(result.missing or {}), result.unlisted or {})
      notify(("compiled %s (%d scenes, %d words) to %s%s"):format(
        result.title or "the manuscript",
        result.scenes or 0,
        result.words or 0,
        result.output or "?",
        #left > 0 and ("; left out: " .. table.concat(left, ", ")) or ""
      ))
      if callback then
        callback(result)
      end
    end)
  end
  if format ~= nil and format ~= "" then
    return run(format)
  end
  vim.ui.select(M.compile_formats, { prompt = "Compile the manuscript to" }, run)
end

--- The project's mode as a statusline shows it ("ARCHITECT 75%"), from the
--- last answer of the server; empty until there is one.
M.mode_text = ""

function M.mode_line()
  return M.mode_text
end

local function show_mode(view)
  if type(view) ~= "table" or view.label == nil then
    return
  end
  M.mode_text = ("%s %d%%"):format(view.label, view.gate and view.gate.percent or 0)
end

--- Asks the server for the mode and its gate; `callback(view)` gets them.
function M.mode(callback)
  M.execute("controlRoom.mode", nil, function(view)
    show_mode(view)
    if callback then
      callback(view)
    end
  end)
end

--- Moves to the next mode through its gate; with `because`, past a shut
--- gate (recorded with the risk). `callback(answer)` gets the server's answer.
function M.advance_mode(because, callback)
  local argument = {}
  if because ~= nil and because ~= "" then
    argument = { skip = true, because = because }
  end
  M.execute("controlRoom.mode.advance", argument, function(answer)
    answer = answer or {}
    show_mode(answer.mode)
    if answer.moved then
      notify("now in " .. (answer.mode and answer.mode.label or "?"))
    else
      notify((answer.refused or "the gate is shut") .. " (:ControlRoomAdvanceMode {reason} goes on anyway)", vim.log.levels.WARN)
    end
    if callback then
      callback(answer)
    end
  end)
end

--- The desk, relative to the manuscript.
M.desk_file = "Notes/foreman.md"

--- Asks the Foreman `message` (or, without one, the desk's last `## Writer`
--- message); the reply arrives in the desk as an edit. `callback(answer)`
--- gets the server's first answer (`{ turn = n }`).
function M.ask_foreman(message, callback)
  local argument = {}
  if message ~= nil and message ~= "" then
    argument.message = message
  end
  M.execute("controlRoom.askForeman", argument, function(answer)
    notify("the Foreman is answering in " .. M.desk_file)
    if callback then
      callback(answer)
    end
  end)
end

--- A voice tournament: `contestants` (comma-separated; default the
--- manuscript's `[voice] contestants`) draft lines `first_line`..`last_line`
--- of the current buffer, or, without lines, its scene; the versions land
--- side by side in one file of the voice folder, which opens when done.
--- `callback(answer)` gets the server's first answer (`{ tournament = id }`).
function M.voice_tournament(contestants, first_line, last_line, callback)
  local bufnr = vim.api.nvim_get_current_buf()
  local argument = { uri = vim.uri_from_bufnr(bufnr) }
  if contestants ~= nil and contestants ~= "" then
    argument.contestants = vim.split(contestants, "%s*,%s*", { trimempty = true })
  end
  if first_line then
    local last = vim.api.nvim_buf_get_lines(bufnr, last_line - 1, last_line, false)[1] or ""
    argument.range = {
      start = { line = first_line - 1, character = 0 },
      ["end"] = { line = last_line - 1, character = column(M.client(bufnr), last, #last) },
    }
  end
  M.execute("controlRoom.voice.tournament", argument, function(answer)
    notify(("voice tournament %s: %s contestants drafting"):format(
      answer and answer.tournament or "?",
      answer and answer.contestants or "?"
    ))
    if callback then
      callback(answer)
    end
  end, bufnr)
end

--- The tournament a voice command means: `given` (an id, `T-…`, or a
--- tournament file's path), else the current buffer when it is one.
local function tournament_of(given)
  if given ~= nil and given ~= "" then
    return given
  end
  local name = vim.api.nvim_buf_get_name(0)
  if name:match("/tournaments/[^/]+%.md$") then
    local client = M.client()
    local root = client and (client.root_dir or (client.config and client.config.root_dir))
    if root ~= nil and name:sub(1, #root + 1) == root .. "/" then
      return name:sub(#root + 2)
    end
    return name
  end
  return nil
end

--- A version by number (`2`) or label (`lyrical`), as the server takes it.
local function version_of(text)
  return tonumber(text) or text
end

--- `:ControlRoomVoicePick [TOURNAMENT] VERSION [-- WHY]`: makes the
--- version the gold standard and writes the bundle around it.
function M.voice_pick(tournament, version, why, callback)
  local argument = { tournament = tournament_of(tournament), version = version_of(version) }
  if argument.tournament == nil then
    notify("name a tournament (T-…), or run this in a tournament's file", vim.log.levels.WARN)
    return
  end
  if why ~= nil and why ~= "" then
    argument.why = why
  end
  M.execute("controlRoom.voice.pick", argument, function(answer)
    notify(answer and answer.said and table.concat(answer.said, "; ") or "picked")
    if callback then
      callback(answer)
    end
  end)
end

--- `:ControlRoomVoiceWhy [TOURNAMENT] VERSION`: the model's account of why
--- the version works, under it in the tournament's file.
function M.voice_why(tournament, version, callback)
  local argument = { tournament = tournament_of(tournament), version = version_of(version) }
  if argument.tournament == nil then
    notify("name a tournament (T-…), or run this in a tournament's file", vim.log.levels.WARN)
    return
  end
  M.execute("controlRoom.voice.why", argument, function(answer)
    notify("the model is saying why version " .. tostring(version) .. " works")
    if callback then
      callback(answer)
    end
  end)
end

--- `:ControlRoomVoiceCross [TOURNAMENT] LEAD OTHER`: round two, the lead
--- version crossed with the other in three shares.
function M.voice_cross(tournament, lead, other, callback)
  local argument = {
    tournament = tournament_of(tournament),
    version = version_of(lead),
    other = version_of(other),
  }
  if argument.tournament == nil then
    notify("name a tournament (T-…), or run this in a tournament's file", vim.log.levels.WARN)
    return
  end
  M.execute("controlRoom.voice.cross", argument, function(answer)
    notify(("crossing %s with %s"):format(tostring(lead), tostring(other)))
    if callback then
      callback(answer)
    end
  end)
end

--- `:ControlRoomVoiceLock` and `:ControlRoomVoiceUnlock`: the gold
--- standard's `locked:`.
function M.voice_lock(unlock, callback)
  local command = unlock and "controlRoom.voice.unlock" or "controlRoom.voice.lock"
  M.execute(command, {}, function(answer)
    notify(answer and answer.said or (unlock and "unlocked" or "locked"))
    if callback then
      callback(answer)
    end
  end)
end

--- `:ControlRoomLens`: runs the code lens on the cursor's line (Pick this
--- voice, Why does this work?, Lock this voice, Draft scene…).
function M.run_lens()
  vim.lsp.codelens.run()
end

--- A chart as SVG (`presence`: who is in which scene; `timeline`: story
--- dates against the telling; `beats`: the beat sheet against the
--- manuscript; `run RUN`: a run's steps in time), written to
--- `.control-room/charts/KIND.svg` in the manuscript and opened in the
--- browser (unless `open_charts = false`). `callback(path, answer)` after.
function M.chart(args, callback)
  local words = vim.split(args or "", "%s+", { trimempty = true })
  local kind = words[1] or "presence"
  local run = words[2]
  local client = M.client()
  local root = client and (client.root_dir or (client.config and client.config.root_dir))
  M.execute("controlRoom.chart", { kind = kind, run = run }, function(answer)
    if answer == nil or answer.svg == nil or root == nil then
      return
    end
    local folder = root .. "/.control-room/charts"
    vim.fn.mkdir(folder, "p")
    local name = run and (kind .. "-" .. run) or kind
    local path = folder .. "/" .. name .. ".svg"
    vim.fn.writefile(vim.split(answer.svg, "\n", { plain = true }), path)
    notify(("%s: written to %s"):format(answer.title or kind, path))
    if M.options.open_charts ~= false and vim.ui.open then
      vim.ui.open(path)
    end
    if callback then
      callback(path, answer)
    end
  end)
end

--- The story's health (the seven checks of the book's shape, each with its
--- score, findings and what to do) in a scratch buffer, a split beside the
--- current window. Findings that point at text are diagnostics too.
--- `callback(answer, bufnr)` after.
function M.health(callback)
  M.execute("controlRoom.health", vim.empty_dict(), function(answer)
    if answer == nil or answer.text == nil then
      return
    end
    local bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, vim.split(answer.text, "\n", { plain = true }))
    vim.bo[bufnr].bufhidden = "wipe"
    vim.bo[bufnr].modifiable = false
    vim.bo[bufnr].filetype = "markdown"
    pcall(vim.api.nvim_buf_set_name, bufnr, "control-room://health")
    vim.cmd("vsplit")
    vim.api.nvim_win_set_buf(0, bufnr)
    if callback then
      callback(answer, bufnr)
    end
  end)
end

--- The writer's verdict on a scene for a check a model reads (A3, B1, C2),
--- kept over whatever a run says; `verdict` "clear" takes it back.
function M.health_override(check, scene, verdict, why, callback)
  local argument = {
    check = check,
    scene = scene,
    verdict = verdict ~= "clear" and verdict or vim.NIL,
    why = why or "",
  }
  M.execute("controlRoom.healthOverride", argument, function(answer)
    notify(("%s of %s: %s"):format(check, scene, verdict == "clear" and "the model's reading counts again" or verdict))
    if callback then
      callback(answer)
    end
  end)
end

local function create_commands()
  local command = vim.api.nvim_create_user_command
  command("ControlRoomDraftScene", function(opts)
    M.draft_scene(opts.args)
  end, { nargs = "?", desc = "control-room: draft a scene (the one under the cursor, or SCN-id)" })
  command("ControlRoomConference", function(opts)
    if opts.range > 0 then
      M.conference(opts.args, opts.line1, opts.line2)
    else
      M.conference(opts.args)
    end
  end, { nargs = "?", range = true, desc = "control-room: convene a conference on a question or the lines given" })
  command("ControlRoomRuns", function()
    M.runs()
  end, { desc = "control-room: list runs and open one's report" })
  command("ControlRoomCancel", function(opts)
    M.cancel(opts.args)
  end, { nargs = "?", desc = "control-room: cancel a running run" })
  command("ControlRoomOutline", function()
    M.outline()
  end, { desc = "control-room: the book's chapters and scenes in the quickfix list" })
  command("ControlRoomCast", function()
    M.cast()
  end, { desc = "control-room: the cards, with how many scenes each is in, in the quickfix list" })
  command("ControlRoomCheck", function()
    M.check()
  end, { desc = "control-room: check the whole manuscript into the quickfix list" })
  command("ControlRoomAsk", function(opts)
    M.ask_foreman(opts.args)
  end, { nargs = "?", desc = "control-room: ask the Foreman (a message, or the desk's last one)" })
  command("ControlRoomVoiceTournament", function(opts)
    if opts.range > 0 then
      M.voice_tournament(opts.args, opts.line1, opts.line2)
    else
      M.voice_tournament(opts.args)
    end
  end, {
    nargs = "?",
    range = true,
    desc = "control-room: draft the lines given (or this scene) in several voices side by side (contestants comma-separated)",
  })
  -- [TOURNAMENT] VERSION… [-- WHY]: the tournament may be left out in
  -- its own file.
  local function voice_words(args)
    local said, why = args:match("^(.-)%s+%-%-%s+(.*)$")
    local words = vim.split(vim.trim(said or args), "%s+", { trimempty = true })
    return words, why
  end
  local function with_tournament(words, versions)
    if #words > versions then
      return words[1], vim.list_slice(words, 2)
    end
    return nil, words
  end
  command("ControlRoomVoicePick", function(opts)
    local words, why = voice_words(opts.args)
    local tournament, rest = with_tournament(words, 1)
    M.voice_pick(tournament, rest[1], why)
  end, {
    nargs = "+",
    desc = "control-room: make a tournament's version the gold standard ([TOURNAMENT] VERSION [-- WHY])",
  })
  command("ControlRoomVoiceWhy", function(opts)
    local tournament, rest = with_tournament(voice_words(opts.args), 1)
    M.voice_why(tournament, rest[1])
  end, { nargs = "+", desc = "control-room: ask why a tournament's version works ([TOURNAMENT] VERSION)" })
  command("ControlRoomVoiceCross", function(opts)
    local tournament, rest = with_tournament(voice_words(opts.args), 2)
    M.voice_cross(tournament, rest[1], rest[2])
  end, { nargs = "+", desc = "control-room: cross two versions of a tournament ([TOURNAMENT] LEAD OTHER)" })
  command("ControlRoomVoiceLock", function()
    M.voice_lock(false)
  end, { desc = "control-room: lock the voice (the gold standard's locked: true)" })
  command("ControlRoomVoiceUnlock", function()
    M.voice_lock(true)
  end, { desc = "control-room: unlock the voice, so another version may be picked" })
  command("ControlRoomLens", function()
    M.run_lens()
  end, { desc = "control-room: run the code lens on the cursor's line" })
  command("ControlRoomChart", function(opts)
    M.chart(opts.args)
  end, {
    nargs = "?",
    complete = function()
      return { "presence", "timeline", "beats", "run" }
    end,
    desc = "control-room: draw a chart (presence, timeline, beats, run RUN) and open it in the browser",
  })
  command("ControlRoomHealth", function()
    M.health()
  end, { desc = "control-room: the story's health (pacing, beats, cast, motifs) in a scratch buffer" })
  command("ControlRoomHealthOverride", function(opts)
    -- CHECK SCENE VERDICT… [-- WHY…]
    local said, why = opts.args:match("^(.-)%s+%-%-%s+(.*)$")
    local words = vim.split(vim.trim(said or opts.args), "%s+")
    if #words < 3 then
      notify("say a check (A3, B1, C2), a scene id and a verdict (or clear), then -- and why", vim.log.levels.WARN)
      return
    end
    M.health_override(words[1], words[2], table.concat(words, " ", 3), why)
  end, {
    nargs = "+",
    desc = "control-room: your verdict on a scene for A3, B1 or C2 (B1 SCN-x not challenged -- why), kept over the model's",
  })
  command("ControlRoomMode", function()
    M.mode(function(view)
      if view then
        local lines = { ("%s · gate (%s): %s"):format(view.label, view.gate_name, view.gate.met and "open" or "shut") }
        vim.list_extend(lines, view.gate.unmet or {})
        notify(table.concat(lines, "\n"))
      end
    end)
  end, { desc = "control-room: the project's mode and the gate out of it" })
  command("ControlRoomAdvanceMode", function(opts)
    M.advance_mode(opts.args)
  end, { nargs = "?", desc = "control-room: advance the mode (a reason goes past a shut gate)" })
  command("ControlRoomCompile", function(opts)
    M.compile(opts.fargs[1], opts.fargs[2])
  end, {
    nargs = "*",
    complete = function(_, line)
      return #vim.split(line, "%s+") <= 2 and M.compile_formats or vim.fn.getcompletion("", "file")
    end,
    desc = "control-room: compile the manuscript into one file (docx, epub, pdf or md)",
  })
end

--- Sets the plugin up: commands, progress tracking, and the server started
--- for Markdown buffers under a manuscript root (`autostart = false` leaves
--- starting to nvim-lspconfig or `vim.lsp.enable`).
function M.setup(options)
  if not M.supported() then
    vim.notify(
      ("control-room needs Neovim %s or later; this is %s"):format(M.minimum_version, tostring(vim.version())),
      vim.log.levels.ERROR
    )
    return false
  end
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), options or {})
  local group = vim.api.nvim_create_augroup("control_room", { clear = true })
  create_commands()
  track_progress(group)
  enable_inlay_hints(group)
  enable_code_lenses(group)
  link_highlights()
  -- A colorscheme clears the links; they come back unless it made its own.
  vim.api.nvim_create_autocmd("ColorScheme", { group = group, callback = link_highlights })
  if M.options.autostart ~= false then
    vim.api.nvim_create_autocmd("FileType", {
      group = group,
      pattern = M.options.filetypes,
      callback = function(event)
        M.attach(event.buf)
      end,
    })
    -- Buffers already open when setup runs.
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) and vim.tbl_contains(M.options.filetypes, vim.bo[bufnr].filetype) then
        M.attach(bufnr)
      end
    end
  end
  return true
end

return M
