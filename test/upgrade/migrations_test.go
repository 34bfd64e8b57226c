package upgrade

import (
	"slices"
	"testing"

	"net/url"
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
