#!/usr/bin/env bash
# The whole test suite, as `npm test` runs it: the system packages the tests need (installed if missing and
# allowed), type-checks, lint (incl. import layering), the Electron build, Vitest, then Playwright. Every step
# after the system packages runs even if an earlier one failed; each check counts as one test. The last line is
# always the plain summary `N passed, N failed` (toolchain notes G6), and the exit code is non-zero if
# anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
failures=()

# --- System packages first (Chromium, Mesa's Vulkan driver; scripts/system-deps.sh says why). When they are
# missing and cannot be installed here, stop now, before the slow steps, with the commands to run; the stop
# counts as one failed test so the summary line shows it. When all are present this costs one dpkg query. ---
echo "=== system packages: bash scripts/system-deps.sh test"
if bash scripts/system-deps.sh test; then
  passed=$((passed + 1))
  echo "=== system packages: ok"
else
  echo "=== system packages: FAILED, so nothing else ran"
  echo "0 passed, 1 failed"
  exit 1
fi

# Run one check (a command); count it as one passed or failed test.
check() {
  local name=$1
  shift
  echo "=== ${name}: $*"
  if "$@"; then
    passed=$((passed + 1))
    echo "=== ${name}: ok"
  else
    failed=$((failed + 1))
    failures+=("${name}")
    echo "=== ${name}: FAILED"
  fi
}

# Add one test runner's counts to the totals. A runner that exited non-zero with nothing countable (a crash
# before its report, a broken global setup) counts as one broken test.
tally() {
  local name=$1 rc=$2 p=$3 f=$4 b=$5 s=$6
  if [ "${rc}" -ne 0 ] && [ $((f + b)) -eq 0 ]; then b=1; fi
  echo "=== ${name}: ${p} passed, ${f} failed, ${b} broken, ${s} skipped"
  passed=$((passed + p))
  failed=$((failed + f + b))
  if [ $((f + b)) -gt 0 ]; then failures+=("${name}"); fi
}

check "typecheck main+preload" npx tsc -p tsconfig.node.json --noEmit
check "typecheck renderer" npx tsc -p tsconfig.web.json --noEmit
check "lint" npx eslint --max-warnings 0 .
check "electron-vite build" npx electron-vite build

# --- Vitest: unit, engine and lint tests (test/**/*.test.ts) ---
scratch=$(mktemp -d)
trap 'rm -rf "${scratch}"' EXIT
report="${scratch}/vitest.json"
echo "=== vitest"
NO_COLOR=1 npx vitest run --reporter=default --reporter=json --outputFile.json="${report}"
vitest_rc=$?
if [ -s "${report}" ]; then
  # Test counts, plus files that failed without a failing test (import or syntax errors) and skips.
  read -r v_passed v_failed v_broken v_skipped < <(node -e '
    const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"))
    const broken = r.testResults.filter(
      (f) => f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed")
    ).length
    console.log(r.numPassedTests, r.numFailedTests, broken, r.numPendingTests + r.numTodoTests)
  ' "${report}")
else
  v_passed=0 v_failed=0 v_broken=0 v_skipped=0
fi
tally vitest "${vitest_rc}" "${v_passed}" "${v_failed}" "${v_broken}" "${v_skipped}"

# --- Playwright end-to-end tests (test/e2e/*.spec.ts): the real app in browser mode, system Chromium ---
# Screenshots land in test-results/screenshots/. Counts come from the JSON reporter; a run that fails
# without countable failures (global setup, server start) counts as one broken test.
# TANDEM_SKIP_SYSTEM_TESTS=1 (a machine without Chromium or the Vulkan driver) leaves the suite out, saying so.
pw_report="${scratch}/playwright.json"
if [ "${TANDEM_SKIP_SYSTEM_TESTS:-}" = 1 ]; then
  echo "=== playwright: NOT RUN (TANDEM_SKIP_SYSTEM_TESTS=1)"
else
  echo "=== playwright"
  NO_COLOR=1 PLAYWRIGHT_JSON_OUTPUT_NAME="${pw_report}" npx playwright test --reporter=list,json
  pw_rc=$?
  if [ -s "${pw_report}" ]; then
    read -r p_passed p_failed p_broken p_skipped < <(node -e '
      const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"))
      const s = r.stats
      console.log(s.expected + s.flaky, s.unexpected, (r.errors ?? []).length > 0 ? 1 : 0, s.skipped)
    ' "${pw_report}")
  else
    p_passed=0 p_failed=0 p_broken=0 p_skipped=0
  fi
  tally playwright "${pw_rc}" "${p_passed}" "${p_failed}" "${p_broken}" "${p_skipped}"
fi

if [ "${#failures[@]}" -gt 0 ]; then
  echo "=== failed: ${failures[*]}"
fi
echo "${passed} passed, ${failed} failed"
[ "${failed}" -eq 0 ]
