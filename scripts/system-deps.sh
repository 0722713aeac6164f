#!/usr/bin/env bash
# The system packages Tandem needs besides Node and npm, checked and (where we may) installed in this one place.
# `npm test` (scripts/test.sh) runs it first with `test`; `.ci/run` runs it with `build test` before `npm ci`.
#
#   bash scripts/system-deps.sh [build] [test]      (no argument means `test`)
#
#   build  what `npm ci` needs: better-sqlite3 compiles from source when no prebuilt binary can be downloaded
#          (this machine kind reaches only the npm registry), so Python 3, make and a C++ compiler.
#          `npm ci` cannot install these itself: npm runs the project's own install scripts only after the
#          dependencies are built.
#   test   what `npm test` needs: Chromium for the Playwright suite (or TANDEM_CHROMIUM=/path/to/chromium),
#          Mesa's software Vulkan driver (lavapipe) for the WebGPU tests and the Devices end-to-end spec, and a
#          C++ compiler: the tests build the virtual NPU provider library (test/virtual-npu) with it.
#          On Debian 12 the driver must come from bookworm-backports: stable's Mesa 22 lacks what onnxruntime's
#          WebGPU provider needs (toolchain notes §4).
#
# When everything is there it only asks dpkg once (about 0.1 s) and prints nothing. When something is missing:
#   - with apt-get and dpkg-query (written for Debian 12; other apt systems may name packages differently), as root
#     or with passwordless sudo: installs it, printing each command;
#   - otherwise: prints the exact commands (or, off Debian, what is needed) and exits 1 at once, before any slow
#     step, so a missing package is never a pile of failed or silently skipped tests.
# TANDEM_SKIP_SYSTEM_TESTS=1 drops the `test` requirements; scripts/test.sh then leaves out the Playwright suite
# and the WebGPU tests skip themselves, and both say so. It is for machines that cannot have these packages.
set -euo pipefail

BACKPORTS_LIST=/etc/apt/sources.list.d/bpo.list
BACKPORTS_LINE='deb http://deb.debian.org/debian bookworm-backports main'
# Mesa 25 (backports) is the version the WebGPU tests were verified with; 22.3 (bookworm) does not work.
MESA_MIN_VERSION=25
# Vulkan driver manifests, where the loader looks for them (same list as main/engine/devices/host.ts).
ICD_DIRS=(/usr/share/vulkan/icd.d /usr/local/share/vulkan/icd.d /etc/vulkan/icd.d)

want_build=0
want_test=0
[ "$#" -gt 0 ] || set -- test
for group in "$@"; do
  case "${group}" in
    build) want_build=1 ;;
    test) want_test=1 ;;
    *)
      echo "system-deps: unknown group '${group}' (expected: build, test)" >&2
      exit 2
      ;;
  esac
done

if [ "${want_test}" -eq 1 ] && [ "${TANDEM_SKIP_SYSTEM_TESTS:-}" = 1 ]; then
  echo 'system-deps: TANDEM_SKIP_SYSTEM_TESTS=1: not checking Chromium and the Vulkan driver; the Playwright and WebGPU tests will be skipped' >&2
  want_test=0
fi

# --- What is missing. Debian: package states from one dpkg-query call. Elsewhere: the files the tests use. ---
debian=0
if command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then debian=1; fi

declare -A version=() # package -> installed version (absent when not installed)
if [ "${debian}" -eq 1 ]; then
  # Unknown packages make dpkg-query exit 1 after printing the known ones; that is the normal "missing" case.
  while IFS=$'\t' read -r pkg status ver; do
    if [ "${status}" = 'install ok installed' ]; then version["${pkg}"]=${ver}; fi
  done < <(dpkg-query -W -f='${Package}\t${Status}\t${Version}\n' python3 make g++ chromium libvulkan1 mesa-vulkan-drivers 2>/dev/null || true)
fi

installed() { [ -n "${version[$1]:-}" ]; }

mesa_new_enough() {
  installed mesa-vulkan-drivers && dpkg --compare-versions "${version[mesa-vulkan-drivers]}" ge "${MESA_MIN_VERSION}~"
}

has_lavapipe_icd() {
  local dir
  for dir in "${ICD_DIRS[@]}"; do
    compgen -G "${dir}/lvp_icd*.json" >/dev/null && return 0
  done
  return 1
}

has_vulkan_loader() {
  ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1 '
}

plain=()   # Debian packages to install from the default suites
need_mesa=0 # Mesa's Vulkan driver must be installed or upgraded (from bookworm-backports on Debian 12)
needs=()   # off Debian: what is missing, in words
test_needs=0 # off Debian: whether any of `needs` is for the tests (then TANDEM_SKIP_SYSTEM_TESTS is an option)
fatal=()   # missing and no package will fix it

if [ "${want_build}" -eq 1 ]; then
  if [ "${debian}" -eq 1 ]; then
    installed python3 || plain+=(python3)
    installed make || plain+=(make)
    installed g++ || plain+=(g++)
  else
    command -v python3 >/dev/null 2>&1 || needs+=('Python 3 (python3), for node-gyp')
    command -v make >/dev/null 2>&1 || needs+=('make, for node-gyp')
    command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || needs+=('a C++ compiler (g++ or clang++), for better-sqlite3')
  fi
fi

build_needs=${#needs[@]} # those so far are build tools; any added below are for the tests
if [ "${want_test}" -eq 1 ]; then
  if [ -n "${TANDEM_CHROMIUM:-}" ]; then
    # An explicit browser replaces the chromium package; it must exist, since playwright.config.ts will launch it.
    [ -x "${TANDEM_CHROMIUM}" ] || fatal+=("TANDEM_CHROMIUM=${TANDEM_CHROMIUM} is not an executable file")
  elif [ "${debian}" -eq 1 ]; then
    installed chromium || plain+=(chromium)
  else
    [ -x /usr/bin/chromium ] || needs+=('Chromium at /usr/bin/chromium, or TANDEM_CHROMIUM=/path/to/chromium')
  fi
  if [ "${debian}" -eq 1 ]; then
    installed libvulkan1 || plain+=(libvulkan1)
    mesa_new_enough || need_mesa=1
    if [ "${want_build}" -eq 0 ]; then installed g++ || plain+=(g++); fi
  else
    [ "${want_build}" -eq 1 ] || command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1 || needs+=("a C++ compiler (g++ or clang++), for the virtual NPU test provider")
    has_vulkan_loader || needs+=('the Vulkan loader (libvulkan.so.1)')
    has_lavapipe_icd || needs+=("Mesa ${MESA_MIN_VERSION} or newer with its lavapipe Vulkan driver (lvp_icd*.json in ${ICD_DIRS[*]})")
  fi
  [ "${#needs[@]}" -eq "${build_needs}" ] || test_needs=1
fi

if [ "${#fatal[@]}" -gt 0 ]; then
  printf 'system-deps: %s\n' "${fatal[@]}" >&2
  exit 1
fi
if [ "${#plain[@]}" -eq 0 ] && [ "${need_mesa}" -eq 0 ] && [ "${#needs[@]}" -eq 0 ]; then
  exit 0
fi

if [ "${debian}" -eq 0 ]; then
  echo 'system-deps: missing on this machine:' >&2
  printf '  - %s\n' "${needs[@]}" >&2
  echo 'Install them with your package manager, then run this again.' >&2
  if [ "${test_needs}" -eq 1 ]; then
    echo 'Where Chromium or the Vulkan driver cannot be had, TANDEM_SKIP_SYSTEM_TESTS=1 npm test runs everything' >&2
    echo 'but the Playwright suite and the WebGPU tests, and says so.' >&2
  fi
  exit 1
fi

# --- Debian: the commands that install what is missing ---
# shellcheck disable=SC1091 # the host's own file
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
cmds=()
backports=0
if [ "${need_mesa}" -eq 1 ] && [ "${codename}" = bookworm ]; then
  backports=1
  if ! grep -rqs --include='*.list' --include='*.sources' --include=sources.list 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d; then
    cmds+=("echo '${BACKPORTS_LINE}' > ${BACKPORTS_LIST}")
  fi
fi
apt_install='apt-get install -y'
cmds+=('apt-get update')
[ "${#plain[@]}" -eq 0 ] || cmds+=("${apt_install} ${plain[*]}")
if [ "${need_mesa}" -eq 1 ]; then
  if [ "${backports}" -eq 1 ]; then
    cmds+=("${apt_install} -t bookworm-backports mesa-vulkan-drivers")
  else
    cmds+=("${apt_install} mesa-vulkan-drivers")
  fi
fi

sudo=''
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo='sudo'
  else
    missing=("${plain[@]}")
    [ "${need_mesa}" -eq 0 ] || missing+=("mesa-vulkan-drivers (>= ${MESA_MIN_VERSION})")
    echo "system-deps: missing Debian packages: ${missing[*]}" >&2
    echo 'Run these as root, then run this command again:' >&2
    printf '  %s\n' "${cmds[@]}" >&2
    exit 1
  fi
fi

echo 'system-deps: installing missing Debian packages'
export DEBIAN_FRONTEND=noninteractive
for cmd in "${cmds[@]}"; do
  echo "+ ${sudo:+sudo }${cmd}"
  # Wait for the dpkg lock rather than fail when another apt run holds it (the machine may be shared).
  ${sudo} sh -c "${cmd/#apt-get install/apt-get -o DPkg::Lock::Timeout=300 install}"
done

# Off bookworm the default suite decides Mesa's version; check that it is one the WebGPU tests work with.
if [ "${need_mesa}" -eq 1 ]; then
  mesa=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
  if ! dpkg --compare-versions "${mesa:-0}" ge "${MESA_MIN_VERSION}~"; then
    echo "system-deps: mesa-vulkan-drivers ${mesa:-(none)} is older than ${MESA_MIN_VERSION}; the WebGPU tests need Mesa ${MESA_MIN_VERSION} or newer" >&2
    exit 1
  fi
fi
