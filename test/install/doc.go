// Package install checks what a cluster administrator installs: dist/install.yaml from
// `make image build-installer` and the Helm chart in charts/object-storage-manager.
//
// Its tests build the release exactly as the Makefile does, into a temporary dist directory,
// apply every object to a real kube-apiserver (internal/localenv), and then run the manager
// binary taken out of the image as its Deployment would run it: as the installed ServiceAccount
// (a token from the TokenRequest API, so nothing but the installed RBAC), with the Deployment's
// arguments and environment, against versitygw and the contract server from the contract-server
// image. The local control plane has no kubelet, so no Pod runs; the tests do the kubelet's part
// for the one Pod they run themselves: they write the Deployment's Secret volumes to directories
// and move the listen addresses to free ports on 127.0.0.1.
package install
