package upgrade

import (
	"maps"
	"slices"
	"testing"

	"net/url"
	"reflect"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// An upgrade writes nothing, except where a fix changes what the operator keeps at the server.
// Each such change is a migration here: the writes it makes, recognised from what the server
// held before the upgrade, so an upgrade from a revision that already has the fix makes none,
// and any other write still fails the test.

// writeOnlyDeny is the Sid of the statement that refuses WriteOnly keys reading what they wrote
// (docs/bucketaccess.md, "WriteOnly keys"); older revisions' policies lack it.
const writeOnlyDeny = bucketpolicy.AccessStatementPrefix + bucketpolicy.WriteOnly + "Deny"

// policies are the buckets' policies at the server, by bucket, read as its administrator.
func (w *workload) policies() map[string]string {
	w.t.Helper()
	admin := localenv.NewS3Client(w.stk.S3.Direct, w.stk.S3.Region, w.stk.S3.AdminAccessKey, w.stk.S3.AdminSecretKey)
	out, err := admin.ListBuckets(w.ctx, &s3.ListBucketsInput{})
	if err != nil {
		w.t.Fatal(err)
	}
	policies := map[string]string{}
	for _, b := range out.Buckets {
		p, err := admin.GetBucketPolicy(w.ctx, &s3.GetBucketPolicyInput{Bucket: b.Name})
		if err == nil {
			policies[aws.ToString(b.Name)] = aws.ToString(p.Policy)
		}
	}
	return policies
}

// migrated takes out of writes the policy writes that gave a bucket with WriteOnly keys its
// Deny statement (absent before, present after), and says how many it took.
func migrated(writes []string, before, after map[string]string) (rest []string, n int) {
	for _, w := range writes {
		if bucket, ok := policyWrite(w); ok && !strings.Contains(before[bucket], writeOnlyDeny) && strings.Contains(after[bucket], writeOnlyDeny) {
			n++
			continue
		}
		rest = append(rest, w)
	}
	return rest, n
}

// withoutNewDeny is a Bucket's status after the upgrade without the Deny statement the
// migration added to its observed policy (status.policy), when the status before had none: the
// one status change the migration makes.
func withoutNewDeny(before, after map[string]any) map[string]any {
	if hasDeny(before["policy"]) || !hasDeny(after["policy"]) {
		return after
	}
	policy, _ := after["policy"].(map[string]any)
	stmts, _ := policy["Statement"].([]any)
	kept := slices.DeleteFunc(slices.Clone(stmts), func(st any) bool {
		m, _ := st.(map[string]any)
		return m["Sid"] == writeOnlyDeny
	})
	out, p := maps.Clone(after), maps.Clone(policy)
	p["Statement"] = kept
	out["policy"] = p
	return out
}

// hasDeny says whether an observed policy (status.policy) carries the WriteOnly Deny.
func hasDeny(policy any) bool {
	m, _ := policy.(map[string]any)
	stmts, _ := m["Statement"].([]any)
	return slices.ContainsFunc(stmts, func(st any) bool {
		s, _ := st.(map[string]any)
		return s["Sid"] == writeOnlyDeny
	})
}

// policyWrite reads the bucket of a "PUT /bucket?policy: 204" write.
func policyWrite(w string) (bucket string, ok bool) {
	req, _, _ := strings.Cut(w, ":")
	method, uri, _ := strings.Cut(req, " ")
	u, err := url.ParseRequestURI(uri)
	if err != nil || method != "PUT" || !u.Query().Has("policy") {
		return "", false
	}
	bucket = strings.Trim(u.Path, "/")
	return bucket, bucket != "" && !strings.Contains(bucket, "/")
}

// Only a policy write that brought the Deny statement is a migration; a policy rewritten that
// already had it, another bucket's write, or any other request stays a write the upgrade made.
func TestMigratedTakesOnlyPolicyWritesThatAddedTheDeny(t *testing.T) {
	deny := `{"Statement":[{"Sid":"` + writeOnlyDeny + `"}]}`
	before := map[string]string{"versioned": `{"Statement":[]}`, "backups": deny, "photos": ""}
	after := map[string]string{"versioned": deny, "backups": deny, "photos": `{"Statement":[]}`}
	writes := []string{
		"PUT /versioned?policy=: 204",    // the migration
		"PUT /backups?policy=: 204",      // had it already
		"PUT /photos?policy=: 204",       // no Deny after
		"PUT /versioned?tagging=: 200",   // not a policy
		"PUT /versioned/a?policy=: 200",  // an object
		"DELETE /versioned?policy=: 204", // not a PUT
	}
	rest, n := migrated(writes, before, after)
	if n != 1 || !slices.Equal(rest, writes[1:]) {
		t.Errorf("migrated %d, left %q; want 1, and every write but the first", n, rest)
	}
}

// Of a Bucket's status, only the Deny statement the migration added is forgiven: the policy
// without it must be the one before, and a status that had it already is compared whole.
func TestWithoutNewDenyForgivesOnlyTheAddedStatement(t *testing.T) {
	allow := map[string]any{"Sid": "OSMAccessWriteOnlyObjects"}
	deny := map[string]any{"Sid": writeOnlyDeny}
	status := func(stmts ...any) map[string]any {
		return map[string]any{"bucketName": "b", "policy": map[string]any{"Statement": stmts}}
	}
	if got := withoutNewDeny(status(allow), status(allow, deny)); !reflect.DeepEqual(got, status(allow)) {
		t.Errorf("the added Deny was not forgiven: %v", got)
	}
	if got := withoutNewDeny(status(allow, deny), status(deny)); !reflect.DeepEqual(got, status(deny)) {
		t.Errorf("a status that had the Deny before was changed: %v", got)
	}
	if got := withoutNewDeny(status(), status(allow, deny)); reflect.DeepEqual(got, status()) {
		t.Errorf("a statement besides the Deny was forgiven: %v", got)
	}
}
