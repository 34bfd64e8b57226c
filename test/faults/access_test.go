package faults

import (
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// rotationOverlap is how long a replaced key keeps working in the scenario: short, so the
// revocations happen within it.
var rotationOverlap = metav1.Duration{Duration: 3 * resyncPeriod / 5}

// createAccesses makes a BucketAccess for every third Bucket, of each access mode in turn.
func (sc *scenario) createAccesses() {
	modes := []storagev1alpha1.AccessMode{storagev1alpha1.AccessReadOnly, storagev1alpha1.AccessReadWrite, storagev1alpha1.AccessWriteOnly}
	if sc.issued == nil {
		sc.issued = map[k8stypes.UID][]string{}
	}
	for i, b := range sc.buckets {
		if i%3 != 0 {
			continue
		}
		a := &storagev1alpha1.BucketAccess{
			ObjectMeta: metav1.ObjectMeta{Namespace: sc.ns, Name: "key-" + b.Name},
			Spec: storagev1alpha1.BucketAccessSpec{Bucket: storagev1alpha1.BucketName(b.Name), Access: modes[len(sc.accesses)%len(modes)],
				Rotation: &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: 24 * 3600e9}, Overlap: &rotationOverlap}},
		}
		sc.create(a)
		sc.accesses = append(sc.accesses, a)
		sc.issued[a.UID] = nil
	}
	sc.createSharedAccesses()
}

// sharedModes are the accesses of a BucketAccess over several Buckets, in the order of its
// spec.buckets. The last is taken away mid-run (narrowSharedAccesses); it is ReadWrite, so a key
// still reaching it shows in a write, which no canned ACL of the scenario grants.
var sharedModes = []storagev1alpha1.AccessBucket{
	{Access: storagev1alpha1.AccessReadOnly},
	{Access: storagev1alpha1.AccessWriteOnly, Prefix: "in/"},
	{Access: storagev1alpha1.AccessReadWrite},
}

// createSharedAccesses makes, for each Contract with enough Buckets, one BucketAccess over
// three of them, one of each access mode.
func (sc *scenario) createSharedAccesses() {
	byContract := map[string][]*storagev1alpha1.Bucket{}
	for _, b := range sc.buckets {
		byContract[b.Spec.ContractName] = append(byContract[b.Spec.ContractName], b)
	}
	for _, c := range sc.contracts {
		buckets := byContract[c.Name]
		if len(buckets) < len(sharedModes) {
			continue
		}
		a := &storagev1alpha1.BucketAccess{
			ObjectMeta: metav1.ObjectMeta{Namespace: sc.ns, Name: "shared-" + c.Name},
			Spec: storagev1alpha1.BucketAccessSpec{
				Rotation: &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: 24 * 3600e9}, Overlap: &rotationOverlap}},
		}
		for i, m := range sharedModes {
			m.Name = storagev1alpha1.BucketName(buckets[i].Name)
			a.Spec.Buckets = append(a.Spec.Buckets, m)
		}
		sc.create(a)
		sc.accesses = append(sc.accesses, a)
		sc.issued[a.UID] = nil
	}
}

// narrowSharedAccesses takes the last Bucket from every BucketAccess over several, while the
// manager dies and calls fail, and waits until each is Ready without it. It returns how many
// keys still write where they no longer may, and fails the test if a key could not write there
// before (a check that could not fail) or lost a Bucket it keeps.
func (sc *scenario) narrowSharedAccesses() (outlived, narrowed int) {
	sc.t.Helper()
	type cut struct {
		a       *storagev1alpha1.BucketAccess
		dropped string // the S3 bucket taken away
	}
	var cuts []cut
	for _, a := range sc.accesses {
		if len(a.Spec.Buckets) < len(sharedModes) {
			continue
		}
		sc.remember(a)
		dropped := bucketOf(a, a.Spec.Buckets[len(a.Spec.Buckets)-1].Name)
		if err := sc.tryWrite(a, dropped); err != nil {
			sc.t.Fatalf("%s: its key cannot write to %s before it is taken away: %v", a.Name, dropped, err)
		}
		patch := client.RawPatch(k8stypes.JSONPatchType, fmt.Appendf(nil, `[{"op":"remove","path":"/spec/buckets/%d"}]`, len(a.Spec.Buckets)-1))
		if err := sc.k8s.Patch(sc.ctx, a, patch); err != nil {
			sc.t.Fatalf("taking a Bucket from %s: %v", a.Name, err)
		}
		cuts = append(cuts, cut{a: a, dropped: dropped})
	}
	// Ready alone may still be the previous generation's: each must have seen its new spec and
	// let go of the Bucket (status.buckets keeps one taken out until it is refused there).
	sc.waitFor("every narrowed BucketAccess without its last Bucket", func() (string, bool) {
		for _, c := range cuts {
			if err := sc.k8s.Get(sc.ctx, client.ObjectKeyFromObject(c.a), c.a); err != nil {
				return err.Error(), false
			}
			if st := c.a.Status; st.ObservedGeneration != c.a.Generation || len(st.Buckets) != len(c.a.Spec.Buckets) {
				return fmt.Sprintf("%s: generation %d observed %d, %d buckets in status", c.a.Name, c.a.Generation, st.ObservedGeneration, len(st.Buckets)), false
			}
		}
		return "", true
	})
	sc.waitReady()
	for _, c := range cuts {
		sc.remember(c.a)
		if err := sc.tryWrite(c.a, c.dropped); objectstore.ErrorCode(err) != "AccessDenied" {
			sc.t.Errorf("%s: its key still writes to %s, taken from it: %v", c.a.Name, c.dropped, err)
			outlived++
		}
		// What it keeps, it keeps: the ReadOnly Bucket still lists.
		kept := bucketOf(c.a, c.a.Spec.Buckets[0].Name)
		if _, err := sc.keyClient(c.a).ListObjectsV2(sc.ctx, &s3.ListObjectsV2Input{Bucket: aws.String(kept), MaxKeys: aws.Int32(1)}); err != nil {
			sc.t.Errorf("%s: its key lost %s, which it keeps: %v", c.a.Name, kept, err)
		}
	}
	return outlived, len(cuts)
}

// tryWrite writes an object with a BucketAccess's key and takes it away again, so the bucket
// stays as the scenario left it.
func (sc *scenario) tryWrite(a *storagev1alpha1.BucketAccess, bucket string) error {
	key := aws.String("narrow-probe")
	if _, err := sc.keyClient(a).PutObject(sc.ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: key}); err != nil {
		return err
	}
	_, err := sc.admin().DeleteObject(sc.ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: key})
	return err
}

// keyClient is an S3 client with the key in a BucketAccess's Secret.
func (sc *scenario) keyClient(a *storagev1alpha1.BucketAccess) *s3.Client {
	secret := &corev1.Secret{}
	if err := sc.k8s.Get(sc.ctx, client.ObjectKey{Namespace: sc.ns, Name: a.SecretNameOrDefault()}, secret); err != nil {
		sc.t.Fatalf("reading the Secret of %s: %v", a.Name, err)
	}
	return localenv.NewS3Client(sc.stk.S3.Direct, sc.stk.S3.Region,
		string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID]), string(secret.Data[storagev1alpha1.SecretKeySecretAccessKey]))
}

// bucketOf is the S3 bucket of the Bucket named name in a BucketAccess's status, or, when name
// is empty, of its single Bucket (its first, for one over several).
func bucketOf(a *storagev1alpha1.BucketAccess, name storagev1alpha1.BucketName) string {
	for _, b := range a.Status.Buckets {
		if b.Name == string(name) || name == "" {
			return b.BucketName
		}
	}
	return a.Status.BucketName
}

// rotateAccesses asks every BucketAccess for a new key and waits until each holds it, its
// replaced key revoked; it returns how many replaced keys still work at the server after that
// (or are still in effect at the provider).
func (sc *scenario) rotateAccesses(value string) (outlived int) {
	sc.t.Helper()
	for _, a := range sc.accesses {
		sc.remember(a)
		patch := client.RawPatch(k8stypes.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, storagev1alpha1.RotateKeyAnnotation, value))
		if err := sc.k8s.Patch(sc.ctx, a, patch); err != nil {
			sc.t.Fatalf("asking %s for a new key: %v", a.Name, err)
		}
	}
	sc.waitFor("every BucketAccess rotated, its replaced key revoked", func() (string, bool) {
		for _, a := range sc.accesses {
			if err := sc.k8s.Get(sc.ctx, client.ObjectKeyFromObject(a), a); err != nil {
				return err.Error(), false
			}
			if st := a.Status; st.RotatedFor != value || st.PendingKey != nil || len(st.RetiringKeys) > 0 {
				return fmt.Sprintf("%s: rotated for %q, pending %v, retiring %v", a.Name, st.RotatedFor, st.PendingKey, st.RetiringKeys), false
			}
		}
		return "", true
	})
	for _, a := range sc.accesses {
		sc.remember(a)
		outlived += sc.checkKeys(a)
	}
	return outlived
}

// remember records the key a BucketAccess holds now.
func (sc *scenario) remember(a *storagev1alpha1.BucketAccess) {
	if err := sc.k8s.Get(sc.ctx, client.ObjectKeyFromObject(a), a); err != nil {
		sc.t.Fatal(err)
	}
	if k := a.Status.AccessKeyID; k != "" && !slices.Contains(sc.issued[a.UID], k) {
		sc.issued[a.UID] = append(sc.issued[a.UID], k)
	}
}

// checkKeys checks a BucketAccess against the servers: its Secret's key is the one status
// names and works, the provider holds that key alone for its principal, and every key it held
// before is refused by S3. It returns how many keys outlived their revocation.
func (sc *scenario) checkKeys(a *storagev1alpha1.BucketAccess) (outlived int) {
	sc.t.Helper()
	secret := &corev1.Secret{}
	if err := sc.k8s.Get(sc.ctx, client.ObjectKey{Namespace: sc.ns, Name: a.SecretNameOrDefault()}, secret); err != nil {
		sc.t.Fatalf("reading the Secret of %s: %v", a.Name, err)
	}
	current := string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID])
	if current != a.Status.AccessKeyID {
		sc.t.Errorf("%s: the Secret holds key %s, status names %s", a.Name, current, a.Status.AccessKeyID)
	}
	if active := sc.activeKeys(a.UID); !slices.Equal(active, []string{current}) {
		sc.t.Errorf("%s: the provider holds keys %v for its principal, want the Secret's alone (%s)", a.Name, active, current)
		outlived += max(0, len(active)-1)
	}
	for _, k := range sc.issued[a.UID] {
		if k != current && sc.keyWorks(k, bucketOf(a, "")) {
			sc.t.Errorf("%s: replaced key %s still works at the S3 server", a.Name, k)
			outlived++
		}
	}
	return outlived
}

// activeKeys are the keys the provider holds for the principal made for the BucketAccess uid.
func (sc *scenario) activeKeys(uid k8stypes.UID) []string {
	all, err := sc.stk.ContractAPI.Principals()
	if err != nil {
		sc.t.Fatal(err)
	}
	for _, p := range all {
		if p.IdempotencyKey == string(uid) {
			return p.AccessKeyIDs
		}
	}
	return nil
}

// keyWorks reports whether the S3 server still knows the key: any answer but
// InvalidAccessKeyId. Its secret is not needed: an unknown key is refused before its signature
// is checked.
func (sc *scenario) keyWorks(accessKeyID, bucket string) bool {
	c := localenv.NewS3Client(sc.stk.S3.Direct, sc.stk.S3.Region, accessKeyID, "not-the-secret")
	_, err := c.ListObjectsV2(sc.ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), MaxKeys: aws.Int32(1)})
	return objectstore.ErrorCode(err) != "InvalidAccessKeyId"
}

// checkPrincipals: every principal made for a BucketAccess of the scenario is deleted with it,
// its keys refused by the server, and no BucketAccess was given two. It returns how many were
// left, and how many were made twice.
func (sc *scenario) checkPrincipals() (left, twice int) {
	sc.t.Helper()
	all, err := sc.stk.ContractAPI.Principals()
	if err != nil {
		sc.t.Fatal(err)
	}
	for uid, keys := range sc.issued {
		var mine int
		for _, p := range all {
			if p.IdempotencyKey != string(uid) {
				continue
			}
			mine++
			if p.State != "deleted" || len(p.AccessKeyIDs) > 0 {
				left++
				sc.t.Errorf("principal %s of a deleted BucketAccess is %s with keys %v", p.ID, p.State, p.AccessKeyIDs)
			}
		}
		if mine > 1 {
			twice++
			sc.t.Errorf("BucketAccess %s was given %d principals", uid, mine)
		}
		for _, k := range keys {
			if sc.keyWorks(k, sc.ns) {
				left++
				sc.t.Errorf("key %s of a deleted BucketAccess still works at the S3 server", k)
			}
		}
	}
	return left, twice
}
