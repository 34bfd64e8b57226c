package faults

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// Force-deleted Buckets: every fourth Delete Bucket empties its bucket when deleted
// (spec.deletion.emptyOnDelete), every other one of those versioned. Before the last deletion,
// objects go into their buckets (old versions and delete markers too where versioned; in as
// many as the manager has restarts, more than one DeleteObjects batch) and into buckets that
// must keep theirs: the retained Buckets' buckets, and a bucket no Bucket owns, named after a
// force-deleted one. The manager is killed while it empties, each time after the emptying moved
// on; then every force-deleted bucket must be gone (no leak) and every object version elsewhere
// still there.

const (
	// bigEmptying is how many versions the first force-deleted buckets hold: more than one
	// batch, so a kill can land between two, and the next manager resumes from the record.
	bigEmptying = objectstore.MaxDeleteBatch + 300
	// smallEmptying is how many objects the other force-deleted buckets hold (versioned: each
	// twice, and a delete marker over every fifth).
	smallEmptying = 10
	// keptObjects is how many objects each bucket that must keep them holds.
	keptObjects = 5
	// emptyingKillWait is how long a kill waits for an emptying to move on before it happens
	// anyway.
	emptyingKillWait = 5 * time.Second
)

// forceDeleted says whether Bucket i, of this reclaim policy, empties its bucket when deleted.
func forceDeleted(i int, policy storagev1alpha1.ReclaimPolicy) bool {
	return policy == storagev1alpha1.ReclaimPolicyDelete && i%4 == 3
}

// emptyOnDelete makes b one whose deletion empties its bucket, versioned for every other i.
func emptyOnDelete(i int, b *storagev1alpha1.Bucket) {
	b.Spec.Deletion = &storagev1alpha1.BucketDeletion{EmptyOnDelete: true, MaxObjects: 10 * bigEmptying}
	if (i/4)%2 == 0 {
		b.Spec.Versioning = storagev1alpha1.VersioningEnabled
	}
}

// emptying is what the scenario put where for the last deletion, and what it saw of the kills.
type emptying struct {
	// forced are the buckets the deletion empties, big the first of them, which take more than
	// one batch.
	forced, big []*storagev1alpha1.Bucket
	// versions is how many versions and delete markers the forced buckets held.
	versions int
	// kept is every version (bucket, key, version ID) that must survive, and bystander the
	// bucket no Bucket owns.
	kept      map[string]bool
	bystander string
	// mu guards seen: each Bucket's emptying progress (removed versions) at a kill; a kill
	// waits for progress none has cut yet.
	mu   sync.Mutex
	seen map[string]bool
}

// fillBuckets puts objects into the force-deleted buckets and into those that must keep theirs,
// and records every version of the latter.
func (sc *scenario) fillBuckets() {
	sc.t.Helper()
	e := &emptying{kept: map[string]bool{}, seen: map[string]bool{}}
	sc.emptying = e
	var keep []string
	for _, b := range sc.buckets {
		switch {
		case b.Spec.Deletion.Empties():
			e.forced = append(e.forced, b)
		case b.Spec.BucketReclaimPolicy == storagev1alpha1.ReclaimPolicyRetain:
			keep = append(keep, b.Spec.BucketName)
		}
	}
	if len(e.forced) == 0 {
		sc.t.Fatal("no Bucket empties its bucket when deleted")
	}
	e.big = e.forced[:min(len(e.forced), sc.size.restarts)]
	e.bystander = "kept-" + e.forced[0].Spec.BucketName
	if _, err := sc.admin().CreateBucket(sc.ctx, &s3.CreateBucketInput{Bucket: aws.String(e.bystander)}); err != nil {
		sc.t.Fatalf("creating bucket %s: %v", e.bystander, err)
	}
	keep = append(keep, e.bystander)

	var puts []put
	for i, b := range e.forced {
		n := smallEmptying
		if i < len(e.big) {
			n = bigEmptying
		}
		versioned := b.Spec.Versioning == storagev1alpha1.VersioningEnabled
		if versioned {
			n /= 2 // each key twice
		}
		for k := range n {
			key := fmt.Sprintf("obj-%04d", k)
			puts = append(puts, put{bucket: b.Spec.BucketName, key: key})
			if versioned {
				puts = append(puts, put{bucket: b.Spec.BucketName, key: key, then: k%5 == 0})
			}
		}
	}
	for _, bucket := range keep {
		for k := range keptObjects {
			puts = append(puts, put{bucket: bucket, key: fmt.Sprintf("obj-%04d", k)})
		}
	}
	sc.putAll(puts)
	for _, b := range e.forced {
		e.versions += len(sc.versions(b.Spec.BucketName))
	}
	for _, bucket := range keep {
		for _, v := range sc.versions(bucket) {
			e.kept[bucket+"/"+v] = true
		}
	}
}

// put is one object to write; then deletes it after (a delete marker where versioned). A
// versioned bucket's second put of a key follows the first: the two are in one batch of puts.
type put struct {
	bucket, key string
	then        bool
}

// putAll writes the objects with a few requests at a time, straight to the server, past the
// fault proxy; the second put of a key waits for the first.
func (sc *scenario) putAll(puts []put) {
	sc.t.Helper()
	admin := sc.admin()
	do := func(p put) error {
		if _, err := admin.PutObject(sc.ctx, &s3.PutObjectInput{Bucket: aws.String(p.bucket), Key: aws.String(p.key),
			Body: strings.NewReader(p.bucket + "/" + p.key)}); err != nil {
			return fmt.Errorf("putting %s into %s: %w", p.key, p.bucket, err)
		}
		if p.then {
			if _, err := admin.DeleteObject(sc.ctx, &s3.DeleteObjectInput{Bucket: aws.String(p.bucket), Key: aws.String(p.key)}); err != nil {
				return fmt.Errorf("deleting %s from %s: %w", p.key, p.bucket, err)
			}
		}
		return nil
	}
	// Puts of one key go to one worker, in order.
	const workers = 8
	lanes := make([][]put, workers)
	for _, p := range puts {
		lane := int(hash(p.bucket+"/"+p.key) % workers)
		lanes[lane] = append(lanes[lane], p)
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w, lane := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range lane {
				if err := do(p); err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		sc.t.Fatal(err)
	}
}

func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := range len(s) {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

// versions lists every version and delete marker of a bucket, as "key version-id"; a bucket
// that is gone has none.
func (sc *scenario) versions(bucket string) []string {
	sc.t.Helper()
	out, err := sc.listVersions(bucket)
	if err != nil {
		sc.t.Fatal(err)
	}
	return out
}

func (sc *scenario) listVersions(bucket string) ([]string, error) {
	var out []string
	p := s3.NewListObjectVersionsPaginator(sc.admin(), &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(sc.ctx)
		if objectstore.ErrorCode(err) == "NoSuchBucket" {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("listing the versions of bucket %s: %w", bucket, err)
		}
		for _, v := range page.Versions {
			out = append(out, aws.ToString(v.Key)+" "+aws.ToString(v.VersionId))
		}
		for _, m := range page.DeleteMarkers {
			out = append(out, aws.ToString(m.Key)+" "+aws.ToString(m.VersionId)+" (delete marker)")
		}
	}
	return out, nil
}

// checkEmptied: every force-deleted bucket is gone, and every version that had to survive is
// still there. It returns how many of those were deleted.
func (sc *scenario) checkEmptied() (deletedOutside int) {
	sc.t.Helper()
	e := sc.emptying
	for _, b := range e.forced {
		if left := sc.versions(b.Spec.BucketName); len(left) > 0 {
			sc.t.Errorf("force-deleted bucket %s still holds %d versions", b.Spec.BucketName, len(left))
		}
	}
	now := map[string]bool{}
	for path := range e.kept {
		bucket, _, _ := strings.Cut(path, "/")
		if _, listed := now[bucket]; !listed {
			now[bucket] = true
			for _, v := range sc.versions(bucket) {
				now[bucket+"/"+v] = true
			}
		}
	}
	for path := range e.kept {
		if !now[path] {
			deletedOutside++
			sc.t.Errorf("object version %s, outside every force-deleted bucket, was deleted", path)
		}
	}
	return deletedOutside
}

// emptyingMoment is a kill moment that waits until a big force-deleted bucket's emptying has
// moved on since the last kill (up to emptyingKillWait), and counts the kills that cut one
// with versions still in its bucket.
func (sc *scenario) emptyingMoment() *killMoment {
	e := sc.emptying
	// midway lists the big Buckets being emptied, with how far, whose progress no kill has
	// cut yet.
	midway := func() []string {
		var out []string
		for _, b := range e.big {
			got := &storagev1alpha1.Bucket{}
			if err := sc.k8s.Get(sc.ctx, client.ObjectKeyFromObject(b), got); err != nil {
				if !apierrors.IsNotFound(err) {
					sc.t.Errorf("reading Bucket %s: %v", b.Name, err)
				}
				continue
			}
			if em := got.Status.Emptying; got.DeletionTimestamp != nil && em != nil && em.Counted > 0 {
				at := fmt.Sprintf("%s at %d", b.Name, em.RemovedVersions+em.RemovedDeleteMarkers)
				e.mu.Lock()
				if !e.seen[at] {
					out = append(out, at)
				}
				e.mu.Unlock()
			}
		}
		return out
	}
	return &killMoment{
		wait:  emptyingKillWait,
		ready: func() bool { return len(midway()) > 0 },
		landed: func() bool {
			cut := false
			for _, at := range midway() {
				e.mu.Lock()
				e.seen[at] = true
				e.mu.Unlock()
				name, _, _ := strings.Cut(at, " ")
				left, err := sc.listVersions(sc.ns + "-" + name)
				if err != nil {
					sc.t.Error(err)
				}
				cut = cut || len(left) > 0
			}
			return cut
		},
	}
}
