// Package install checks what a cluster administrator installs: dist/install.yaml from
// `make image build-installer` and the Helm chart in charts/object-storage-manager.
//
// Its tests build the release exactly as the Makefile does, into a temporary dist directory,
// and install it on a cluster with a real node: osm-dev's, started with --node=real --no-install
// (a kubelet, containerd and runc in a network namespace of their own; no CRDs, RBAC, webhooks or
// manager but the release's), with the manager's image imported into the node's containerd under
// the name and digest install.yaml pins. The manager runs as the Deployment's Pods, as the
// kubelet runs them: its ServiceAccount's projected token, its Secret volumes, its probes and
// security context. It serves its webhooks through its Service (the API server reaches it
// through osm-dev's egress proxy into the node), and talks to versitygw and the contract server
// from the contract-server image, which run on the host and which pods reach on the node's
// address (osm-dev's --node-port). The tests need root and the real node's packages (make deps).
package install
