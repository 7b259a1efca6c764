#!/usr/bin/env bash
# Checks that scripts/test stops at a broken step, with a sentence, and
# never skips a suite in silence. Runs a copy of scripts/test (or of the
# file given as $1, e.g. an older version: `git show HEAD~1:scripts/test >
# /tmp/old-test; bash Tests/Scripts/test-script-stops.sh /tmp/old-test`)
# in a temporary tree where everything it calls is a stub: `swift`, `dpkg`
# and `apt-get` first on PATH, and scripts/postgres-cluster,
# scripts/protocol-tests, scripts/browser-tests and this check itself in
# the tree. Takes well under a second; builds and starts nothing.
#
#   1. scripts/postgres-cluster start fails: scripts/test exits non-zero,
#      says so in a sentence naming PostgreSQL, and runs no `swift test`.
#   2. scripts/protocol-tests and scripts/browser-tests have lost their
#      run bit: both still run.
#   3. scripts/protocol-tests is missing: scripts/test exits non-zero with
#      a sentence naming it.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
script=${1:-$here/scripts/test}
[ -f "$script" ] || { echo "test-script-stops: $script is missing" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/test-script-stops.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "test-script-stops: FAILED: $*" >&2; failures=$((failures + 1)); }

# The stubs on PATH: every call is written to $STUB_CALLS.
mkdir -p "$work/bin"
cat > "$work/bin/swift" <<'EOF'
#!/usr/bin/env bash
echo "swift $*" >> "$STUB_CALLS"
mkdir -p .build
EOF
cat > "$work/bin/dpkg" <<'EOF'
#!/usr/bin/env bash
exit 0
EOF
cat > "$work/bin/apt-get" <<'EOF'
#!/usr/bin/env bash
echo "apt-get $*" >> "$STUB_CALLS"
exit 1
EOF
chmod +x "$work/bin/"*

# A fresh tree holding the script under test and stubs of what it runs.
# $1: how scripts/postgres-cluster start behaves (ok | fail).
tree() {
  local dir="$work/tree-$RANDOM$RANDOM"
  mkdir -p "$dir/scripts" "$dir/Tests/Scripts"
  cp "$script" "$dir/scripts/test"
  chmod +x "$dir/scripts/test"
  printf '#!/usr/bin/env bash\nexit 0\n' > "$dir/Tests/Scripts/test-script-stops.sh"
  if [ "$1" = fail ]; then
    cat > "$dir/scripts/postgres-cluster" <<'EOF'
#!/usr/bin/env bash
echo "postgres-cluster $*" >> "$STUB_CALLS"
[ "${1:-}" = stop ] && exit 0
echo "postgres-cluster: the PostgreSQL server did not start" >&2
exit 1
EOF
  else
    cat > "$dir/scripts/postgres-cluster" <<'EOF'
#!/usr/bin/env bash
echo "postgres-cluster $*" >> "$STUB_CALLS"
[ "${1:-}" = stop ] && exit 0
echo "export VINYLOGUE_TEST_DATABASE_URL=postgres://stub@127.0.0.1:1/postgres"
echo "export VINYLOGUE_TEST_PG_DIR=/nonexistent/stub-cluster"
EOF
  fi
  chmod +x "$dir/scripts/postgres-cluster"
  for suite in protocol browser; do
    printf '#!/usr/bin/env bash\necho "%s-tests stub ran"\n' "$suite" > "$dir/scripts/$suite-tests"
    chmod +x "$dir/scripts/$suite-tests"
  done
  echo "$dir"
}

# Runs scripts/test in tree $1; sets $status, $out (stdout and stderr) and $calls.
run() {
  : > "$work/calls"
  out=$(cd "$1" && PATH="$work/bin:$PATH" STUB_CALLS="$work/calls" timeout 20 bash scripts/test 2>&1)
  status=$?
  calls=$(cat "$work/calls")
}

# 1. The cluster does not start.
dir=$(tree fail)
run "$dir"
if [ "$status" -eq 0 ]; then
  fail "scripts/test exited 0 when scripts/postgres-cluster start failed; it printed:
$out"
elif ! grep -qiE '^test: .*postgresql' <<< "$out"; then
  fail "scripts/test stopped when the cluster did not start (exit $status) but printed no sentence of its own naming PostgreSQL:
$out"
fi
if grep -q '^swift test' <<< "$calls"; then
  fail "scripts/test ran 'swift test' after the cluster failed to start"
fi

# 2. The suites' scripts have lost their run bit: they still run.
dir=$(tree ok)
chmod -x "$dir/scripts/protocol-tests" "$dir/scripts/browser-tests"
run "$dir"
[ "$status" -eq 0 ] || fail "scripts/test failed (exit $status) with stubs that all succeed:
$out"
for suite in protocol browser; do
  grep -q "^$suite-tests stub ran\$" <<< "$out" \
    || fail "scripts/$suite-tests without its run bit was skipped in silence; scripts/test printed:
$out"
done

# 3. A suite's script is missing: a failure with a sentence, not a skip.
dir=$(tree ok)
rm "$dir/scripts/protocol-tests"
run "$dir"
if [ "$status" -eq 0 ]; then
  fail "scripts/test exited 0 with scripts/protocol-tests missing; it printed:
$out"
elif ! grep -qE '^test: .*scripts/protocol-tests' <<< "$out"; then
  fail "scripts/test failed with scripts/protocol-tests missing (exit $status) but no sentence of its own named it:
$out"
fi

if [ "$failures" -gt 0 ]; then
  echo "test-script-stops: $failures check(s) failed for $script" >&2
  exit 1
fi
echo "test-script-stops: scripts/test stops at a broken step and runs every suite (3 cases)"
