#!/usr/bin/env bash
# Installs the Debian packages the tests need and Go cannot build: Ceph (mon, memstore OSD,
# radosgw) for the AWS-faithful suite. Packages already there are left alone. As root, or with
# password-less sudo, it installs them with apt-get; otherwise it stops with the command to run.
#
#   hack/deps.sh PACKAGE...
set -euo pipefail

missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

command="apt-get install -y --no-install-recommends ${missing[*]}"
if ! command -v apt-get >/dev/null; then
  echo "deps: missing ${missing[*]} (Debian packages), and this machine has no apt-get." >&2
  echo "deps: install their equivalents, or run on Debian 12, where: sudo $command" >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo=(sudo)
else
  echo "deps: missing Debian packages: ${missing[*]}. Install them once with:" >&2
  echo >&2
  echo "  sudo apt-get update && sudo $command" >&2
  echo >&2
  exit 1
fi

echo "installing Debian packages ${missing[*]} (first run only, under a minute)"
start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "installed ${missing[*]} in $(( $(date +%s) - start ))s"
