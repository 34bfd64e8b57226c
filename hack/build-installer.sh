#!/usr/bin/env bash
# Renders config/default into one file, DIST/install.yaml, with the manager image pinned by the
# digest `make image` wrote to DIST/images/manager.digest:
#
#   hack/build-installer.sh DIST IMAGE_REPOSITORY VERSION
#
# The overlay it renders is written to DIST/installer/, so the committed config/ never changes.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dist=$1 repository=$2 version=$3
kustomize=${KUSTOMIZE:-go tool -modfile=$root/hack/tools/kustomize/go.mod kustomize}

digest_file=$dist/images/manager.digest
if [ ! -s "$digest_file" ]; then
  echo "build-installer: $digest_file is missing; run make image first" >&2
  exit 1
fi
digest=$(cat "$digest_file")

overlay=$dist/installer
mkdir -p "$overlay"
# The name is the one config/manager/kustomization.yaml gives the image.
cat >"$overlay/kustomization.yaml" <<YAML
# Written by make build-installer: config/default with the manager image pinned by digest.
resources:
- $(realpath --relative-to="$overlay" "$root/config/default")
images:
- name: ghcr.io/object-storage-manager/manager
  newName: $repository
  digest: $digest
YAML

{
  echo "# object-storage-manager $version: kubectl apply --server-side -f install.yaml"
  echo "# Made by make build-installer from config/default; the manager image is $repository@$digest."
  # kustomize runs from the module root: -modfile needs the go.mod it replaces to be there.
  (cd "$root" && $kustomize build "$overlay")
} >"$dist/install.yaml.tmp"
mv "$dist/install.yaml.tmp" "$dist/install.yaml"
echo "installer        $dist/install.yaml ($(grep -c '^kind:' "$dist/install.yaml") objects, manager $repository@$digest)"
