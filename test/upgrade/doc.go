// Package upgrade checks that a new manager, with new CRDs, leaves what an older one made as
// it is: it runs objects of every kind under a manager built from an older revision (FROM),
// stops it, installs this tree's CRDs and manager, and counts what the new one changes at the
// S3 server, at the contract API and in the cluster. `make test-upgrade FROM=<revision>`; with
// no FROM, the revisions in from.txt (make test).
package upgrade
