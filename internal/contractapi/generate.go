// Package contractapi is the client and server code generated from openapi/contract.yaml, the
// contract API through which the operator buys object-storage contracts. The operator depends
// only on ClientWithResponsesInterface; the reference server implements StrictServerInterface.
package contractapi

//go:generate go tool oapi-codegen -config cfg.yaml ../../openapi/contract.yaml
