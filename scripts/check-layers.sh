#!/bin/sh
# check-layers.sh -- checks that #include lines run one way, top to bottom
# (docs/conventions.md, "Layers"). Each quoted include of src/, adapters/,
# tools/ and examples/ is resolved as the compiler resolves it (the
# including file's folder, then the repository root, src/, adapters/ and
# include/), and these rules are checked:
#
#   1. an adapter (adapters/) includes nothing under src/ but src/common/,
#      and one adapter's folder (adapters/redis/, adapters/memory/) nothing
#      of another's: what both share lives in adapters/scripts/ and
#      adapters/ops/ (backend.c, which opens them all, excepted);
#   2. src/common/ includes only src/common/ and the public headers
#      (include/);
#   3. the core (src/core/) and the primitives (src/<primitive>/) include
#      no single adapter: of adapters/ only backend.h and ops/;
#   4. the core includes no primitive, and a primitive nothing of another
#      primitive's folder: src/core/, src/common/, include/ and its own;
#   5. a program (tools/, examples/) includes only the public headers and
#      files of its own folder.
#
# Prints one line per violation ("file: includes "x" (path): rule") and
# exits 1 when there is any, else exits 0. The includes the exception list
# below still allows, and exceptions no longer needed, are told on stderr
# as notes. Angle-bracket
# includes are system and third-party headers and are not checked. Run from
# anywhere: sh scripts/check-layers.sh
set -eu
cd "$(dirname "$0")/.."

# Files that still reach the library's internals, allowed for now (rule 5
# only), one per line. Each one is a debt: the file goes from this list as
# soon as it uses the public API alone. Empty: every program is built on
# the public API (the last two, tools/fleet/cmd_pool.c and scan.c, moved
# to fleet_pool_query_*() and fleet_client_scan_names()).
exceptions='
'

# Where a quoted include of `file` resolves, as a path from the root;
# empty when it is nowhere in the tree (a generated header).
resolve() {
  dir=${1%/*}
  for base in "$dir" . src adapters include; do
    if [ -f "$base/$2" ]; then
      # Normalise "./x", "a/b/../c" and "a/./b" to a plain path.
      printf '%s\n' "$base/$2" | awk -F/ '{
        n = 0
        for (i = 1; i <= NF; i++) {
          if ($i == "." || $i == "") continue
          if ($i == ".." && n > 0) { n--; continue }
          p[++n] = $i
        }
        s = p[1]
        for (i = 2; i <= n; i++) s = s "/" p[i]
        print s
      }'
      return
    fi
  done
}

# The rule `file` breaks by including `path`, or nothing; "allowed: rule"
# when the exception list lets it pass.
rule() {
  file=$1 path=$2
  case $file in
    adapters/*)
      mine=${file#adapters/}
      case $mine in
        */*) mine=adapters/${mine%%/*} ;;
        *) mine=adapters ;; # backend.c opens every adapter
      esac
      case $path in
        src/common/*) ;;
        src/*) echo "an adapter includes only src/common/ of src/" ;;
        adapters/scripts/* | adapters/ops/* | "$mine"/*) ;;
        adapters/*/*) echo "an adapter includes no other adapter's folder" ;;
      esac ;;
    src/common/*)
      case $path in
        src/common/* | include/*) ;;
        *) echo "src/common/ includes only src/common/ and include/" ;;
      esac ;;
    src/core/*)
      case $path in
        adapters/backend.h | adapters/ops/*) ;;
        adapters/*) echo "the core opens adapters through adapters/backend.h" ;;
        src/core/* | src/common/* | include/*) ;;
        src/*) echo "the core includes no primitive (src/<primitive>/)" ;;
      esac ;;
    src/*)
      mine=${file#src/}
      mine=src/${mine%%/*}
      case $path in
        adapters/backend.h | adapters/ops/*) ;;
        adapters/*) echo "a primitive opens adapters through adapters/backend.h" ;;
        src/core/* | src/common/* | include/* | "$mine"/*) ;;
        src/*) echo "a primitive includes no other primitive's folder" ;;
      esac ;;
    tools/* | examples/*)
      case $path in
        include/* | "${file%/*}"/*) ;;
        *)
          why="a program includes only public headers and its own folder"
          case $exceptions in
            *"
$file
"*) echo "allowed: $why" ;;
            *) echo "$why" ;;
          esac ;;
      esac ;;
  esac
}

status=0
used=""
files=$(find src adapters tools examples -type f \
  \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
include_re='s/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p'
for file in $files; do
  for inc in $(sed -n "$include_re" "$file"); do
    path=$(resolve "$file" "$inc")
    [ -n "$path" ] || continue
    why=$(rule "$file" "$path")
    case $why in
      "") ;;
      allowed:*)
        echo "note: $file: includes \"$inc\" ($path): ${why#allowed: }" \
          "(an exception, for now)" >&2
        used="$used $file" ;;
      *)
        echo "$file: includes \"$inc\" ($path): $why"
        status=1 ;;
    esac
  done
done
# An exception no longer needed is told, so that it goes from the list.
for file in $exceptions; do
  case "$used " in
    *" $file "*) ;;
    *) echo "note: $file needs no exception any more:" \
         "remove it from the list" >&2 ;;
  esac
done
exit $status
