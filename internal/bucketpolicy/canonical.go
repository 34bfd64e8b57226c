package bucketpolicy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// CanonicalPolicy returns a policy document in the form policies are compared in: keys sorted,
// no insignificant white space, and the places where IAM accepts a string or a list of strings
// (Action, Resource, Principal values, condition values …) always written as a sorted list. Two
// policies that mean the same have the same canonical form, so formatting never causes a write.
func CanonicalPolicy(doc []byte) (string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("parsing policy: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("parsing policy: want a JSON object, got %s", jsonKind(v))
	}
	if stmts, ok := obj["Statement"]; ok {
		list := asList(stmts)
		for i, s := range list {
			if m, ok := s.(map[string]any); ok {
				list[i] = canonicalStatement(m)
			}
		}
		obj["Statement"] = list
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("encoding policy: %w", err)
	}
	return string(out), nil
}

// PoliciesEqual reports whether two policy documents mean the same; an unparsable one equals
// only itself, byte for byte.
func PoliciesEqual(a, b string) bool {
	ca, errA := CanonicalPolicy([]byte(a))
	cb, errB := CanonicalPolicy([]byte(b))
	if errA != nil || errB != nil {
		return a == b
	}
	return ca == cb
}

// stringSetKeys are statement keys whose value is one string or a list of strings, in which
// order does not matter.
var stringSetKeys = []string{"Action", "NotAction", "Resource", "NotResource"}

func canonicalStatement(s map[string]any) map[string]any {
	for _, k := range stringSetKeys {
		if v, ok := s[k]; ok {
			s[k] = sortedStrings(v)
		}
	}
	for _, k := range []string{"Principal", "NotPrincipal"} {
		switch p := s[k].(type) {
		case map[string]any:
			for kind, v := range p {
				p[kind] = sortedStrings(v)
			}
		case string:
			// "*" and {"AWS": "*"} mean the same: everyone.
			if p == "*" {
				s[k] = map[string]any{"AWS": []any{"*"}}
			}
		}
	}
	if cond, ok := s["Condition"].(map[string]any); ok {
		for _, byKey := range cond {
			if m, ok := byKey.(map[string]any); ok {
				for key, v := range m {
					m[key] = sortedStrings(v)
				}
			}
		}
	}
	return s
}

// sortedStrings turns a string or a list of strings into a sorted list; other values are kept.
func sortedStrings(v any) any {
	list := asList(v)
	strs := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return v
		}
		strs = append(strs, s)
	}
	slices.Sort(strs)
	return toAnyList(slices.Compact(strs))
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}

// OwnerStatementID marks the statement the operator adds to a bucket policy so that the bucket's
// owner keeps control on servers that judge the owner by the policy alone.
const OwnerStatementID = "OSMOwnerAccess"

// WithOwnerStatement returns policy with a statement that allows owner (a policy Principal, such
// as {"AWS": "AKIA..."}) everything on the bucket, named resourcePrefix+bucket, and its objects.
// A Deny in policy still wins over it, as IAM evaluates. "" stays "": no policy denies no one.
func WithOwnerStatement(policy string, owner map[string]string, resourcePrefix, bucket string) (string, error) {
	if policy == "" || len(owner) == 0 {
		return policy, nil
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(policy), &doc); err != nil || doc == nil {
		return "", fmt.Errorf("parsing policy: want a JSON object")
	}
	principal := map[string]any{}
	for k, v := range owner {
		principal[k] = []any{v}
	}
	var stmts []any
	if v, ok := doc["Statement"]; ok && v != nil {
		stmts = asList(v)
	}
	stmts = append(stmts, map[string]any{
		"Sid":       OwnerStatementID,
		"Effect":    "Allow",
		"Principal": principal,
		"Action":    []any{"s3:*"},
		"Resource":  []any{resourcePrefix + bucket, resourcePrefix + bucket + "/*"},
	})
	doc["Statement"] = stmts
	out, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("encoding policy: %w", err)
	}
	return string(out), nil
}
