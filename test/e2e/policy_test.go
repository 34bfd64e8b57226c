package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// canonicalPolicy writes a bucket policy in a form two equivalent policies share: statements as
// a list in a fixed order, the string-or-list fields (Action, Resource, principal values,
// condition values) as sorted lists, "*" as {"AWS": ["*"]}, keys sorted.
//
// It is written here again, rather than taken from internal/objectstore, so that a bug in the
// operator's own comparison cannot hide itself in the test that checks it.
func canonicalPolicy(doc []byte) (string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("parsing policy: %w", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("parsing policy: want a JSON object")
	}
	var stmts []string
	for _, s := range listOf(obj["Statement"]) {
		m, ok := s.(map[string]any)
		if !ok {
			return "", fmt.Errorf("parsing policy: a statement is not an object")
		}
		for _, k := range []string{"Action", "NotAction", "Resource", "NotResource"} {
			if v, ok := m[k]; ok {
				m[k] = sortedList(v)
			}
		}
		for _, k := range []string{"Principal", "NotPrincipal"} {
			switch p := m[k].(type) {
			case string:
				if p == "*" {
					m[k] = map[string]any{"AWS": []any{"*"}}
				}
			case map[string]any:
				for kind, v := range p {
					p[kind] = sortedList(v)
				}
			}
		}
		if cond, ok := m["Condition"].(map[string]any); ok {
			for _, byKey := range cond {
				if kv, ok := byKey.(map[string]any); ok {
					for key, v := range kv {
						kv[key] = sortedList(v)
					}
				}
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			return "", err
		}
		stmts = append(stmts, string(b))
	}
	// Statement order carries no meaning in IAM.
	slices.Sort(stmts)
	list := make([]json.RawMessage, len(stmts))
	for i, s := range stmts {
		list[i] = json.RawMessage(s)
	}
	obj["Statement"] = list
	out, err := json.Marshal(obj)
	return string(out), err
}

func listOf(v any) []any {
	switch l := v.(type) {
	case nil:
		return nil
	case []any:
		return l
	default:
		return []any{v}
	}
}

// sortedList turns a string or a list of strings into a sorted list without duplicates; other
// values are left alone.
func sortedList(v any) any {
	var strs []string
	for _, e := range listOf(v) {
		s, ok := e.(string)
		if !ok {
			return v
		}
		strs = append(strs, s)
	}
	slices.Sort(strs)
	strs = slices.Compact(strs)
	out := make([]any, len(strs))
	for i, s := range strs {
		out[i] = s
	}
	return out
}

func TestCanonicalPolicy(t *testing.T) {
	const want = `{"Version":"2012-10-17","Statement":[` +
		`{"Sid":"Owner","Effect":"Allow","Principal":{"AWS":"KEY"},"Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]},` +
		`{"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:ListBucket"],"Resource":"arn:aws:s3:::b/*"}]}`
	tests := []struct {
		name  string
		doc   string
		equal bool
	}{
		{name: "identical", doc: want, equal: true},
		{name: "reordered, lists for strings, principal spelled out", equal: true, doc: `{
			"Statement": [
				{"Resource": ["arn:aws:s3:::b/*"], "Action": ["s3:ListBucket", "s3:GetObject"], "Principal": {"AWS": ["*"]}, "Effect": "Allow"},
				{"Resource": ["arn:aws:s3:::b/*", "arn:aws:s3:::b"], "Action": ["s3:*"], "Principal": {"AWS": ["KEY"]}, "Effect": "Allow", "Sid": "Owner"}
			],
			"Version": "2012-10-17"}`},
		{name: "an action less", equal: false, doc: `{"Version":"2012-10-17","Statement":[` +
			`{"Sid":"Owner","Effect":"Allow","Principal":{"AWS":"KEY"},"Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]},` +
			`{"Effect":"Allow","Principal":"*","Action":["s3:GetObject"],"Resource":"arn:aws:s3:::b/*"}]}`},
		{name: "deny", equal: false, doc: `{"Version":"2012-10-17","Statement":[` +
			`{"Sid":"Owner","Effect":"Allow","Principal":{"AWS":"KEY"},"Action":"s3:*","Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]},` +
			`{"Effect":"Deny","Principal":"*","Action":["s3:GetObject","s3:ListBucket"],"Resource":"arn:aws:s3:::b/*"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := canonicalPolicy([]byte(want))
			if err != nil {
				t.Fatal(err)
			}
			b, err := canonicalPolicy([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if (a == b) != tt.equal {
				t.Errorf("equal = %v, want %v\n%s\n%s", a == b, tt.equal, a, b)
			}
		})
	}
}
