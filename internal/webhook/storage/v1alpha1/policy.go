package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxPolicyBytes is the largest bucket policy S3 accepts, measured as compact JSON.
const MaxPolicyBytes = 20 * 1024

// omit stands for a value too large or too structured to repeat in a message.
var omit = field.OmitValueType{}

// validatePolicy checks a bucket policy: a JSON object of at most MaxPolicyBytes with a
// Statement, whose every Resource and NotResource names bucketName or objects in it. It checks
// shape and scope only; S3 itself judges actions, principals and conditions.
func validatePolicy(path *field.Path, raw []byte, bucketARN string) field.ErrorList {
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return field.ErrorList{field.Invalid(path, omit, "must be a JSON object")}
	}
	var doc map[string]any
	if err := json.Unmarshal(compact.Bytes(), &doc); err != nil || doc == nil {
		return field.ErrorList{field.Invalid(path, omit, "must be a JSON object")}
	}
	var errs field.ErrorList
	if compact.Len() > MaxPolicyBytes {
		errs = append(errs, field.TooLong(path, "", MaxPolicyBytes))
	}

	stmtPath := path.Child("Statement")
	switch stmts := doc["Statement"].(type) {
	case nil:
		errs = append(errs, field.Required(stmtPath, "a policy needs at least one statement"))
	case map[string]any:
		errs = append(errs, validateStatement(stmtPath, stmts, bucketARN)...)
	case []any:
		if len(stmts) == 0 {
			errs = append(errs, field.Required(stmtPath, "a policy needs at least one statement"))
		}
		for i, s := range stmts {
			stmt, ok := s.(map[string]any)
			if !ok {
				errs = append(errs, field.Invalid(stmtPath.Index(i), omit, "must be a JSON object"))
				continue
			}
			errs = append(errs, validateStatement(stmtPath.Index(i), stmt, bucketARN)...)
		}
	default:
		errs = append(errs, field.Invalid(stmtPath, omit, "must be a JSON object or a list of them"))
	}
	return errs
}

// validateStatement checks that the statement's resources stay inside bucketName, and that its
// Sid is not one the operator keeps for the statements it generates.
func validateStatement(path *field.Path, stmt map[string]any, bucketARN string) field.ErrorList {
	if sid, _ := stmt["Sid"].(string); strings.HasPrefix(sid, bucketpolicy.AccessStatementPrefix) || sid == bucketpolicy.OwnerStatementID {
		return field.ErrorList{field.Invalid(path.Child("Sid"), sid, fmt.Sprintf(
			"Sids starting with %q, and %q, are kept for the statements the operator generates (for BucketAccesses and the bucket's owner); choose another Sid",
			bucketpolicy.AccessStatementPrefix, bucketpolicy.OwnerStatementID))}
	}
	_, hasResource := stmt["Resource"]
	_, hasNotResource := stmt["NotResource"]
	if !hasResource && !hasNotResource {
		return field.ErrorList{field.Required(path.Child("Resource"), "every statement needs a Resource or NotResource")}
	}
	var errs field.ErrorList
	for _, key := range []string{"Resource", "NotResource"} {
		value, ok := stmt[key]
		if !ok {
			continue
		}
		p := path.Child(key)
		switch v := value.(type) {
		case string:
			errs = append(errs, validateResource(p, v, bucketARN)...)
		case []any:
			if len(v) == 0 {
				errs = append(errs, field.Required(p, "list at least one resource"))
			}
			for i, item := range v {
				s, ok := item.(string)
				if !ok {
					errs = append(errs, field.Invalid(p.Index(i), omit, "must be a string"))
					continue
				}
				errs = append(errs, validateResource(p.Index(i), s, bucketARN)...)
			}
		default:
			errs = append(errs, field.Invalid(p, omit, "must be a string or a list of strings"))
		}
	}
	return errs
}

// validateResource accepts the bucket's own ARN and ARNs of objects in it; wildcards are fine in
// the object part, where they cannot reach another bucket.
func validateResource(path *field.Path, arn, bucketARN string) field.ErrorList {
	if arn == bucketARN || strings.HasPrefix(arn, bucketARN+"/") {
		return nil
	}
	return field.ErrorList{field.Invalid(path, arn,
		fmt.Sprintf("must refer to this bucket or its objects: %q or %q", bucketARN, bucketARN+"/..."))}
}

// policyWarnings names the statements that deny every principal: they deny the bucket's owner
// too, and with it the operator, which acts with the owner's keys. Legal, and sometimes meant
// (with a condition that spares the owner), but a condition the server does not evaluate as
// AWS does leaves the bucket locked: worth a warning, not a refusal.
func policyWarnings(raw []byte) admission.Warnings {
	var doc map[string]any
	if json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	stmts, ok := doc["Statement"].([]any)
	if !ok {
		stmts = []any{doc["Statement"]}
	}
	var warnings admission.Warnings
	for i, s := range stmts {
		stmt, ok := s.(map[string]any)
		if !ok || stmt["Effect"] != "Deny" || !everyone(stmt["Principal"]) {
			continue
		}
		warnings = append(warnings, fmt.Sprintf("spec.policy.Statement[%d]: a Deny for every principal denies the bucket's owner too, "+
			"and the operator, which uses the owner's keys; unless its condition spares the owner on this server, the bucket "+
			"can be neither managed nor deleted", i))
	}
	return warnings
}

// everyone reports whether a policy Principal names every principal: "*" or {"AWS": "*"}.
func everyone(principal any) bool {
	switch p := principal.(type) {
	case string:
		return p == "*"
	case map[string]any:
		switch aws := p["AWS"].(type) {
		case string:
			return aws == "*"
		case []any:
			return slices.Contains(aws, any("*"))
		}
	}
	return false
}
