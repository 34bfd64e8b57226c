package bucketpolicy

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// GrantsIn reads back the whole-bucket access grants (no prefix) a policy Compose wrote holds,
// one per principal value, in the order of their statements: a policy that is the record of its
// grants (the COSI driver keeps no other) can be read, changed and composed again.
func GrantsIn(policy string) []AccessGrant {
	var grants []AccessGrant
	for _, s := range statementsOf(policy) {
		sid, _ := s["Sid"].(string)
		mode, ok := strings.CutPrefix(sid, AccessStatementPrefix)
		if !ok {
			continue
		}
		if mode, ok = strings.CutSuffix(mode, "Objects"); !ok || !slices.Contains([]string{ReadOnly, ReadWrite, WriteOnly}, mode) {
			continue
		}
		principal, _ := s["Principal"].(map[string]any)
		for _, kind := range slices.Sorted(maps.Keys(principal)) {
			for _, v := range stringList(principal[kind]) {
				grants = append(grants, AccessGrant{Name: v, Access: mode, Principal: map[string]any{kind: v}})
			}
		}
	}
	return grants
}

// WithoutPrincipal is grants less those naming any of principal's values.
func WithoutPrincipal(grants []AccessGrant, principal map[string]any) []AccessGrant {
	return slices.DeleteFunc(slices.Clone(grants), func(g AccessGrant) bool {
		for kind, v := range principal {
			for _, name := range stringList(v) {
				if slices.Contains(stringList(g.Principal[kind]), name) {
					return true
				}
			}
		}
		return false
	})
}

// statementsOf is the statements of a policy document, whether Statement is a list or one
// statement; none when it is not a policy.
func statementsOf(policy string) []map[string]any {
	var doc struct {
		Statement json.RawMessage
	}
	if policy == "" || json.Unmarshal([]byte(policy), &doc) != nil || len(doc.Statement) == 0 {
		return nil
	}
	var list []map[string]any
	if json.Unmarshal(doc.Statement, &list) == nil {
		return list
	}
	var one map[string]any
	if json.Unmarshal(doc.Statement, &one) == nil && one != nil {
		return []map[string]any{one}
	}
	return nil
}
