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
		if k != current && sc.keyWorks(k, a.Status.BucketName) {
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
