package bucketpolicy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Policy documents have a fixed shape: these top-level elements, and these in each statement
// (IAM's policy grammar). A document with anything else is not a bucket policy.
var (
	policyKeys    = []string{"Version", "Id", "Statement"}
	statementKeys = []string{"Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction", "Resource", "NotResource", "Condition"}
)

// CheckShape reports whether doc has the shape of a bucket policy: a JSON object of Version,
// Id and Statement, with at least one statement, each an object of the statement elements with
// an Effect of Allow or Deny. An S3 server's answer to GetBucketPolicy is read through it, so
// what reaches a Bucket's status is a policy and nothing else (an answer that some other service
// gave to a redirected or proxied request, say).
func CheckShape(doc []byte) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("want a JSON object, got %s", jsonKind(v))
	}
	for k := range obj {
		if !slices.Contains(policyKeys, k) {
			return fmt.Errorf("%q is not an element of a policy", k)
		}
	}
	stmts, ok := obj["Statement"]
	if !ok {
		return fmt.Errorf("no Statement")
	}
	list := asList(stmts)
	if len(list) == 0 {
		return fmt.Errorf("no statement in Statement")
	}
	for i, s := range list {
		m, ok := s.(map[string]any)
		if !ok {
			return fmt.Errorf("statement %d is %s, not an object", i, jsonKind(s))
		}
		for k := range m {
			if !slices.Contains(statementKeys, k) {
				return fmt.Errorf("statement %d: %q is not an element of a statement", i, k)
			}
		}
		if e := m["Effect"]; e != "Allow" && e != "Deny" {
			return fmt.Errorf("statement %d: Effect is neither Allow nor Deny", i)
		}
	}
	return nil
}
