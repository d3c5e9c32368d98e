# Sourced by the prepare-*.sh scripts: `compile NAME SRC ARGS...` runs
# `kiln compile` of SRC (a file, or the name of an example) with ARGS into
# $D/specs/NAME.cubin.json, the spec alone (the runtime compiles its source
# itself). Compiles run in the background, whose failures `wait` does not
# report: each failure is printed (with kiln's last line) and its name
# appended to $D/failed. Expects K (the kiln binary) and D (.device).
compile() { # name example|file args...
  local name=$1 src=$2; shift 2
  [ -f "$src" ] || src=examples/$src.mlir
  if ! "$K" compile "$src" "$@" -o "$D/specs/$name.cubin" > /dev/null 2> "$D/specs/$name.log"; then
    echo "$(basename "$0" .sh): could not compile $name: $(tail -1 "$D/specs/$name.log")" >&2
    echo "$name" >> "$D/failed"
  fi
  rm -f "$D/specs/$name".*cubin "$D/specs/$name.log"
}
