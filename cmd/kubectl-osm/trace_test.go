package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

const ns = "demo"

func ready(status metav1.ConditionStatus, reason, message string) []metav1.Condition {
	return []metav1.Condition{{Type: storagev1alpha1.ReadyCondition, Status: status, Reason: reason, Message: message}}
}

func contract(name string, conds []metav1.Condition) *storagev1alpha1.Contract {
	c := &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: storagev1alpha1.ContractSpec{Plan: "standard"}}
	c.Status.Conditions = conds
	return c
}

func bucket(name, contract string, conds []metav1.Condition) *storagev1alpha1.Bucket {
	b := &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: storagev1alpha1.BucketSpec{BucketName: ns + "-" + name, ContractName: contract}}
	b.Status.Conditions = conds
	return b
}

func access(name, bucket string, conds []metav1.Condition) *storagev1alpha1.BucketAccess {
	a := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: storagev1alpha1.BucketAccessSpec{Bucket: storagev1alpha1.BucketName(bucket), Access: storagev1alpha1.AccessReadOnly}}
	a.Status.Conditions = conds
	return a
}

// multiAccess is a BucketAccess over several Buckets (spec.buckets), ReadWrite in each.
func multiAccess(name string, conds []metav1.Condition, buckets ...string) *storagev1alpha1.BucketAccess {
	a := &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, b := range buckets {
		a.Spec.Buckets = append(a.Spec.Buckets, storagev1alpha1.AccessBucket{Name: storagev1alpha1.BucketName(b), Access: storagev1alpha1.AccessReadWrite})
	}
	a.Status.Conditions = conds
	return a
}

// ownedBy makes an Application the controller of a BucketAccess, as the Application
// controller does for each link's.
func ownedBy(a *storagev1alpha1.BucketAccess, app string) *storagev1alpha1.BucketAccess {
	a.OwnerReferences = []metav1.OwnerReference{{APIVersion: paasv1alpha1.GroupVersion.String(), Kind: "Application", Name: app,
		UID: "uid-" + types.UID(app), Controller: ptr.To(true)}}
	return a
}

func application(name string, conds []metav1.Condition, buckets ...string) *paasv1alpha1.Application {
	p := &paasv1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: paasv1alpha1.ApplicationSpec{Image: "nginx"}}
	for _, b := range buckets {
		p.Spec.Buckets = append(p.Spec.Buckets, paasv1alpha1.BucketLink{Name: b})
	}
	p.Status.Conditions = conds
	return p
}

// secret is a credentials Secret holding keys.
func secret(name string, keys ...string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for _, k := range keys {
		s.Data[k] = []byte("value-of-" + k)
	}
	return s
}

func fakeClient(objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithScheme(scheme()).WithObjects(objs...).Build()
}

var (
	available    = ready(metav1.ConditionTrue, "Available", "Fine")
	contractDown = ready(metav1.ConditionFalse, "ContractAPIRejected", `The contract API refused creating the contract: plan "gold" is not offered (HTTP 422)`)
)

func TestTrace(t *testing.T) {
	for _, tc := range []struct {
		name string
		objs []client.Object
		ref  ref
		want string
	}{{
		name: "a Bucket whose Contract is not Ready: the Contract is marked, not the Bucket",
		objs: []client.Object{
			contract("gold", contractDown),
			bucket("reports", "gold", ready(metav1.ConditionFalse, "ContractNotReady", "Contract gold is not Ready (ContractAPIRejected)")),
			access("reports-reader", "reports", ready(metav1.ConditionFalse, "BucketNotReady", "Waiting for Bucket reports")),
		},
		ref: ref{kindBucket, "reports"},
		want: `
  NAME                                      READY   REASON                MESSAGE
  Bucket/reports                            False   ContractNotReady      Contract gold is not Ready (ContractAPIRejected)
> ├─ Contract/gold                          False   ContractAPIRejected   The contract API refused creating the contract: plan "gold" is not offered (HTTP 422)
  │  └─ Secret/gold-credentials             -       NotFound              Secret gold-credentials does not exist in namespace demo; Contract gold writes it once it has a key
  └─ BucketAccess/reports-reader            False   BucketNotReady        Waiting for Bucket reports
     └─ Secret/reports-reader-credentials   -       NotFound              Secret reports-reader-credentials does not exist in namespace demo; BucketAccess reports-reader writes it once it has a key

> Contract/gold is the first not Ready (ContractAPIRejected). More: kubectl -n demo describe contract gold; what to do: docs/troubleshooting.md#contractapirejected
`,
	}, {
		name: "a Bucket naming a Contract that does not exist",
		objs: []client.Object{bucket("orphan", "nope", ready(metav1.ConditionFalse, "ContractNotFound", "Contract nope does not exist in namespace demo"))},
		ref:  ref{kindBucket, "orphan"},
		want: `
  NAME               READY   REASON             MESSAGE
  Bucket/orphan      False   ContractNotFound   Contract nope does not exist in namespace demo
> └─ Contract/nope   -       NotFound           Contract nope does not exist in namespace demo

> Contract/nope is the first not Ready (NotFound). More: kubectl -n demo get contracts; what to do: docs/troubleshooting.md#notfound
`,
	}, {
		name: "a Ready Contract whose Secret lost a key: the Secret is marked before the Bucket that needs it",
		objs: []client.Object{
			contract("demo", available),
			secret("demo-credentials", storagev1alpha1.SecretKeyAccessKeyID, storagev1alpha1.SecretKeyEndpointURL, storagev1alpha1.SecretKeyRegion),
			bucket("data", "demo", ready(metav1.ConditionFalse, "ContractNotReady", "Contract demo has no credentials in Secret demo-credentials yet")),
		},
		ref: ref{kindBucket, "data"},
		want: `
  NAME                            READY   REASON             MESSAGE
  Bucket/data                     False   ContractNotReady   Contract demo has no credentials in Secret demo-credentials yet
  └─ Contract/demo                True    Available          Fine
>    └─ Secret/demo-credentials   -       KeysMissing        Lacks AWS_SECRET_ACCESS_KEY; Contract demo writes them

> Secret/demo-credentials is the first not Ready (KeysMissing). More: kubectl -n demo describe secret demo-credentials; what to do: docs/troubleshooting.md#keysmissing
`,
	}, {
		name: "a Ready Contract over an account the user has: its Secret needs only the keys",
		objs: []client.Object{
			func() client.Object {
				c := contract("own", available)
				c.Spec = storagev1alpha1.ContractSpec{Credentials: &storagev1alpha1.ContractCredentials{SecretName: "own-keys",
					Endpoint: "https://s3.eu-west-1.amazonaws.com", Region: "eu-west-1"}}
				c.Status.SecretName = "own-keys"
				return c
			}(),
			secret("own-keys", storagev1alpha1.SecretKeyAccessKeyID, storagev1alpha1.SecretKeySecretAccessKey),
		},
		ref: ref{kindContract, "own"},
		want: `
  NAME                 READY   REASON      MESSAGE
  Contract/own         True    Available   Fine
  └─ Secret/own-keys   -       Exists      Holds AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY

Everything above is Ready.
`,
	}, {
		name: "everything Ready: an Application's own BucketAccesses go under it, others under the Bucket",
		objs: []client.Object{
			contract("demo", available),
			secret("demo-credentials", contractKeys...),
			bucket("photos", "demo", available),
			access("auditor", "photos", available),
			secret("auditor-credentials", accessKeys...),
			ownedBy(access("photos-photos", "photos", available), "photos"),
			secret("photos-photos-credentials", accessKeys...),
			application("photos", available, "photos"),
			application("unrelated", available, "other"),
		},
		ref: ref{kindBucket, "photos"},
		want: `
  NAME                                        READY   REASON      MESSAGE
  Bucket/photos                               True    Available   Fine
  ├─ Contract/demo                            True    Available   Fine
  │  └─ Secret/demo-credentials               -       Exists      Holds AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION
  ├─ BucketAccess/auditor                     True    Available   Fine
  │  └─ Secret/auditor-credentials            -       Exists      Holds AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION, BUCKET_NAME
  └─ Application/photos                       True    Available   Fine
     └─ BucketAccess/photos-photos            True    Available   Fine
        └─ Secret/photos-photos-credentials   -       Exists      Holds AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION, BUCKET_NAME

Everything above is Ready.
`,
	}, {
		name: "an Application: its Buckets and its BucketAccesses are what it needs; a missing Bucket is marked",
		objs: []client.Object{
			contract("demo", available),
			secret("demo-credentials", contractKeys...),
			bucket("photos", "demo", available),
			ownedBy(access("web-photos", "photos", ready(metav1.ConditionFalse, "PolicyPending", "The key cannot read yet")), "web"),
			secret("web-photos-credentials", accessKeys...),
			application("web", ready(metav1.ConditionFalse, "BucketsNotReady", "2 linked Buckets of 2 not Ready"), "photos", "videos"),
		},
		ref: ref{kindApplication, "web"},
		want: `
  NAME                                  READY   REASON            MESSAGE
  Application/web                       False   BucketsNotReady   2 linked Buckets of 2 not Ready
  ├─ Bucket/photos                      True    Available         Fine
  │  └─ Contract/demo                   True    Available         Fine
  │     └─ Secret/demo-credentials      -       Exists            Holds AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION
> ├─ Bucket/videos                      -       NotFound          Bucket videos does not exist in namespace demo
  └─ BucketAccess/web-photos            False   PolicyPending     The key cannot read yet
     └─ Secret/web-photos-credentials   -       Exists            Holds AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION, BUCKET_NAME

> Bucket/videos is the first not Ready (NotFound). More: kubectl -n demo get buckets; what to do: docs/troubleshooting.md#notfound
`,
	}, {
		name: "a BucketAccess: its Bucket and Contract first, then its Secret and the Application it serves",
		objs: []client.Object{
			contract("demo", available),
			secret("demo-credentials", contractKeys...),
			bucket("photos", "demo", available),
			ownedBy(access("web-photos", "photos", nil), "web"),
			application("web", ready(metav1.ConditionFalse, "BucketAccessNotReady", "Waiting for web-photos"), "photos"),
		},
		ref: ref{kindBucketAccess, "web-photos"},
		want: `
  NAME                               READY   REASON                 MESSAGE
> BucketAccess/web-photos            -       NoStatus               No Ready condition yet: the manager has not reported on it (is it running?)
  ├─ Bucket/photos                   True    Available              Fine
  │  └─ Contract/demo                True    Available              Fine
  │     └─ Secret/demo-credentials   -       Exists                 Holds AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION
  ├─ Secret/web-photos-credentials   -       NotFound               Secret web-photos-credentials does not exist in namespace demo; BucketAccess web-photos writes it once it has a key
  └─ Application/web                 False   BucketAccessNotReady   Waiting for web-photos

> BucketAccess/web-photos is the first not Ready (NoStatus). More: kubectl -n demo describe bucketaccess web-photos; what to do: docs/troubleshooting.md#nostatus
`,
	}, {
		name: "a BucketAccess over several Buckets: every one of them, and each one's variable in its Secret",
		objs: []client.Object{
			contract("demo", available),
			secret("demo-credentials", contractKeys...),
			bucket("photos", "demo", available),
			bucket("thumbs", "demo", ready(metav1.ConditionFalse, "S3Rejected", "The S3 server refused the bucket's policy")),
			multiAccess("resizer", available, "photos", "thumbs"),
			secret("resizer-credentials", contractKeys[0], contractKeys[1], contractKeys[2], contractKeys[3], "BUCKET_NAME_PHOTOS"),
		},
		ref: ref{kindBucketAccess, "resizer"},
		want: `
  NAME                               READY   REASON        MESSAGE
  BucketAccess/resizer               True    Available     Fine
  ├─ Bucket/photos                   True    Available     Fine
  │  └─ Contract/demo                True    Available     Fine
  │     └─ Secret/demo-credentials   -       Exists        Holds AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION
> ├─ Bucket/thumbs                   False   S3Rejected    The S3 server refused the bucket's policy
  │  └─ Contract/demo                True    Available     Fine
  │     └─ Secret/demo-credentials   -       Exists        Holds AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION
  └─ Secret/resizer-credentials      -       KeysMissing   Lacks BUCKET_NAME_THUMBS; BucketAccess resizer writes them

> Bucket/thumbs is the first not Ready (S3Rejected). More: kubectl -n demo describe bucket thumbs; what to do: docs/troubleshooting.md#s3rejected
`,
	}, {
		name: "a Contract: its Secret, then the Buckets that name it; a blocked deletion shows why",
		objs: []client.Object{
			contract("demo", available),
			secret("demo-credentials", contractKeys...),
			bucket("private", "demo", []metav1.Condition{
				{Type: storagev1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: "Deleting", Message: "Deletion is blocked (see DeletionBlocked)"},
				{Type: storagev1alpha1.DeletionBlockedCondition, Status: metav1.ConditionTrue, Reason: "BucketNotEmpty", Message: "Bucket demo-private still holds 1 object"},
			}),
			bucket("elsewhere", "other", available),
		},
		ref: ref{kindContract, "demo"},
		want: `
  NAME                         READY   REASON      MESSAGE
  Contract/demo                True    Available   Fine
  ├─ Secret/demo-credentials   -       Exists      Holds AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION
> └─ Bucket/private            False   Deleting    Deletion is blocked: DeletionBlocked (BucketNotEmpty): Bucket demo-private still holds 1 object

> Bucket/private is the first not Ready (Deleting). More: kubectl -n demo describe bucket private; what to do: docs/troubleshooting.md#deleting
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &tracer{ctx: context.Background(), c: fakeClient(tc.objs...), namespace: ns}
			tree, err := tr.trace(tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := renderTrace(&out, tree, ns); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(strings.TrimPrefix(tc.want, "\n"), out.String()); diff != "" {
				t.Errorf("trace %s (-want +got):\n%s", tc.ref, diff)
			}
		})
	}
}

// TestTraceOfWhatDoesNotExist is kubectl's NotFound, not an empty tree.
func TestTraceOfWhatDoesNotExist(t *testing.T) {
	tr := &tracer{ctx: context.Background(), c: fakeClient(), namespace: ns}
	for _, k := range []kind{kindContract, kindBucket, kindBucketAccess, kindApplication} {
		tree, err := tr.trace(ref{k, "nope"})
		if k == kindContract {
			// A Contract's own trace starts from its node, which says NotFound.
			if err != nil || tree.reason != reasonNotFound {
				t.Errorf("trace contract/nope: %v, %+v", err, tree)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("trace %s/nope: error %v, want not found", k, err)
		}
	}
}

func TestParseRef(t *testing.T) {
	all := []kind{kindBucket, kindContract, kindBucketAccess, kindApplication}
	for _, tc := range []struct {
		args    []string
		allowed []kind
		want    ref
		wantErr string
	}{
		{args: []string{"bucket/photos"}, allowed: all, want: ref{kindBucket, "photos"}},
		{args: []string{"buckets.storage.osm.dev/photos"}, allowed: all, want: ref{kindBucket, "photos"}},
		{args: []string{"app", "web"}, allowed: all, want: ref{kindApplication, "web"}},
		{args: []string{"BucketAccess/reader"}, allowed: all, want: ref{kindBucketAccess, "reader"}},
		{args: []string{"photos"}, allowed: all, wantErr: "name one object, as bucket/NAME"},
		{args: []string{"pod/web"}, allowed: all, wantErr: `"pod/web" is not one of bucket/NAME, contract/NAME, bucketaccess/NAME, application/NAME`},
		{args: []string{"bucket/"}, allowed: all, wantErr: "is not one of"},
		{args: []string{"bucket/photos"}, allowed: []kind{kindBucketAccess, kindContract}, wantErr: "Bucket: this command takes bucketaccess/NAME, contract/NAME"},
	} {
		got, err := parseRef(tc.args, tc.allowed...)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("parseRef(%q): error %v, want %q", tc.args, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("parseRef(%q) = %v, %v; want %v", tc.args, got, err, tc.want)
		}
	}
}
