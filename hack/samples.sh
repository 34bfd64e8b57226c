#!/usr/bin/env bash
# Applies the samples in config/samples/templates, which name accounts by ids only known once
# their Contracts are Ready: the partner's canonical id (grants). Run after
# `kubectl apply -f config/samples/` with KUBECONFIG set.
set -euo pipefail
cd "$(dirname "$0")/../config/samples/templates"

kubectl apply -f contract-partner.yaml
kubectl -n demo wait --for=condition=Ready contract/demo contract/partner --timeout=60s

key_of() { kubectl -n demo get secret "$1-credentials" -o jsonpath='{.data.AWS_ACCESS_KEY_ID}' | base64 -d; }
owner_of() {
  # The canonical id the S3 server reports for an account: its access key on versitygw,
  # contract-<id> on Ceph RGW.
  local key; key=$(key_of "$1")
  case "$key" in
    OSMC*) echo "$key" ;;
    *) echo "contract-$(kubectl -n demo get contract "$1" -o jsonpath='{.status.contractID}')" ;;
  esac
}
PARTNER=$(owner_of partner)
sed -e "s/\${PARTNER}/$PARTNER/g" \
  bucket-grants.yaml bucket-policy.yaml | kubectl apply -f -
