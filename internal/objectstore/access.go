package objectstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// AccessStatementPrefix starts the Sid of every statement the operator generates for a
// BucketAccess. The user's own statements never carry it (admission refuses it), so drift
// comparison can tell the two apart.
const AccessStatementPrefix = "OSMAccess"

// Access modes, as BucketAccess names them.
const (
	ReadOnly  = "ReadOnly"
	ReadWrite = "ReadWrite"
	WriteOnly = "WriteOnly"
)

// accessActions are the actions each mode allows on the bucket itself and on its objects.
// Nothing here changes the bucket (ACL, policy, configuration): that stays the account's.
var accessActions = map[string]struct{ bucket, objects []string }{
	ReadOnly: {
		bucket:  []string{"s3:ListBucket"},
		objects: []string{"s3:GetObject"},
	},
	ReadWrite: {
		bucket:  []string{"s3:ListBucket", "s3:ListBucketMultipartUploads"},
		objects: []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"},
	},
	// A backup job's key: it adds objects and can give up an upload it started, but can never
	// read, list or delete what is there.
	WriteOnly: {
		objects: []string{"s3:PutObject", "s3:AbortMultipartUpload"},
	},
}

// AccessStatementID is the Sid of the statements for the BucketAccess named name: the prefix,
// the name's letters and digits (Sids allow no others), and a hash of the full name so that two
// names differing only in punctuation do not collide.
func AccessStatementID(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	sum := sha256.Sum256([]byte(name))
	return AccessStatementPrefix + b.String() + hex.EncodeToString(sum[:4])
}

// AccessGrant is one BucketAccess's share of a bucket policy.
type AccessGrant struct {
	// Name is the BucketAccess's name; it names the statements.
	Name string
	// Access is ReadOnly, ReadWrite or WriteOnly.
	Access string
	// Principal is the Principal element that names its principal on this server.
	Principal map[string]any
}

// AccessStatements returns the statements that give g its access to bucket and nothing else:
// one for the bucket (when the mode has bucket actions) and one for its objects.
func AccessStatements(g AccessGrant, resourcePrefix, bucket string) ([]any, error) {
	actions, ok := accessActions[g.Access]
	if !ok {
		return nil, fmt.Errorf("unknown access %q", g.Access)
	}
	if len(g.Principal) == 0 {
		return nil, errors.New("no principal to name")
	}
	sid := AccessStatementID(g.Name)
	var out []any
	if len(actions.bucket) > 0 {
		out = append(out, statement(sid+"Bucket", g.Principal, actions.bucket, resourcePrefix+bucket))
	}
	out = append(out, statement(sid+"Objects", g.Principal, actions.objects, resourcePrefix+bucket+"/*"))
	return out, nil
}

func statement(sid string, principal map[string]any, actions []string, resource string) map[string]any {
	return map[string]any{
		"Sid":       sid,
		"Effect":    "Allow",
		"Principal": principal,
		"Action":    toAnyList(actions),
		"Resource":  resource,
	}
}

// WithStatements returns policy with stmts appended to its Statement list; an empty policy
// becomes a new one that holds only them. No stmts leaves policy as it is.
func WithStatements(policy string, stmts []any) (string, error) {
	if len(stmts) == 0 {
		return policy, nil
	}
	doc := map[string]any{"Version": "2012-10-17"}
	if policy != "" {
		if err := json.Unmarshal([]byte(policy), &doc); err != nil || doc == nil {
			return "", fmt.Errorf("parsing policy: want a JSON object")
		}
	}
	var all []any
	if v, ok := doc["Statement"]; ok && v != nil {
		all = asList(v)
	}
	doc["Statement"] = append(all, stmts...)
	out, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("encoding policy: %w", err)
	}
	return string(out), nil
}

// GeneratedStatements returns, in canonical form, the statements of policy whose Sid starts
// with AccessStatementPrefix; "" when there are none or policy is not a JSON object.
func GeneratedStatements(policy string) string {
	var doc map[string]any
	if policy == "" || json.Unmarshal([]byte(policy), &doc) != nil {
		return ""
	}
	var kept []any
	for _, s := range asList(doc["Statement"]) {
		m, ok := s.(map[string]any)
		if !ok {
			continue
		}
		if sid, _ := m["Sid"].(string); strings.HasPrefix(sid, AccessStatementPrefix) {
			kept = append(kept, m)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	out, err := CanonicalPolicy([]byte(`{"Statement":` + mustJSON(kept) + `}`))
	if err != nil {
		return ""
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

// AccessCheck is what a key was found able to do, with that key itself.
type AccessCheck struct {
	// List: listing the bucket's objects was allowed.
	List bool
	// Read: reading an object was allowed (a missing object answered NoSuchKey, not
	// AccessDenied).
	Read bool
	// Write: writing an object was allowed (the deliberately broken upload was refused for
	// its checksum, not for access).
	Write bool
}

// CheckAccess finds out, with the store's own key and without changing anything, whether it
// may list bucket, read from it and write to it. The write check sends an upload whose
// Content-MD5 cannot match its body: a server checks access before the body, so an allowed
// write is refused as BadDigest and nothing is stored. An error is returned only when an answer
// says neither yes nor no.
func CheckAccess(ctx context.Context, st Store, bucket string) (AccessCheck, error) {
	s, ok := st.(*store)
	if !ok {
		return AccessCheck{}, errors.New("access checks need an S3 store")
	}
	var c AccessCheck
	var err error
	_, lerr := s.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), MaxKeys: aws.Int32(1)})
	if c.List, err = allowed("listing", lerr, ""); err != nil {
		return c, err
	}
	_, gerr := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(probeKey)})
	if c.Read, err = allowed("reading", gerr, "NoSuchKey"); err != nil {
		return c, err
	}
	wrongMD5 := base64.StdEncoding.EncodeToString(make([]byte, 16))
	_, perr := s.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(probeKey),
		Body: strings.NewReader("osm access check"), ContentMD5: aws.String(wrongMD5),
	})
	if perr == nil {
		// The server stored it after all: it ignores Content-MD5. Say so rather than leave a
		// stray object unmentioned.
		return c, fmt.Errorf("the S3 server accepted an upload with a wrong Content-MD5 (object %q was written)", probeKey)
	}
	if c.Write, err = allowed("writing", perr, "BadDigest", "InvalidDigest"); err != nil {
		return c, err
	}
	return c, nil
}

// probeKey is the object the checks name; it is never meant to exist.
const probeKey = ".osm-access-check"

// allowed reads a probe's answer: nil or one of the codes meaning "allowed, but ..." is yes,
// AccessDenied is no, anything else is an error.
func allowed(what string, err error, allowedCodes ...string) (bool, error) {
	if err == nil {
		return true, nil
	}
	code := ErrorCode(err)
	if code == "AccessDenied" || code == "Forbidden" {
		return false, nil
	}
	for _, c := range allowedCodes {
		if code == c {
			return true, nil
		}
	}
	return false, fmt.Errorf("checking %s: %s", what, Describe(err))
}

func toAnyList(strs []string) []any {
	out := make([]any, len(strs))
	for i, s := range strs {
		out[i] = s
	}
	return out
}
