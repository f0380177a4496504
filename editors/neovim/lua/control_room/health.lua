--- `:checkhealth control_room`: the Neovim version, the server binary and its
--- version, the manuscript root of the current buffer, and whether the model
--- servers answer (asked of `control-room doctor`, which resolves the `[llm]`
--- settings exactly as the server does).

local M = {}

local health = vim.health
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local error = health.error or health.report_error
local info = health.info or health.report_info

function M.check()
  local control_room = require("control_room")
  start("control-room")
  if control_room.supported() then
    ok(("Neovim %s"):format(tostring(vim.version())))
  else
    error(("Neovim %s is too old: control-room needs %s or later"):format(
      tostring(vim.version()),
      control_room.minimum_version
    ))
    return
  end

  local path, how = control_room.server()
  if path == nil then
    error(("no `%s` beside the plugin, built in its folder, or on PATH"):format(control_room.options.cmd[1]), {
      "Install it from its archive: ./install.sh (puts it in ~/.local/bin)",
      "Or let lazy.nvim build it: build = \"cargo build --release\" (needs a Rust toolchain)",
      "Or give its path: require('control_room').setup({ cmd = { '/path/to/control-room', 'lsp' } })",
    })
    return
  end
  ok(("server: %s (%s)"):format(path, how))
  local answer = vim.fn.system({ path, "--version" })
  if vim.v.shell_error ~= 0 or not answer:match("^control%-room ") then
    error(("the server does not answer `--version`: %s"):format(vim.trim(answer)))
    return
  end
  ok(("the server answers: %s"):format(vim.trim(answer)))

  -- `:checkhealth` shows its report in a buffer of its own: the writer's
  -- file is the alternate one.
  local folder = vim.fn.getcwd()
  for _, name in ipairs({ vim.api.nvim_buf_get_name(0), vim.fn.expand("#:p") }) do
    if name ~= "" and not name:find("://", 1, true) and vim.fn.filereadable(name) == 1 then
      folder = vim.fs.dirname(name)
      break
    end
  end
  local command = { path, "doctor", "--format", "json", folder }
  local llm = vim.tbl_get(control_room.options, "settings", "controlRoom", "llm")
  if llm ~= nil and next(llm) ~= nil then
    vim.list_extend(command, { "--llm", vim.json.encode(llm) })
  end
  local output = vim.fn.system(command)
  local decoded, report = pcall(vim.json.decode, output)
  if not decoded or type(report) ~= "table" then
    error(("`control-room doctor` failed: %s"):format(output))
    return
  end
  ok(("version: %s"):format(report.version))

  if report.root ~= vim.NIL and report.root ~= nil then
    ok(("manuscript root: %s"):format(report.root))
  else
    warn(("no manuscript root at or above %s"):format(folder), {
      "A manuscript's root holds control-room.toml, or both Story/ and Compendium/",
    })
  end
  local attached = control_room.client()
  if attached then
    ok(("server running (client %d, root %s)"):format(attached.id, attached.config.root_dir or "?"))
  else
    info("server not running in this Neovim (open a scene of a manuscript)")
  end

  local llm_report = report.llm or {}
  if type(llm_report.error) == "string" then
    error(("the [llm] settings: %s"):format(llm_report.error))
    return
  end
  for _, endpoint in ipairs(llm_report.endpoints or {}) do
    local name = ("%s model %s (%s at %s)"):format(endpoint.agent, endpoint.model, endpoint.provider, endpoint.base_url)
    if endpoint.reachable == false then
      error(("model server unreachable: %s: %s"):format(name, endpoint.detail), {
        "Start the model server, or set [llm] base_url in control-room.toml or settings.controlRoom.llm.baseUrl",
      })
    else
      ok(("model server reachable: %s: %s"):format(name, endpoint.detail))
    end
    if endpoint.key_set == false then
      error(("%s: the variable %s holding the API key is not set"):format(name, endpoint.api_key_env))
    end
  end
end

return M
