#!/usr/bin/env bash
# Checks that scripts/test stops at a broken step, with a sentence, and
# never skips a suite in silence. Runs a copy of scripts/test (or of the
# file given as $1, e.g. an older version: `git show HEAD~1:scripts/test >
# /tmp/old-test; bash Tests/Scripts/test-script-stops.sh /tmp/old-test`)
# in a temporary tree where everything it calls is a stub: `swift`, `dpkg`
# and `apt-get` first on PATH, and scripts/postgres-cluster,
# scripts/protocol-tests, scripts/browser-tests, scripts/check-test-waits,
# scripts/check-imports and this check itself in the tree. Takes well under a second; builds and starts nothing.
#
#   1. scripts/postgres-cluster start fails: scripts/test exits non-zero,
#      says so in a sentence naming PostgreSQL, and runs no `swift test`.
#   2. scripts/protocol-tests and scripts/browser-tests have lost their
#      run bit: both still run.
#   3. scripts/protocol-tests is missing: scripts/test exits non-zero with
#      a sentence naming it.
#
# Then the Python suites' scripts as they are in this tree
# (scripts/python-tests and its wrappers scripts/browser-tests and
# scripts/protocol-tests), copied into a temporary tree, with `python3`,
# `openssl` and `strace` stubbed first on PATH and CHROMIUM and
# VINYLOGUE_BUILD_DIR pointing at stubs:
#
#   4. scripts/python-tests without a suite, or with an unknown one, exits
#      non-zero with a sentence naming both suites, and runs no pytest.
#   5. For each suite, through its wrapper: pytest gets the suite's folder
#      and the extra arguments; its exit 0 and 1 are passed on with a
#      sentence; its exit 5 (no tests collected) is a failure with a
#      sentence.
#   6. A binary is missing from VINYLOGUE_BUILD_DIR: a failure with a
#      sentence naming it and `swift build`, and no pytest.
#   7. The suite's packages cannot be imported and a plain `pip install` is
#      refused (an externally managed Python): pip is asked again with
#      --break-system-packages for that suite's packages, and the tests run.
#   8. scripts/python-tests has lost its run bit: the wrappers still run it;
#      it is missing: they fail with a sentence naming it.
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
  printf '#!/usr/bin/env bash\nexit 0\n' > "$dir/scripts/check-test-waits"
  printf '#!/usr/bin/env python3\n' > "$dir/scripts/check-imports"
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

# --- The Python suites' scripts (cases 4 to 8). Every stub lives in $work.

# python3: `-c` (the import check) succeeds once the stub pip has
# "installed", or always with STUB_IMPORTS=ok (the default); `-m pip
# install` is refused without --break-system-packages; `-m pytest` exits
# $PYTEST_STATUS. Each `-m` call is written to $STUB_CALLS.
cat > "$work/bin/python3" <<'STUB'
#!/usr/bin/env bash
case "$1" in
  -c) [ "${STUB_IMPORTS:-ok}" = ok ] || [ -f "$STUB_CALLS.installed" ] ;;
  -m)
    shift
    echo "$*" >> "$STUB_CALLS"
    case "$1" in
      pip)
        [ "${2:-}" = install ] || exit 0
        [[ " $* " == *" --break-system-packages "* ]] || { echo "error: externally-managed-environment" >&2; exit 1; }
        touch "$STUB_CALLS.installed" ;;
      pytest) exit "${PYTEST_STATUS:-0}" ;;
    esac ;;
esac
STUB
mkdir -p "$work/build"
for stub in "$work/bin/openssl" "$work/bin/strace" "$work/bin/mpd" "$work/bin/mpdscribble" "$work/bin/sox" "$work/bin/mpc" \
            "$work/bin/supysonic-server" "$work/chromium" \
            "$work/build/vinylogue" "$work/build/fake-lastfm"; do
  printf '#!/usr/bin/env bash\nexit 0\n' > "$stub"
done
chmod +x "$work/bin/python3" "$work/bin/openssl" "$work/bin/strace" "$work/bin/mpd" "$work/bin/mpdscribble" "$work/bin/sox" "$work/bin/mpc" \
  "$work/bin/supysonic-server" "$work/chromium" \
  "$work/build/vinylogue" "$work/build/fake-lastfm"

# A fresh tree holding copies of this tree's Python suites' scripts.
python_tree() {
  local dir="$work/tree-$RANDOM$RANDOM" name
  mkdir -p "$dir/scripts"
  for name in python-tests browser-tests protocol-tests; do
    if [ -f "$here/scripts/$name" ]; then cp "$here/scripts/$name" "$dir/scripts/$name"; fi
  done
  echo "$dir"
}

# Runs `bash scripts/$2 ${@:3}` in tree $1; sets $status, $out and $calls.
# PYTEST_STATUS, STUB_IMPORTS and BUILD_DIR (default: the stub binaries)
# come from the caller.
run_python() {
  local dir=$1
  shift
  : > "$work/calls"
  rm -f "$work/calls.installed"
  out=$(cd "$dir" && PATH="$work/bin:$PATH" STUB_CALLS="$work/calls" CHROMIUM="$work/chromium" \
    VINYLOGUE_BUILD_DIR="${BUILD_DIR:-$work/build}" timeout 20 bash "scripts/$1" "${@:2}" 2>&1)
  status=$?
  calls=$(cat "$work/calls")
}

if [ ! -f "$here/scripts/python-tests" ]; then
  fail "scripts/python-tests is missing from $here; it runs both Python suites"
else
  # 4. No suite, or an unknown one.
  for words in "" "integration"; do
    dir=$(python_tree)
    # shellcheck disable=SC2086  # no word at all for the first case
    run_python "$dir" python-tests $words
    if [ "$status" -eq 0 ]; then
      fail "scripts/python-tests ${words:-(no suite)} exited 0; it printed:
$out"
    elif ! grep -q 'browser' <<< "$out" || ! grep -q 'protocol' <<< "$out"; then
      fail "scripts/python-tests ${words:-(no suite)} failed (exit $status) without a sentence naming the suites it runs:
$out"
    fi
    if grep -q '^pytest' <<< "$calls"; then fail "scripts/python-tests ${words:-(no suite)} ran pytest"; fi
  done

  for suite in browser protocol; do
    folder="Tests/${suite^}"
    dir=$(python_tree)

    # 5. pytest's exit status, through the wrapper.
    PYTEST_STATUS=0 run_python "$dir" "$suite-tests" -k chosen -x
    [ "$status" -eq 0 ] || fail "scripts/$suite-tests exited $status when pytest passed:
$out"
    grep -qE "^$suite-tests: passed" <<< "$out" || fail "scripts/$suite-tests said no 'passed' sentence when pytest passed:
$out"
    grep -qE "^pytest $folder .*-k chosen -x\$" <<< "$calls" \
      || fail "scripts/$suite-tests did not run pytest on $folder with the extra arguments; the calls were:
$calls"
    PYTEST_STATUS=1 run_python "$dir" "$suite-tests"
    [ "$status" -eq 1 ] || fail "scripts/$suite-tests exited $status, not 1, when pytest failed with 1"
    grep -qE "^$suite-tests: failed" <<< "$out" || fail "scripts/$suite-tests said no 'failed' sentence when pytest failed:
$out"
    PYTEST_STATUS=5 run_python "$dir" "$suite-tests"
    if [ "$status" -eq 0 ]; then
      fail "scripts/$suite-tests exited 0 when pytest collected no tests (exit 5)"
    elif ! grep -qE "^$suite-tests: .*collected no tests" <<< "$out"; then
      fail "scripts/$suite-tests failed when pytest collected no tests but said no sentence of its own:
$out"
    fi

    # 6. A binary is missing.
    mkdir -p "$work/build-$suite"
    cp "$work/build/vinylogue" "$work/build-$suite/"
    BUILD_DIR="$work/build-$suite" run_python "$dir" "$suite-tests"
    if [ "$status" -eq 0 ]; then
      fail "scripts/$suite-tests exited 0 with fake-lastfm missing"
    elif ! grep -qE "^$suite-tests: .*fake-lastfm is missing.*swift build" <<< "$out"; then
      fail "scripts/$suite-tests failed with fake-lastfm missing but no sentence named it and 'swift build':
$out"
    fi
    if grep -q '^pytest' <<< "$calls"; then fail "scripts/$suite-tests ran pytest with fake-lastfm missing"; fi

    # 7. An externally managed Python: pip again with --break-system-packages.
    case "$suite" in
      browser) packages="aiosmtpd axe-playwright-python==0.1.8 playwright pytest" ;;
      protocol) packages="aiosmtpd liblistenbrainz mutagen py-sonic pylast pytest schemathesis" ;;
    esac
    STUB_IMPORTS=missing run_python "$dir" "$suite-tests"
    [ "$status" -eq 0 ] || fail "scripts/$suite-tests failed (exit $status) when pip needed --break-system-packages:
$out"
    grep -qE "^pip install .*--break-system-packages $packages\$" <<< "$calls" \
      || fail "scripts/$suite-tests did not ask pip again with --break-system-packages for $packages; the calls were:
$calls"
    grep -q "^pytest $folder" <<< "$calls" || fail "scripts/$suite-tests ran no pytest after installing with pip"

    # 8. python-tests without its run bit, then missing.
    chmod -x "$dir/scripts/python-tests"
    run_python "$dir" "$suite-tests"
    grep -q "^pytest $folder" <<< "$calls" \
      || fail "scripts/$suite-tests did not run scripts/python-tests without its run bit (exit $status):
$out"
    rm "$dir/scripts/python-tests"
    run_python "$dir" "$suite-tests"
    if [ "$status" -eq 0 ]; then
      fail "scripts/$suite-tests exited 0 with scripts/python-tests missing"
    elif ! grep -qE "^$suite-tests: .*scripts/python-tests" <<< "$out"; then
      fail "scripts/$suite-tests failed with scripts/python-tests missing but no sentence named it:
$out"
    fi
  done
fi

if [ "$failures" -gt 0 ]; then
  echo "test-script-stops: $failures check(s) failed for $script and the Python suites' scripts" >&2
  exit 1
fi
echo "test-script-stops: scripts/test stops at a broken step and runs every suite (3 cases); scripts/python-tests and its wrappers pass pytest's status on, fail on no tests, a missing binary or a missing python-tests, and fall back to --break-system-packages (5 cases)"
