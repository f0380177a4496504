#!/bin/sh
# Installs control-room from this unpacked archive:
#
#   ./install.sh        into ~/.local/bin
#   ./install.sh DIR    into DIR
#
# Copies the program, checks that it runs, and says what to add to PATH when
# the folder is not on it. Nothing else on the machine is touched.
set -eu

here="$(cd "$(dirname "$0")" && pwd)"
program="control-room"
[ -f "$here/bin/control-room.exe" ] && program="control-room.exe"
source="$here/bin/$program"
[ -f "$source" ] || { echo "install.sh: no $source: run it from the unpacked archive" >&2; exit 1; }

dir="${1:-$HOME/.local/bin}"
mkdir -p "$dir" || { echo "install.sh: cannot make the folder $dir" >&2; exit 1; }
dir="$(cd "$dir" && pwd)"

# A copy beside the old program, then one rename: a running server keeps its file.
cp "$source" "$dir/.$program.new"
chmod 755 "$dir/.$program.new"
mv -f "$dir/.$program.new" "$dir/$program"

if ! version="$("$dir/$program" --version 2>&1)"; then
  echo "install.sh: $dir/$program was copied but does not run on this machine:" >&2
  echo "$version" >&2
  exit 1
fi
echo "installed $version as $dir/$program"

case ":$PATH:" in
  *":$dir:"*) echo "it is on your PATH: try \`control-room new \"My Novel\"\`" ;;
  *)
    echo
    echo "$dir is not on your PATH. Add this line to your shell's startup file"
    echo "(~/.bashrc, ~/.zshrc or ~/.profile), then open a new terminal:"
    echo
    echo "    export PATH=\"$dir:\$PATH\""
    ;;
esac
