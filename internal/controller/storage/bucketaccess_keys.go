package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
	"github.com/object-storage-manager/object-storage-manager/internal/tuning"
)

// principalKeys are one principal's keys at the provider, as the credential lifecycle sees
// them. first is its first key pair, when this pass made (or replayed) the principal.
type principalKeys struct {
	kind   accessKind
	access *storagev1alpha1.BucketAccess
	pass   *engine.Pass[*storagev1alpha1.BucketAccess]
	target *target
	first  *contractclient.Credentials
}

var _ credentials.Issuer = principalKeys{}

// First replays the principal's creation, which answers its first key pair again.
func (p principalKeys) First(ctx context.Context) (contractclient.Credentials, error) {
	if p.first != nil {
		return *p.first, nil
	}
	got, _, err := p.kind.Principals.CreatePrincipal(ctx, p.access.Status.ContractID, string(p.access.UID))
	return replayedKey(got.Credentials, err, "principal")
}

// Add issues another key pair. The bucket policy must name the new key before it can work on
// servers that name principals by key: status takes the principal's new Principal element, and
// the Bucket's controller rewrites the policy from it.
func (p principalKeys) Add(ctx context.Context, idempotencyKey string) (contractclient.Credentials, error) {
	a := p.access
	got, key, err := p.kind.Principals.AddPrincipalKey(ctx, a.Status.ContractID, a.Status.PrincipalID, idempotencyKey)
	if err != nil {
		return key, err
	}
	a.Status.PolicyPrincipal = policyPrincipalRaw(got.PolicyPrincipal)
	return key, nil
}

// Revoke revokes a key pair, and records at once how the policy names the principal without
// it. The lifecycle records the key's retirement next, and never revokes it again: a crash
// between the two must not leave status naming a key the server no longer has, which the
// Bucket's policy would name too, and a server such as versitygw refuses the whole policy for.
func (p principalKeys) Revoke(ctx context.Context, accessKeyID string) error {
	a := p.access
	if err := p.kind.Principals.RemovePrincipalKey(ctx, a.Status.ContractID, a.Status.PrincipalID, accessKeyID); err != nil {
		return err
	}
	got, err := p.kind.Principals.GetPrincipal(ctx, a.Status.ContractID, a.Status.PrincipalID)
	if err != nil {
		return err
	}
	principal := policyPrincipalRaw(got.PolicyPrincipal)
	if apiequality.Semantic.DeepEqual(principal, a.Status.PolicyPrincipal) {
		return nil // named by principal, not by key (Ceph RGW): nothing to record
	}
	return p.pass.Record(ctx, func(o *storagev1alpha1.BucketAccess) { o.Status.PolicyPrincipal = principal })
}

// Verify checks what the key can do in each of its buckets: a key that cannot yet do all its
// access allows waits for the Bucket's policy to carry it.
func (p principalKeys) Verify(ctx context.Context, key contractclient.Credentials) (credentials.Verdict, error) {
	a := p.access
	checks, err := p.kind.check(ctx, a, p.target, key)
	if err != nil {
		return credentials.Verdict{}, err
	}
	for _, c := range checks {
		if c.revoked {
			continue
		}
		in := ""
		if a.MultiBucket() {
			in = " in Bucket " + c.bucket
		}
		if missing, _ := accessGaps(c.access, c.check); len(missing) > 0 {
			p.kind.forgetChecks(a.UID) // the policy is on its way: ask again on the retry
			return credentials.Verdict{Reason: storagev1alpha1.ReasonNewKeyPending, Retry: tuning.PolicyWait,
				Why: fmt.Sprintf("New key %s cannot %s%s yet: the Bucket's policy does not carry it yet", key.AccessKeyID, strings.Join(missing, " or "), in)}, nil
		}
		if outside := outsideGaps(c.check); len(outside) > 0 {
			return credentials.Verdict{Reason: storagev1alpha1.ReasonPrefixUnsupported, Retry: engine.WaitingRetry(p.kind.ResyncPeriod),
				Why: fmt.Sprintf("New key %s can also %s outside prefix %q%s: the S3 server does not enforce the policy's prefix condition, or the bucket's ACL or policy allows more",
					key.AccessKeyID, strings.Join(outside, " and "), c.prefix, in)}, nil
		}
	}
	return credentials.Verdict{Works: true}, nil
}

// keyCheck is what a key was last found able to do in one bucket, under prefix ("" for the
// whole bucket).
type keyCheck struct {
	key, prefix string
	// bucket is the Bucket, bucketName its S3 bucket.
	bucket, bucketName string
	// access is what the key is to do there; revoked: nothing, the Bucket was taken out of
	// spec.buckets.
	access  storagev1alpha1.AccessMode
	revoked bool
	check   objectstore.AccessCheck
	// everyone is what the bucket's canned ACL lets every key do, in a bucket taken out of
	// spec.buckets: the key is refused there once it can do no more than that.
	everyone objectstore.AccessCheck
}

// grantedToEveryone is what the canned ACL of the Bucket named name lets any key do: a public
// bucket still lets a key list and read once its policy has dropped it.
func (k accessKind) grantedToEveryone(ctx context.Context, namespace, name string) objectstore.AccessCheck {
	b := &storagev1alpha1.Bucket{}
	if err := k.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, b); err != nil {
		return objectstore.AccessCheck{} // gone: nothing to allow for
	}
	switch b.Spec.CannedACL {
	case storagev1alpha1.CannedACLPublicRead, storagev1alpha1.CannedACLAuthenticatedRead:
		return objectstore.AccessCheck{List: true, Read: true}
	case storagev1alpha1.CannedACLPublicReadWrite:
		return objectstore.AccessCheck{List: true, Read: true, Write: true}
	}
	return objectstore.AccessCheck{}
}

// check finds out what key can do in each bucket it is for, and in each bucket taken out of
// spec.buckets whose policy may still name it; it asks again only when the key or the buckets
// changed, or the last answer is older than the resync period.
func (k accessKind) check(ctx context.Context, a *storagev1alpha1.BucketAccess, t *target,
	key contractclient.Credentials) ([]keyCheck, error) {
	want := make([]keyCheck, 0, len(t.buckets))
	for _, b := range t.buckets {
		want = append(want, keyCheck{key: key.AccessKeyID, prefix: string(b.Prefix), bucket: string(b.Name),
			bucketName: b.bucket.Status.BucketName, access: b.Access})
	}
	for _, st := range a.Status.Buckets {
		if _, kept := a.AccessBucketNamed(st.Name); !kept && st.BucketName != "" {
			want = append(want, keyCheck{key: key.AccessKeyID, bucket: st.Name, bucketName: st.BucketName, revoked: true,
				everyone: k.grantedToEveryone(ctx, a.Namespace, st.Name)})
		}
	}
	if last, _, ok := k.checked.Get(a.UID, k.ResyncPeriod); ok && slices.EqualFunc(last, want, sameCheck) {
		return last, nil
	}
	// A pass cut short by a failed request keeps what it found, and the next one asks only for
	// the rest: a key over many buckets needs a dozen requests or more, which all at once would
	// seldom get through a server that fails now and then.
	progress, _, _ := k.progress.Get(a.UID, k.ResyncPeriod)
	now := k.Now.Time()
	store := k.Stores(accountOf(t.contract, key))
	for i := range want {
		if j := slices.IndexFunc(progress, func(p partialCheck) bool {
			return sameCheck(p.keyCheck, want[i]) && now.Sub(p.at) < k.ResyncPeriod
		}); j >= 0 {
			want[i].check = progress[j].check
			continue
		}
		check, err := store.CheckAccess(ctx, want[i].bucketName, want[i].prefix)
		if err != nil {
			return nil, err
		}
		want[i].check = check
		progress = append(progress, partialCheck{keyCheck: want[i], at: now})
		k.progress.Put(a.UID, progress)
	}
	k.progress.Delete(a.UID)
	k.checked.Put(a.UID, want)
	return want, nil
}

// partialCheck is one bucket's check of a pass that did not check them all, and when it was
// made.
type partialCheck struct {
	keyCheck
	at time.Time
}

// forgetChecks drops what a BucketAccess's key was found to do, so the next pass asks again.
func (k accessKind) forgetChecks(uid types.UID) {
	k.checked.Delete(uid)
	k.progress.Delete(uid)
}

// sameCheck says whether last checked what want asks for: the same key, bucket, access and
// prefix.
func sameCheck(last, want keyCheck) bool {
	want.check = last.check
	return last == want
}

// keys is the BucketAccess's key through this pass. first is the principal's first key pair
// when the pass made the principal.
func (k accessKind) keys(a *storagev1alpha1.BucketAccess, p *engine.Pass[*storagev1alpha1.BucketAccess], t *target,
	first *contractclient.Credentials) (*credentials.Keys, *heldSecret) {
	held := &heldSecret{secrets: k.secrets(), owner: a, secret: t.secret, keyFirst: true, name: a.SecretNameOrDefault(),
		render: func(key *contractclient.Credentials) (credentials.Secret, error) {
			conn := credentials.Connection{Endpoint: t.contract.Status.Endpoint, Region: t.contract.Status.Region,
				Bucket: a.Status.BucketName, Prefix: string(a.Spec.Prefix)}
			what := "the credentials for bucket " + a.Status.BucketName
			if a.MultiBucket() {
				conn.Buckets = make([]credentials.BucketConnection, 0, len(t.buckets))
				var names []string
				for _, b := range t.buckets {
					conn.Buckets = append(conn.Buckets, credentials.BucketConnection{Name: string(b.Name), Bucket: b.bucket.Status.BucketName, Prefix: string(b.Prefix)})
					names = append(names, b.bucket.Status.BucketName)
				}
				what = "the credentials for buckets " + strings.Join(names, ", ")
			}
			rendered, err := credentials.Render(a.SecretFormats(), conn, key)
			return credentials.Secret{
				Labels:   map[string]string{storagev1alpha1.ContractLabel: t.contract.Name, storagev1alpha1.BucketAccessLabel: a.Name},
				Rendered: rendered,
				What:     what,
			}, err
		}}
	keys := keysOf(p, a, principalKeys{kind: k, access: a, pass: p, target: t, first: first}, held,
		credentials.Shared{Refusals: &k.refusals, ResyncPeriod: k.ResyncPeriod, Now: k.Now.Time(), Recorder: k.Recorder})
	// A key limited to a prefix is handed out only once it is found limited to it.
	keys.VerifyFirst = string(a.Spec.Prefix) != ""
	return keys, held
}

// keysFailed ends a pass whose key lifecycle stopped: on a principal the provider no longer
// has, on a Secret of someone else's, or on an error. A rotation that merely has not finished
// goes on: the key in the Secret still works, and is checked.
func (k accessKind) keysFailed(found accessFound, a *storagev1alpha1.BucketAccess, res credentials.Result) (accessOutcome, bool) {
	switch {
	case res.Found.State == credentials.Withheld && res.Found.Err != nil:
		return found.end(accessS3Failed{res.Found.Err}, 0, res.Err), true
	case res.Found.State == credentials.Withheld:
		if last, _, ok := k.checked.Get(a.UID, k.ResyncPeriod); ok && len(last) > 0 && last[0].key == res.Found.NewKey {
			found.checks = last
		}
		reason := res.Found.Reason
		if reason == storagev1alpha1.ReasonNewKeyPending {
			reason = storagev1alpha1.ReasonPolicyPending // Ready's word for it
		}
		return found.end(accessWithheld{reason, res.Found.Why}, res.After, nil), true
	case errors.Is(res.Err, contractclient.ErrPrincipalDeleted), errors.Is(res.Err, contractclient.ErrNotFound):
		return found.end(principalLost{}, 0, reconcile.TerminalError(res.Err)), true
	case secretNotWritten(res.Err):
		return k.secretFailed(found, a, res.Err), true
	case res.Err != nil:
		return found.end(nil, res.After, res.Err), true
	}
	return accessOutcome{}, false
}

// verify checks the key in the Secret with itself: Ready says whether it can do what its access
// allows, AccessVerified also whether it can do more.
func (k accessKind) verify(ctx context.Context, a *storagev1alpha1.BucketAccess, t *target, held *heldSecret,
	found accessFound, after time.Duration) accessOutcome {
	key, ok := held.key(a.Status.AccessKeyID)
	if !ok {
		if a.Status.AccessKeyID == "" {
			return found.end(nil, after, nil) // the first key did not reach the Secret
		}
		return found.end(accessKeyReplacing{a.SecretNameOrDefault(), a.Status.AccessKeyID}, after, nil)
	}
	checks, err := k.check(ctx, a, t, key)
	if err != nil {
		return found.end(accessS3Failed{err}, 0, err)
	}
	found.checks = checks
	for _, c := range checks {
		if missing, _ := accessGaps(c.access, c.check); len(missing) > 0 || len(stillReaches(c)) > 0 {
			// A policy is on its way, to grant the key or to drop it: ask again soon.
			k.forgetChecks(a.UID)
			return found.end(accessIssued{}, tuning.PolicyWait, nil)
		}
	}
	if found.keys.State == credentials.NotWorking {
		after = engine.Sooner(after, tuning.PolicyWait)
	}
	return found.end(accessIssued{}, engine.Sooner(engine.ResyncAfter(k.ResyncPeriod), after), nil)
}

// policyPrincipalRaw is a principal's Principal element as status holds it.
func policyPrincipalRaw(p map[string]any) *runtime.RawExtension {
	if len(p) == 0 {
		return nil
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	return &runtime.RawExtension{Raw: raw}
}
