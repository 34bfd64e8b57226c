package bucketpolicy

import (
	"slices"
	"strings"
)

// restrictingKeys are the condition keys that, given fixed values, make a statement for anyone
// no longer public in AWS's sense ("The meaning of public" in the S3 user guide): they tie it
// to known networks, accounts or principals.
var restrictingKeys = []string{
	"aws:sourceip", "aws:sourcearn", "aws:sourcevpc", "aws:sourcevpce", "aws:sourceaccount",
	"aws:sourceowner", "aws:principalaccount", "aws:principalarn", "aws:principalorgid", "aws:userid",
}

// IsPublic says whether a bucket policy is public as AWS's public access block judges it: it
// allows a wildcard principal (or allows all but some principals) with no condition that ties
// the statement to fixed networks, accounts or principals. A document that does not parse is
// not public: it is refused for what it is elsewhere.
func IsPublic(policy string) bool {
	return slices.ContainsFunc(statementsOf(policy), publicStatement)
}

func publicStatement(s map[string]any) bool {
	if s["Effect"] != "Allow" {
		return false
	}
	_, notPrincipal := s["NotPrincipal"]
	if !notPrincipal && !wildcardPrincipal(s["Principal"]) {
		return false
	}
	cond, _ := s["Condition"].(map[string]any)
	for _, byKey := range cond {
		keys, _ := byKey.(map[string]any)
		for key, values := range keys {
			if slices.Contains(restrictingKeys, strings.ToLower(key)) && !slices.Contains(stringList(values), "*") {
				return false
			}
		}
	}
	return true
}

// wildcardPrincipal says whether a Principal names everyone: "*", or "*" among its AWS values.
func wildcardPrincipal(p any) bool {
	if p == "*" {
		return true
	}
	m, _ := p.(map[string]any)
	return slices.Contains(stringList(m["AWS"]), "*")
}
