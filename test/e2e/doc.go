// Package e2e drives the real kubectl binary against the local environment that cmd/osm-dev
// starts, as a user would type it, and checks the S3 server with an independent client.
//
// Each case is a folder under fixtures/ holding manifests and a case.yaml that lists the steps;
// README.md describes the format and how to add a case.
package e2e
