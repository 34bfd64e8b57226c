#!/usr/bin/env bash
# Builds the servers the tests and the local environment run (kube-apiserver, etcd, versitygw;
# kube-controller-manager, kube-scheduler, the kubelet, kube-proxy, containerd and its shim for
# `make dev`'s real node, kwok for its fake one), and kubectl and ctr, from the Go
# module proxy into bin/. Nothing is downloaded from anywhere else, so this works where
# setup-envtest cannot. Each binary is rebuilt only when its wrapper module changes: the
# stamp next to it records a hash of the wrapper's go.mod and go.sum.
#
#   hack/tools/build.sh [kube-apiserver] [kube-controller-manager] [kube-scheduler] [kubectl] [etcd] [versitygw] [kwok] [kubelet] [kube-proxy] [containerd] [containerd-shim-runc-v2] [ctr] [dlv] [helm] [ack-s3-controller] [restic] [promtool] [cosi-sidecar]
#
# With no names it builds all but dlv, helm, ack-s3-controller, promtool and cosi-sidecar, which
# only `make dev ARGS=--debug`, the install test, `make bench-scale` (ACK's controller is the
# peer it compares against), the alert-rule test and the COSI tests need and ask for.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${BIN_DIR:-$root/bin}
mkdir -p "$bin"

# name | wrapper dir | package | version | minutes a first build takes on 2 cores
tools=(
  "kube-apiserver|kubernetes|k8s.io/kubernetes/cmd/kube-apiserver|v1.37.1|10"
  "kube-controller-manager|kubernetes|k8s.io/kubernetes/cmd/kube-controller-manager|v1.37.1|10"
  "kube-scheduler|kubernetes|k8s.io/kubernetes/cmd/kube-scheduler|v1.37.1|4"
  "kubectl|kubernetes|k8s.io/kubernetes/cmd/kubectl|v1.37.1|3"
  "etcd|etcd|go.etcd.io/etcd/server/v3|v3.6.16|3"
  "versitygw|versitygw|github.com/versity/versitygw/cmd/versitygw|v1.8.0|3"
  "kwok|kwok|sigs.k8s.io/kwok/cmd/kwok|v0.8.0|6"
  # make dev's real node: the kubelet and kube-proxy (most of their packages are kube-apiserver's,
  # pinned alike in hack/tools/node), containerd with its runc shim and ctr.
  "kubelet|node|k8s.io/kubernetes/cmd/kubelet|v1.37.1|4"
  "kube-proxy|node|k8s.io/kubernetes/cmd/kube-proxy|v1.37.1|2"
  "containerd|containerd|github.com/containerd/containerd/v2/cmd/containerd|v2.4.2|2"
  "containerd-shim-runc-v2|containerd|github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2|v2.4.2|1"
  "ctr|containerd|github.com/containerd/containerd/v2/cmd/ctr|v2.4.2|1"
  "dlv|delve|github.com/go-delve/delve/cmd/dlv|v1.27.2|2"
  "helm|helm|helm.sh/helm/v4/cmd/helm|v4.3.1|6"
  "ack-s3-controller|ack-s3|github.com/aws-controllers-k8s/s3-controller/cmd/controller|v1.1.1|3"
  "restic|restic|github.com/restic/restic/cmd/restic|v0.18.1|3"
  "promtool|promtool|github.com/prometheus/prometheus/cmd/promtool|v0.316.0|4"
  # COSI v1alpha1's provisioner sidecar: 40 minutes measured with a fault suite running beside it.
  "cosi-sidecar|cosi-sidecar|sigs.k8s.io/container-object-storage-interface-provisioner-sidecar/cmd/objectstorage-sidecar|v0.1.0|6"
)
# Built only when named: dlv for `make dev ARGS=--debug`, helm for the install test (test/install),
# ack-s3-controller for `make bench-scale`, promtool for the chart's alert-rule test (test/alerts),
# cosi-sidecar (COSI's provisioner sidecar) for `make dev ARGS=--cosi` and the COSI driver's
# end-to-end test.
on_request=" dlv helm ack-s3-controller promtool cosi-sidecar "

ldflags_for() {
  case "$1" in
    kube-apiserver|kube-controller-manager|kube-scheduler|kubectl|kubelet|kube-proxy)
      # Without these they report v0.0.0, and clients that check versions complain.
      local v=$2 pkg=k8s.io/component-base/version
      local minor=${v#v1.}; minor=${minor%%.*}
      echo "-s -w -X $pkg.gitVersion=$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
      ;;
    # kwok's version is set in its source (pkg/consts.Version).
    etcd|dlv|kwok|ack-s3-controller|restic|promtool|cosi-sidecar) echo "-s -w" ;;
    # Without it `helm version` says v4.0 and charts asking for a newer Helm are refused.
    helm) echo "-s -w -X helm.sh/helm/v4/internal/version.version=$2" ;;
    versitygw) echo "-s -w -X main.Version=$2" ;;
    # Without it containerd reports a +unknown version in the CRI Version call the kubelet logs.
    containerd|containerd-shim-runc-v2|ctr) echo "-s -w -X github.com/containerd/containerd/v2/version.Version=$2" ;;
  esac
}

want=("$@")
for t in "${tools[@]}"; do
  IFS='|' read -r name dir pkg version minutes <<<"$t"
  if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $name "* ]]; then continue; fi
  if [ ${#want[@]} -eq 0 ] && [[ "$on_request" == *" $name "* ]]; then continue; fi
  wrapper=$root/hack/tools/$dir
  stamp=$(cat "$wrapper/go.mod" "$wrapper/go.sum" | sha256sum | cut -c1-16)
  if [ -x "$bin/$name" ] && [ "$(cat "$bin/.$name.stamp" 2>/dev/null)" = "$stamp" ]; then
    continue
  fi
  unit=minutes; [ "$minutes" = 1 ] && unit=minute
  echo "building $name $version (first run only, about $minutes $unit)"
  start=$(date +%s)
  (cd "$wrapper" && CGO_ENABLED=0 go build -trimpath -ldflags "$(ldflags_for "$name" "$version")" -o "$bin/$name.tmp" "$pkg")
  mv "$bin/$name.tmp" "$bin/$name"
  echo "$stamp" >"$bin/.$name.stamp"
  echo "built $name $version in $(( $(date +%s) - start ))s"
done
