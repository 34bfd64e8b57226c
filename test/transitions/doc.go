// Package transitions drives live Buckets and BucketAccesses through every change of every
// spec field, as Acto (SOSP '23) does for operators, and checks each change against a fresh
// object created with the spec it ends on: the server's state, Ready, admission and the writes
// a settled object costs. make test runs a subset; make test-transitions runs every field.
package transitions
