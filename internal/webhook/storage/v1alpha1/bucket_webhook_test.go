package v1alpha1

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/object-storage-manager/object-storage-manager/internal/egress"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/webhook/webhooktest"
)

const otherBucketDetail = `must refer to this bucket or its objects: "arn:aws:s3:::team-a-data" or "arn:aws:s3:::team-a-data/..."`

// validBucket is a Bucket that passes every rule, in namespace team-a, naming Contract team-a.
func validBucket() *storagev1alpha1.Bucket {
	return &storagev1alpha1.Bucket{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "team-a"},
		Spec: storagev1alpha1.BucketSpec{
			BucketName:   "team-a-data",
			ContractName: "team-a",
		},
	}
}

// manyGrantees returns n distinct canonical-id grantees.
func manyGrantees(n int) []storagev1alpha1.Grantee {
	out := make([]storagev1alpha1.Grantee, n)
	for i := range out {
		out[i] = grantee(id, fmt.Sprintf("user-%d", i))
	}
	return out
}

func policy(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

func grantee(t storagev1alpha1.GranteeType, v string) storagev1alpha1.Grantee {
	return storagev1alpha1.Grantee{Type: t, Value: v}
}

var (
	id    = storagev1alpha1.GranteeTypeID
	email = storagev1alpha1.GranteeTypeEmailAddress
	url   = storagev1alpha1.GranteeTypeURL
)

// readerWith holds Contract team-a in namespace team-a, plus the given Contracts.
func readerWith(extra ...client.Object) webhooktest.Reader {
	return webhooktest.Reader{Objects: append([]client.Object{
		&storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a"}},
	}, extra...)}
}

// bucketValidator reads r as both its cache and its API server.
// bucketValidator is the Bucket validator of a manager whose platform lets notifications push
// to receiver.example and hooks.example.com.
func bucketValidator(r client.Reader) *BucketValidator {
	return &BucketValidator{Cache: r, API: r, NotificationEndpoints: testNotificationEndpoints}
}

var testNotificationEndpoints = mustAllow("http://receiver.example:8080/events, http://hooks.example.com, https://hooks.example.com")

func mustAllow(list string) egress.Allowlist {
	a, err := egress.ParseList(list)
	if err != nil {
		panic(err)
	}
	return a
}

func TestBucketDefault(t *testing.T) {
	tests := []struct {
		name string
		in   storagev1alpha1.ReclaimPolicy
		want storagev1alpha1.ReclaimPolicy
	}{
		{name: "empty becomes Retain", in: "", want: storagev1alpha1.ReclaimPolicyRetain},
		{name: "Delete stays", in: storagev1alpha1.ReclaimPolicyDelete, want: storagev1alpha1.ReclaimPolicyDelete},
		{name: "Retain stays", in: storagev1alpha1.ReclaimPolicyRetain, want: storagev1alpha1.ReclaimPolicyRetain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := validBucket()
			b.Spec.BucketReclaimPolicy = tt.in
			if err := (&BucketDefaulter{}).Default(context.Background(), b); err != nil {
				t.Fatalf("Default() error = %v", err)
			}
			if b.Spec.BucketReclaimPolicy != tt.want {
				t.Errorf("bucketReclaimPolicy = %q, want %q", b.Spec.BucketReclaimPolicy, tt.want)
			}
		})
	}
}

func TestBucketValidateCreate(t *testing.T) {
	deleting := metav1.Now()
	reader := readerWith(
		validBucket(), // the same bucket, already managed by Bucket "data"
		&storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a-2"}},
		&storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "team-b"}},
		&storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "going", DeletionTimestamp: &deleting, Finalizers: []string{"x"}}},
	)
	const denyAllWarning = "a Deny for every principal denies the bucket's owner too, and the operator, which uses the owner's keys; " +
		"unless its condition spares the owner on this server, the bucket can be neither managed nor deleted"
	tests := []struct {
		name   string
		modify func(*storagev1alpha1.Bucket)
		want   []string
		// warnings kubectl prints for an admitted (or refused) Bucket.
		warnings []string
	}{
		{name: "minimal", modify: func(*storagev1alpha1.Bucket) {}},
		{name: "a Deny for every principal is admitted with a warning", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":[
				{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::team-a-data/*"},
				{"Effect":"Deny","Principal":{"AWS":["*"]},"Action":"s3:*","Resource":"arn:aws:s3:::team-a-data/*",
				 "Condition":{"NotIpAddress":{"aws:SourceIp":"192.0.2.0/24"}}}]}`)
		}, warnings: []string{"spec.policy.Statement[1]: " + denyAllWarning}},
		{name: "everything set", warnings: []string{"spec.policy.Statement[2]: " + denyAllWarning}, modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
			b.Spec.CannedACL = storagev1alpha1.CannedACLPrivate
			b.Spec.GrantRead = []storagev1alpha1.Grantee{
				grantee(url, "http://acs.amazonaws.com/groups/global/AllUsers"),
				grantee(url, "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"),
				grantee(id, "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"),
			}
			b.Spec.GrantWrite = []storagev1alpha1.Grantee{grantee(email, "ops@example.com")}
			b.Spec.GrantReadACP = []storagev1alpha1.Grantee{grantee(url, "http://acs.amazonaws.com/groups/s3/LogDelivery")}
			b.Spec.GrantWriteACP = []storagev1alpha1.Grantee{grantee(id, "owner")}
			// The same grantee in two lists, and the same value under two types, are not duplicates.
			b.Spec.FullControl = []storagev1alpha1.Grantee{grantee(id, "owner"), grantee(email, "owner@example.com"), grantee(id, "owner@example.com")}
			b.Spec.Policy = policy(`{"Version":"2012-10-17","Statement":[
				{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::team-a-data/public/*"},
				{"Effect":"Allow","Principal":"*","Action":"s3:ListBucket","Resource":["arn:aws:s3:::team-a-data","arn:aws:s3:::team-a-data/*"]},
				{"Effect":"Deny","Principal":"*","Action":"s3:*","NotResource":"arn:aws:s3:::team-a-data/keep/*"}]}`)
		}},
		{name: "policy with a single statement object", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::team-a-data/*"}}`)
		}},
		{name: "policy of exactly 20 KiB", modify: func(b *storagev1alpha1.Bucket) {
			p := `{"Statement":{"Resource":"arn:aws:s3:::team-a-data/*"},"Sid":""}`
			b.Spec.Policy = policy(strings.Replace(p, `"Sid":""`, `"Sid":"`+strings.Repeat("x", MaxPolicyBytes-len(p))+`"`, 1))
		}},

		// bucketName
		{name: "bucket name breaking two rules", modify: func(b *storagev1alpha1.Bucket) { b.Spec.BucketName = "Bad_Name" }, want: []string{
			`spec.bucketName: Invalid value: "Bad_Name": must contain only lowercase letters, digits, dots (.) and hyphens (-), not 'B', '_', 'N'; must start and end with a lowercase letter or digit`,
		}},
		{name: "bucket name that is an IP address", modify: func(b *storagev1alpha1.Bucket) { b.Spec.BucketName = "10.0.0.1" }, want: []string{
			`spec.bucketName: Invalid value: "10.0.0.1": must not be formatted as an IP address`,
		}},
		{name: "bucket name with a reserved suffix", modify: func(b *storagev1alpha1.Bucket) { b.Spec.BucketName = "team-a-s3alias" }, want: []string{
			`spec.bucketName: Invalid value: "team-a-s3alias": must not end with "-s3alias" (reserved by S3)`,
		}},

		// contractName
		{name: "no contract name", modify: func(b *storagev1alpha1.Bucket) { b.Spec.ContractName = "" }, want: []string{
			`spec.contractName: Required value: name the Contract whose account owns the bucket`,
		}},
		{name: "contract missing", modify: func(b *storagev1alpha1.Bucket) { b.Spec.ContractName = "missing" }, want: []string{
			`spec.contractName: Invalid value: "missing": no Contract of this name in namespace "team-a"`,
		}},
		{name: "contract only in another namespace", modify: func(b *storagev1alpha1.Bucket) { b.Spec.ContractName = "team-b" }, want: []string{
			`spec.contractName: Invalid value: "team-b": no Contract of this name in namespace "team-a"`,
		}},
		{name: "contract being deleted", modify: func(b *storagev1alpha1.Bucket) { b.Spec.ContractName = "going" }, want: []string{
			`spec.contractName: Invalid value: "going": the Contract is being deleted`,
		}},

		// grants
		{name: "unknown grantee type", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.GrantRead = []storagev1alpha1.Grantee{grantee("group", "everyone")}
		}, want: []string{
			`spec.grantRead[0].type: Unsupported value: "group": supported values: "id", "emailAddress", "url"`,
		}},
		{name: "unknown group URI", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.GrantWrite = []storagev1alpha1.Grantee{grantee(url, "http://acs.amazonaws.com/groups/global/Everyone")}
		}, want: []string{
			`spec.grantWrite[0].value: Unsupported value: "http://acs.amazonaws.com/groups/global/Everyone": supported values: "http://acs.amazonaws.com/groups/global/AllUsers", "http://acs.amazonaws.com/groups/global/AuthenticatedUsers", "http://acs.amazonaws.com/groups/s3/LogDelivery"`,
		}},
		{name: "not an e-mail address", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.GrantReadACP = []storagev1alpha1.Grantee{grantee(email, "ops@example.com"), grantee(email, "ops.example.com")}
		}, want: []string{
			`spec.grantReadAcp[1].value: Invalid value: "ops.example.com": must be an e-mail address such as user@example.com`,
		}},
		{name: "e-mail address with a display name", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.GrantReadACP = []storagev1alpha1.Grantee{grantee(email, "Ops <ops@example.com>")}
		}, want: []string{
			`spec.grantReadAcp[0].value: Invalid value: "Ops <ops@example.com>": must be an e-mail address such as user@example.com`,
		}},
		{name: "blank value", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.GrantWriteACP = []storagev1alpha1.Grantee{grantee(id, "  ")}
		}, want: []string{
			`spec.grantWriteAcp[0].value: Required value: name the grantee`,
		}},
		{name: "blank e-mail is reported once", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.GrantWriteACP = []storagev1alpha1.Grantee{grantee(email, "")}
		}, want: []string{
			`spec.grantWriteAcp[0].value: Required value: name the grantee`,
		}},
		{name: "duplicate grantee", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.FullControl = []storagev1alpha1.Grantee{grantee(id, "owner"), grantee(email, "a@example.com"), grantee(id, "owner")}
		}, want: []string{
			`spec.fullControl[2]: Duplicate value: {"value":"owner","type":"id"}`,
		}},

		// policy
		{name: "policy not an object", modify: func(b *storagev1alpha1.Bucket) { b.Spec.Policy = policy(`["Statement"]`) }, want: []string{
			`spec.policy: Invalid value: must be a JSON object`,
		}},
		{name: "policy not JSON", modify: func(b *storagev1alpha1.Bucket) { b.Spec.Policy = policy(`{Statement`) }, want: []string{
			`spec.policy: Invalid value: must be a JSON object`,
		}},
		{name: "policy without Statement", modify: func(b *storagev1alpha1.Bucket) { b.Spec.Policy = policy(`{"Version":"2012-10-17"}`) }, want: []string{
			`spec.policy.Statement: Required value: a policy needs at least one statement`,
		}},
		{name: "policy with an empty Statement list", modify: func(b *storagev1alpha1.Bucket) { b.Spec.Policy = policy(`{"Statement":[]}`) }, want: []string{
			`spec.policy.Statement: Required value: a policy needs at least one statement`,
		}},
		{name: "a Sid the operator keeps for its generated statements", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":[{"Sid":"OSMAccessreader1234abcdObjects","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::team-a-data/*"}]}`)
		}, want: []string{
			`spec.policy.Statement[0].Sid: Invalid value: "OSMAccessreader1234abcdObjects": Sids starting with "OSMAccess", and "OSMOwnerAccess", are kept for the statements the operator generates (for BucketAccesses and the bucket's owner); choose another Sid`,
		}},
		{name: "Statement a string", modify: func(b *storagev1alpha1.Bucket) { b.Spec.Policy = policy(`{"Statement":"allow all"}`) }, want: []string{
			`spec.policy.Statement: Invalid value: must be a JSON object or a list of them`,
		}},
		{name: "Statement item a string", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":[{"Resource":"arn:aws:s3:::team-a-data"},"allow all"]}`)
		}, want: []string{
			`spec.policy.Statement[1]: Invalid value: must be a JSON object`,
		}},
		{name: "Resource naming another bucket", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":[{"Resource":"arn:aws:s3:::team-a-data/*"},{"Resource":"arn:aws:s3:::other/*"}]}`)
		}, want: []string{
			`spec.policy.Statement[1].Resource: Invalid value: "arn:aws:s3:::other/*": ` + otherBucketDetail,
		}},
		{name: "Resource list naming another bucket", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":[{"Resource":["arn:aws:s3:::team-a-data","arn:aws:s3:::other"]}]}`)
		}, want: []string{
			`spec.policy.Statement[0].Resource[1]: Invalid value: "arn:aws:s3:::other": ` + otherBucketDetail,
		}},
		{name: "Resource on a bucket sharing the prefix", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":{"Resource":"arn:aws:s3:::team-a-data-evil/*"}}`)
		}, want: []string{
			`spec.policy.Statement.Resource: Invalid value: "arn:aws:s3:::team-a-data-evil/*": ` + otherBucketDetail,
		}},
		{name: "Resource with a wildcard bucket", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":{"Resource":"arn:aws:s3:::*"}}`)
		}, want: []string{
			`spec.policy.Statement.Resource: Invalid value: "arn:aws:s3:::*": ` + otherBucketDetail,
		}},
		{name: "NotResource naming another bucket", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":[{"NotResource":"arn:aws:s3:::other"}]}`)
		}, want: []string{
			`spec.policy.Statement[0].NotResource: Invalid value: "arn:aws:s3:::other": ` + otherBucketDetail,
		}},
		{name: "statement without Resource", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":[{"Effect":"Allow","Action":"s3:*"}]}`)
		}, want: []string{
			`spec.policy.Statement[0].Resource: Required value: every statement needs a Resource or NotResource`,
		}},
		{name: "Resource a number", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":[{"Resource":42}]}`)
		}, want: []string{
			`spec.policy.Statement[0].Resource: Invalid value: must be a string or a list of strings`,
		}},
		{name: "Resource list item a number", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":[{"Resource":[42]}]}`)
		}, want: []string{
			`spec.policy.Statement[0].Resource[0]: Invalid value: must be a string`,
		}},
		{name: "Resource an empty list", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":[{"Resource":[]}]}`)
		}, want: []string{
			`spec.policy.Statement[0].Resource: Required value: list at least one resource`,
		}},
		{name: "policy over 20 KiB", modify: func(b *storagev1alpha1.Bucket) {
			p := `{"Statement":{"Resource":"arn:aws:s3:::team-a-data/*"},"Sid":""}`
			b.Spec.Policy = policy(strings.Replace(p, `"Sid":""`, `"Sid":"`+strings.Repeat("x", MaxPolicyBytes-len(p)+1)+`"`, 1))
		}, want: []string{
			`spec.policy: Too long: may not be more than 20480 bytes`,
		}},

		{name: "a second Bucket for a bucket another Bucket of the namespace manages", modify: func(b *storagev1alpha1.Bucket) {
			b.Name = "copy"
		}, want: []string{
			`spec.bucketName: Invalid value: "team-a-data": Bucket data in this namespace already manages this bucket of Contract team-a, and exactly one may`,
		}},
		{name: "the same bucket name under another Contract is another endpoint's concern", modify: func(b *storagev1alpha1.Bucket) {
			b.Name, b.Spec.ContractName = "copy", "team-a-2"
		}},
		{name: "a contractName that is no object name is refused before any lookup", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.ContractName = "other/acc"
		}, want: []string{
			`spec.contractName: Invalid value: "other/acc": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') (the name of a Contract in this namespace)`,
		}},
		{name: "99 grants fit beside the owner's own", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.GrantRead = manyGrantees(50)
			b.Spec.FullControl = manyGrantees(49)
		}},
		{name: "100 grants do not", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.GrantRead = manyGrantees(50)
			b.Spec.FullControl = manyGrantees(50)
		}, want: []string{
			`spec: Invalid value: "100 grants": grantRead, grantWrite, grantReadAcp, grantWriteAcp and fullControl hold at most 99 grants together: S3 allows 100 per bucket, one of them the owner's own`,
		}},

		{name: "every bucket feature", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Versioning = storagev1alpha1.VersioningEnabled
			b.Spec.Lifecycle = &storagev1alpha1.BucketLifecycle{Rules: []storagev1alpha1.LifecycleRule{
				{ID: "backups", Prefix: "backups/", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](14)},
					NoncurrentVersionExpirationDays: ptr.To[int32](7)},
				{ID: "end", Tags: []storagev1alpha1.Tag{{Key: "project", Value: "x"}},
					Expiration: &storagev1alpha1.LifecycleExpiration{Date: "2027-01-01T00:00:00Z"}},
				{ID: "uploads", AbortIncompleteMultipartUploadDays: ptr.To[int32](1)},
			}}
			b.Spec.CORS = &storagev1alpha1.BucketCORS{Rules: []storagev1alpha1.CORSRule{
				{AllowedOrigins: []string{"https://app.example.com", "http://localhost:3000", "https://*.example.com", "*.example.org"},
					AllowedMethods: []storagev1alpha1.CORSMethod{"GET", "PUT"}, AllowedHeaders: []string{"*"}, ExposeHeaders: []string{"ETag"},
					MaxAgeSeconds: ptr.To[int32](600)},
				{AllowedOrigins: []string{"*"}, AllowedMethods: []storagev1alpha1.CORSMethod{"HEAD"}},
			}}
			b.Spec.ObjectLock = &storagev1alpha1.ObjectLock{DefaultRetention: &storagev1alpha1.DefaultRetention{
				Mode: storagev1alpha1.RetentionCompliance, Days: 30}}
		}},
		{name: "lifecycle rules S3 would refuse", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Lifecycle = &storagev1alpha1.BucketLifecycle{Rules: []storagev1alpha1.LifecycleRule{
				{ID: "a", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](0)}},
				{ID: "a", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](1), Date: "2027-01-01"}},
				{ID: "noon", Expiration: &storagev1alpha1.LifecycleExpiration{Date: "2027-01-01T12:00:00Z"}},
				{ID: "nothing", Prefix: "x/"},
				{ID: "tagged", Tags: []storagev1alpha1.Tag{{Key: "k", Value: "1"}, {Key: "k", Value: "2"}},
					AbortIncompleteMultipartUploadDays: ptr.To[int32](2), NoncurrentVersionExpirationDays: ptr.To[int32](-1)},
			}}
		}, want: []string{
			`spec.lifecycle.rules[0].expiration.days: Invalid value: 0: must be at least 1`,
			`spec.lifecycle.rules[1].id: Duplicate value: "a"`,
			`spec.lifecycle.rules[1].expiration: Invalid value: "days: 1, date: 2027-01-01": set exactly one of days and date`,
			`spec.lifecycle.rules[2].expiration.date: Invalid value: "2027-01-01T12:00:00Z": must be a date (2027-01-01) or midnight UTC (2027-01-01T00:00:00Z), as S3 requires`,
			`spec.lifecycle.rules[3]: Required value: a rule needs at least one action: expiration, noncurrentVersionExpirationDays or abortIncompleteMultipartUploadDays`,
			`spec.lifecycle.rules[4].tags[1].key: Duplicate value: "k"`,
			`spec.lifecycle.rules[4].noncurrentVersionExpirationDays: Invalid value: -1: must be at least 1`,
			`spec.lifecycle.rules[4].abortIncompleteMultipartUploadDays: Invalid value: 2: S3 does not allow it in a rule filtered by tags (uploads have no tags): put it in a rule of its own`,
		}},
		{name: "a lifecycle rule id the operator keeps for its own rules", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Lifecycle = &storagev1alpha1.BucketLifecycle{Rules: []storagev1alpha1.LifecycleRule{
				{ID: "osm-backup-web", Expiration: &storagev1alpha1.LifecycleExpiration{Days: ptr.To[int32](3)}},
			}}
		}, want: []string{
			`spec.lifecycle.rules[0].id: Invalid value: "osm-backup-web": ids that start with "osm-" are the operator's own (an Application's backup retention); choose another id`,
		}},
		{name: "CORS origins and methods S3 would not match", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.CORS = &storagev1alpha1.BucketCORS{Rules: []storagev1alpha1.CORSRule{
				{AllowedOrigins: []string{"app.example.com", "https://*.*.example.com", "https://app.example.com/path", "ftp://x"},
					AllowedMethods: []storagev1alpha1.CORSMethod{"GET", "PATCH", "GET"}, MaxAgeSeconds: ptr.To[int32](-1)},
				{},
			}}
		}, want: []string{
			`spec.cors.rules[0].allowedOrigins[0]: Invalid value: "app.example.com": must be "*" or an origin such as https://app.example.com, with at most one "*" (https://*.example.com)`,
			`spec.cors.rules[0].allowedOrigins[1]: Invalid value: "https://*.*.example.com": must be "*" or an origin such as https://app.example.com, with at most one "*" (https://*.example.com)`,
			`spec.cors.rules[0].allowedOrigins[2]: Invalid value: "https://app.example.com/path": must be "*" or an origin such as https://app.example.com, with at most one "*" (https://*.example.com)`,
			`spec.cors.rules[0].allowedOrigins[3]: Invalid value: "ftp://x": must be "*" or an origin such as https://app.example.com, with at most one "*" (https://*.example.com)`,
			`spec.cors.rules[0].allowedMethods[1]: Unsupported value: "PATCH": supported values: "GET", "PUT", "POST", "DELETE", "HEAD"`,
			`spec.cors.rules[0].allowedMethods[2]: Duplicate value: "GET"`,
			`spec.cors.rules[0].maxAgeSeconds: Invalid value: -1: must not be negative`,
			`spec.cors.rules[1].allowedOrigins: Required value: name at least one origin, or "*"`,
			`spec.cors.rules[1].allowedMethods: Required value: name at least one method`,
		}},
		{name: "object lock with suspended versioning", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Versioning = storagev1alpha1.VersioningSuspended
			b.Spec.ObjectLock = &storagev1alpha1.ObjectLock{DefaultRetention: &storagev1alpha1.DefaultRetention{Mode: "FOREVER", Days: 0}}
		}, want: []string{
			`spec.versioning: Invalid value: "Suspended": a bucket with objectLock is always versioned: use Enabled, or leave versioning out`,
			`spec.objectLock.defaultRetention.mode: Unsupported value: "FOREVER": supported values: "GOVERNANCE", "COMPLIANCE"`,
			`spec.objectLock.defaultRetention.days: Invalid value: 0: must be at least 1`,
		}},

		// Every problem at once, in field order.
		{name: "all problems reported together", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.BucketName = "xn--data"
			b.Spec.ContractName = "missing"
			b.Spec.GrantRead = []storagev1alpha1.Grantee{grantee(email, "nobody")}
			b.Spec.Policy = policy(`{"Statement":{"Resource":"arn:aws:s3:::team-a-data/*"}}`)
		}, want: []string{
			`spec.bucketName: Invalid value: "xn--data": must not start with "xn--" (reserved by S3)`,
			`spec.grantRead[0].value: Invalid value: "nobody": must be an e-mail address such as user@example.com`,
			`spec.policy.Statement.Resource: Invalid value: "arn:aws:s3:::team-a-data/*": must refer to this bucket or its objects: "arn:aws:s3:::xn--data" or "arn:aws:s3:::xn--data/..."`,
			`spec.contractName: Invalid value: "missing": no Contract of this name in namespace "team-a"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := validBucket()
			tt.modify(b)
			warnings, err := bucketValidator(reader).ValidateCreate(context.Background(), b)
			if diff := cmp.Diff(tt.warnings, []string(warnings)); diff != "" {
				t.Errorf("ValidateCreate() warnings mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate() causes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBucketInvalidMessage pins the whole message, which the API server prefixes with the
// webhook's name and kubectl turns into "The Bucket "data" is invalid: ...".
func TestBucketInvalidMessage(t *testing.T) {
	b := validBucket()
	b.Spec.BucketName = "Bad_Name"
	b.Spec.ContractName = "missing"
	_, err := bucketValidator(readerWith()).ValidateCreate(context.Background(), b)
	want := `Bucket.storage.osm.dev "data" is invalid: [` +
		`spec.bucketName: Invalid value: "Bad_Name": must contain only lowercase letters, digits, dots (.) and hyphens (-), not 'B', '_', 'N'; must start and end with a lowercase letter or digit, ` +
		`spec.contractName: Invalid value: "missing": no Contract of this name in namespace "team-a"]`
	if err == nil || err.Error() != want {
		t.Errorf("ValidateCreate() error =\n%v\nwant\n%s", err, want)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("error %T is not an API status", err)
	}
	if d := status.Status().Details; d.Kind != "Bucket" || d.Group != "storage.osm.dev" || d.Name != "data" {
		t.Errorf("details = %s %s %q, want Bucket storage.osm.dev \"data\"", d.Group, d.Kind, d.Name)
	}
}

func TestBucketValidateCreateLookupFails(t *testing.T) {
	reader := webhooktest.Reader{Err: errors.New("connection refused")}
	_, err := bucketValidator(reader).ValidateCreate(context.Background(), validBucket())
	if !apierrors.IsInternalError(err) {
		t.Fatalf("ValidateCreate() error = %v, want an internal error", err)
	}
	want := `Internal error occurred: looking up Contract "team-a": connection refused`
	if err.Error() != want {
		t.Errorf("ValidateCreate() error = %q, want %q", err.Error(), want)
	}
}

func TestBucketValidateUpdate(t *testing.T) {
	tests := []struct {
		name   string
		old    func(*storagev1alpha1.Bucket)
		modify func(*storagev1alpha1.Bucket)
		want   []string
	}{
		{name: "unchanged", modify: func(*storagev1alpha1.Bucket) {}},
		{name: "finalizer added", modify: func(b *storagev1alpha1.Bucket) { b.Finalizers = []string{"storage.osm.dev/bucket"} }},
		{name: "mutable fields changed", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
			b.Spec.CannedACL = storagev1alpha1.CannedACLPublicRead
			b.Spec.GrantRead = []storagev1alpha1.Grantee{grantee(id, "reader")}
			b.Spec.Policy = policy(`{"Statement":{"Resource":"arn:aws:s3:::team-a-data/*"}}`)
		}},
		{name: "bucketName changed", modify: func(b *storagev1alpha1.Bucket) { b.Spec.BucketName = "team-a-other" }, want: []string{
			`spec.bucketName: Invalid value: "team-a-other": cannot change (was "team-a-data")`,
		}},
		{name: "bucketName changed to an invalid name", modify: func(b *storagev1alpha1.Bucket) { b.Spec.BucketName = "Team-A" }, want: []string{
			`spec.bucketName: Invalid value: "Team-A": cannot change (was "team-a-data")`,
			`spec.bucketName: Invalid value: "Team-A": must contain only lowercase letters, digits, dots (.) and hyphens (-), not 'T', 'A'; must start and end with a lowercase letter or digit`,
		}},
		{name: "contractName changed", modify: func(b *storagev1alpha1.Bucket) { b.Spec.ContractName = "team-b" }, want: []string{
			`spec.contractName: Invalid value: "team-b": cannot change (was "team-a")`,
		}},
		{name: "invalid grant added", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.GrantWrite = []storagev1alpha1.Grantee{grantee(url, "http://example.com/all")}
		}, want: []string{
			`spec.grantWrite[0].value: Unsupported value: "http://example.com/all": supported values: "http://acs.amazonaws.com/groups/global/AllUsers", "http://acs.amazonaws.com/groups/global/AuthenticatedUsers", "http://acs.amazonaws.com/groups/s3/LogDelivery"`,
		}},
		{name: "policy changed to name another bucket", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Policy = policy(`{"Statement":{"Resource":"arn:aws:s3:::other"}}`)
		}, want: []string{
			`spec.policy.Statement.Resource: Invalid value: "arn:aws:s3:::other": ` + otherBucketDetail,
		}},
		{name: "objectLock added", modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.ObjectLock = &storagev1alpha1.ObjectLock{}
		}, want: []string{
			`spec.objectLock: Forbidden: cannot be set, changed or removed after creation: S3 sets object lock only when the bucket is created`,
		}},
		{name: "objectLock retention changed", old: func(b *storagev1alpha1.Bucket) {
			b.Spec.ObjectLock = &storagev1alpha1.ObjectLock{DefaultRetention: &storagev1alpha1.DefaultRetention{Mode: "GOVERNANCE", Days: 1}}
		}, modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.ObjectLock.DefaultRetention.Days = 2
		}, want: []string{
			`spec.objectLock: Forbidden: cannot be set, changed or removed after creation: S3 sets object lock only when the bucket is created`,
		}},
		{name: "objectLock removed", old: func(b *storagev1alpha1.Bucket) {
			b.Spec.ObjectLock = &storagev1alpha1.ObjectLock{}
		}, modify: func(b *storagev1alpha1.Bucket) { b.Spec.ObjectLock = nil }, want: []string{
			`spec.objectLock: Forbidden: cannot be set, changed or removed after creation: S3 sets object lock only when the bucket is created`,
		}},
		{name: "lifecycle and versioning changed beside an object lock", old: func(b *storagev1alpha1.Bucket) {
			b.Spec.ObjectLock = &storagev1alpha1.ObjectLock{}
		}, modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.Versioning = storagev1alpha1.VersioningEnabled
			b.Spec.Lifecycle = &storagev1alpha1.BucketLifecycle{Rules: []storagev1alpha1.LifecycleRule{
				{ID: "x", NoncurrentVersionExpirationDays: ptr.To[int32](3)}}}
		}},
		// Rules are not applied again to fields that did not change, so an object admitted under
		// older rules stays editable and deletable.
		{name: "unchanged fields are not checked again", old: func(b *storagev1alpha1.Bucket) {
			b.Spec.BucketName = "Legacy_Name"
			b.Spec.GrantRead = []storagev1alpha1.Grantee{grantee(email, "legacy")}
			b.Spec.Policy = policy(`{"Statement":{"Resource":"arn:aws:s3:::elsewhere"}}`)
		}, modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.BucketReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
			b.Finalizers = nil
		}},
		// The Contract is checked on create only: a Bucket outlives a Contract being deleted.
		{name: "contract gone", old: func(b *storagev1alpha1.Bucket) { b.Spec.ContractName = "gone" }, modify: func(b *storagev1alpha1.Bucket) {
			b.Spec.CannedACL = storagev1alpha1.CannedACLPrivate
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldB := validBucket()
			if tt.old != nil {
				tt.old(oldB)
			}
			newB := oldB.DeepCopy()
			tt.modify(newB)
			warnings, err := bucketValidator(readerWith()).ValidateUpdate(context.Background(), oldB, newB)
			if len(warnings) > 0 {
				t.Errorf("warnings = %q, want none", warnings)
			}
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("ValidateUpdate() causes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBucketValidateDelete(t *testing.T) {
	b := validBucket()
	b.Spec.BucketName = "Bad_Name"
	if _, err := bucketValidator(readerWith()).ValidateDelete(context.Background(), b); err != nil {
		t.Errorf("ValidateDelete() error = %v, want nil", err)
	}
}

// TestBucketPolicyResourcesFollowTheProvidersNames: a provider that names buckets its own way
// (the contract API's bucketPolicy.resourcePrefix, in the Contract's status) gets policies in
// its own terms, and AWS names are refused there.
func TestBucketPolicyResourcesFollowTheProvidersNames(t *testing.T) {
	iij := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "iij"},
		Status: storagev1alpha1.ContractStatus{BucketPolicy: &storagev1alpha1.BucketPolicyForm{ResourcePrefix: "grn:iijgio:dag:::bucket/"}}}
	reader := webhooktest.Reader{Objects: []client.Object{iij}}
	tests := []struct {
		name     string
		resource string
		want     []string
	}{
		{"the provider's own form", "grn:iijgio:dag:::bucket/team-a-data/*", nil},
		{"the AWS form is not this provider's", "arn:aws:s3:::team-a-data/*", []string{
			`spec.policy.Statement.Resource: Invalid value: "arn:aws:s3:::team-a-data/*": must refer to this bucket or its objects: "grn:iijgio:dag:::bucket/team-a-data" or "grn:iijgio:dag:::bucket/team-a-data/..."`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := validBucket()
			b.Spec.ContractName = "iij"
			b.Spec.Policy = policy(`{"Statement":{"Effect":"Allow","Principal":{"IIJGIO":"*"},"Action":"s3:GetObject","Resource":"` + tt.resource + `"}}`)
			_, err := bucketValidator(reader).ValidateCreate(context.Background(), b)
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate() causes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
