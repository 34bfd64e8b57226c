package cosidriver

import "encoding/json"

// statementsOf is the statements of a policy document; none when it is not one.
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

// stringList is a policy element IAM accepts as a string or a list of strings, as a list.
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, one := range v {
			if s, ok := one.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
