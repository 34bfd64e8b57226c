package faults

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv/faults"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// namer turns what differs from one run to the next (the namespace, UIDs, the provider's ids,
// access keys) into labels that read the same in every run: "Contract/owner", "BucketAccess/
// reader#2" (the second object of that name), "key of BucketAccess/writer".
type namer struct {
	r      *run
	mu     sync.Mutex
	labels map[string]string
	// lives counts the objects seen under each kind and name.
	lives map[string]int
}

func newNamer(r *run) *namer {
	return &namer{r: r, labels: map[string]string{}, lives: map[string]int{}}
}

// write is the tap's Name: a write's target as a label.
func (n *namer) write(w faults.Write) faults.Write {
	w.Target = strings.TrimPrefix(w.Target, n.r.ns+"-")
	if w.Channel == faults.ContractAPI || w.Channel == faults.ContractServer {
		n.refresh()
		w.Target = n.normalize(w.Target)
	}
	return w
}

// normalize replaces the namespace and every id the namer knows in s by its label (refresh
// learns them).
func (n *namer) normalize(s string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	ids := make([]string, 0, len(n.labels))
	for id := range n.labels {
		ids = append(ids, id)
	}
	// Longest first, so that an id is never cut by a shorter one inside it.
	sort.Slice(ids, func(i, j int) bool { return len(ids[i]) > len(ids[j]) })
	for _, id := range ids {
		s = strings.ReplaceAll(s, id, n.labels[id])
	}
	return strings.ReplaceAll(s, n.r.ns, "NS")
}

// refresh learns the labels of the run's resources (by UID), of their keys, and of the
// provider's contracts and principals.
func (n *namer) refresh() {
	objs := n.r.storageObjects()
	n.mu.Lock()
	for _, o := range objs {
		n.learn(o)
	}
	n.mu.Unlock()
	contracts, err := n.r.stk.ContractAPI.Contracts()
	if err != nil {
		n.r.t.Fatal(err)
	}
	principals, err := n.r.stk.ContractAPI.Principals()
	if err != nil {
		n.r.t.Fatal(err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, c := range contracts {
		if l, ok := n.labels[c.IdempotencyKey]; ok {
			n.labels[c.ID] = "contract of " + l
			if k := contractserver.FirstAccessKeyID(c.ID); n.labels[k] == "" {
				n.labels[k] = "key of contract of " + l
			}
		}
	}
	for _, p := range principals {
		if l, ok := n.labels[p.IdempotencyKey]; ok {
			n.labels[p.ID] = "principal of " + l
			for _, k := range p.AccessKeyIDs {
				n.labels[k] = "key of " + l
			}
		}
	}
}

// learn labels one resource and the keys its status names.
func (n *namer) learn(o client.Object) {
	uid := string(o.GetUID())
	if _, ok := n.labels[uid]; !ok {
		kn := kindOf(o) + "/" + o.GetName()
		n.lives[kn]++
		label := kn
		if n.lives[kn] > 1 {
			label = fmt.Sprintf("%s#%d", kn, n.lives[kn])
		}
		n.labels[uid] = label
	}
	for _, k := range keysOf(o) {
		if k != "" {
			n.labels[k] = "key of " + n.labels[uid]
		}
	}
}

// label is what the namer calls a resource.
func (n *namer) label(o client.Object) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if l, ok := n.labels[string(o.GetUID())]; ok {
		return l
	}
	return kindOf(o) + "/" + o.GetName()
}

func kindOf(o client.Object) string {
	switch o.(type) {
	case *storagev1alpha1.Contract:
		return "Contract"
	case *storagev1alpha1.Bucket:
		return "Bucket"
	case *storagev1alpha1.BucketAccess:
		return "BucketAccess"
	case *paasv1alpha1.Application:
		return "Application"
	case *appsv1.Deployment:
		return "Deployment"
	case *corev1.Service:
		return "Service"
	case *batchv1.CronJob:
		return "CronJob"
	case *batchv1.Job:
		return "Job"
	}
	return fmt.Sprintf("%T", o)
}

// keysOf are the access keys a resource's status names: the current one, one being issued,
// and those retiring.
func keysOf(o client.Object) []string {
	var st *storagev1alpha1.KeyStatus
	switch v := o.(type) {
	case *storagev1alpha1.Contract:
		st = &v.Status.KeyStatus
	case *storagev1alpha1.BucketAccess:
		st = &v.Status.KeyStatus
	default:
		return nil
	}
	keys := []string{st.AccessKeyID}
	if st.PendingKey != nil {
		keys = append(keys, st.PendingKey.AccessKeyID)
	}
	for _, k := range st.RetiringKeys {
		keys = append(keys, k.AccessKeyID)
	}
	return keys
}

// storageObjects are the run's Contracts, Buckets, BucketAccesses and Applications.
func (r *run) storageObjects() []client.Object {
	return r.list(&storagev1alpha1.ContractList{}, &storagev1alpha1.BucketList{},
		&storagev1alpha1.BucketAccessList{}, &paasv1alpha1.ApplicationList{})
}

// state is what the servers hold of a run's resources at a checkpoint, in words that read the
// same in every run of the workload: one line per thing, by what it is.
type state map[string]string

// diff lists the lines in which got differs from want.
func (want state) diff(got state) []string {
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if want[k] != got[k] {
			out = append(out, k+": "+changed(orNone(want[k]), orNone(got[k])))
		}
	}
	sort.Strings(out)
	return out
}

// changed shows how got differs from want: what they share at either end is cut short.
func changed(want, got string) string {
	pre := 0
	for pre < min(len(want), len(got)) && want[pre] == got[pre] {
		pre++
	}
	suf := 0
	for suf < min(len(want), len(got))-pre && want[len(want)-1-suf] == got[len(got)-1-suf] {
		suf++
	}
	const context = 40
	head, tail := "", ""
	if pre > context {
		head, pre = "...", pre-context
	} else {
		pre = 0
	}
	if suf > context {
		tail, suf = "...", suf-context
	} else {
		suf = 0
	}
	return fmt.Sprintf("want %s%s%s, got %s%s%s", head, want[pre:len(want)-suf], tail, head, got[pre:len(got)-suf], tail)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// state reads the run's state from the servers: the API server (resources, their conditions
// and Secrets), the S3 server (buckets, their settings and objects; which keys work) and the
// contract server (contracts, principals and the keys in effect).
func (r *run) state() state {
	st := state{}
	r.names.refresh()
	objs := r.storageObjects()
	for _, o := range objs {
		st["resource "+r.names.label(o)] = r.names.normalize(describeResource(o))
		r.rememberKeys(o)
	}
	r.describeChildren(st)
	r.describeKeys(st, objs)
	r.describeProvider(st)
	r.describeBuckets(st)
	return st
}

// describeResource is a resource's conditions (type, status, reason) and any work under way.
func describeResource(o client.Object) string {
	var conds []string
	for _, c := range conditions(o) {
		conds = append(conds, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	sort.Strings(conds)
	s := strings.Join(conds, " ")
	switch v := o.(type) {
	case *storagev1alpha1.Bucket:
		if v.Status.CreatingBucket != "" {
			s += "; creating " + v.Status.CreatingBucket
		}
	case *storagev1alpha1.BucketAccess:
		s += describeKeyStatus(&v.Status.KeyStatus)
		for _, b := range v.Status.Buckets {
			s += fmt.Sprintf("; %s %s %q verified=%s/%s", b.Name, b.Access, b.Prefix, b.Verified, b.Reason)
			if b.Revoked {
				s += " revoked"
			}
		}
	case *storagev1alpha1.Contract:
		s += describeKeyStatus(&v.Status.KeyStatus)
	case *paasv1alpha1.Application:
		for _, b := range v.Status.Backups {
			s += fmt.Sprintf("; backup %s (%d objects)", b.Name, b.Objects)
		}
		if v.Status.Restore != nil {
			s += fmt.Sprintf("; restore %s %s", v.Status.Restore.Snapshot, v.Status.Restore.Phase)
		}
	}
	if !o.GetDeletionTimestamp().IsZero() {
		s += "; being deleted"
	}
	return s
}

func describeKeyStatus(k *storagev1alpha1.KeyStatus) string {
	s := ""
	if k.PendingKey != nil {
		s += "; key pending"
	}
	if len(k.RetiringKeys) > 0 {
		s += fmt.Sprintf("; %d keys retiring", len(k.RetiringKeys))
	}
	return s
}

// rememberKeys keeps every key the run saw a resource hold, to check later that the replaced
// ones are refused.
func (r *run) rememberKeys(o client.Object) {
	label := r.names.label(o)
	for _, k := range keysOf(o) {
		if k != "" && !slices.Contains(r.keys[label], k) {
			r.keys[label] = append(r.keys[label], k)
		}
	}
}

// describeKeys says, for every Secret of the run that holds a key, whose it is, whether it is
// the key its owner's status names, and what that key may do at the S3 server (list its bucket,
// or its account's buckets); for every resource that names a key, whether its Secret is there;
// and for every key a resource held before, whether it still works.
func (r *run) describeKeys(st state, objs []client.Object) {
	secrets := &corev1.SecretList{}
	if err := r.k8s.List(r.ctx, secrets, client.InNamespace(r.ns)); err != nil {
		r.t.Fatal(err)
	}
	byUID := map[types.UID]client.Object{}
	for _, o := range objs {
		byUID[o.GetUID()] = o
		if keysOf(o) != nil && !hasSecret(secrets.Items, o) {
			st["keys of "+r.names.label(o)] = "no Secret"
		}
	}
	current := map[string]bool{}
	for i := range secrets.Items {
		secret := &secrets.Items[i]
		key := string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID])
		if key == "" {
			continue
		}
		current[key] = true
		line := "unowned; "
		if owner := metav1.GetControllerOf(secret); owner != nil && byUID[owner.UID] != nil {
			o := byUID[owner.UID]
			line = "of " + r.names.label(o) + ", holding another key than status names; "
			if keysOf(o)[0] == key {
				line = "of " + r.names.label(o) + ", holding the key status names; "
			}
		}
		st["secret "+secret.Name] = line + r.tryKey(secret)
	}
	for label, keys := range r.keys {
		var working int
		for _, k := range keys {
			if !current[k] && r.keyWorks(k, r.ns) {
				working++
			}
		}
		if working > 0 {
			st["replaced keys of "+label] = fmt.Sprintf("%d still work at the S3 server", working)
		}
	}
}

// hasSecret reports whether o's Secret is among secrets.
func hasSecret(secrets []corev1.Secret, o client.Object) bool {
	for _, s := range secrets {
		if owner := metav1.GetControllerOf(&s); owner != nil && owner.UID == o.GetUID() {
			return true
		}
	}
	return false
}

// tryKey says what the key in a Secret may do: list the bucket the Secret names (a
// BucketAccess's), each bucket it names under its prefix (a BucketAccess over several), or its
// account's buckets (a Contract's).
func (r *run) tryKey(secret *corev1.Secret) string {
	c := localenv.NewS3Client(r.stk.S3.Direct, r.stk.S3.Region,
		string(secret.Data[storagev1alpha1.SecretKeyAccessKeyID]), string(secret.Data[storagev1alpha1.SecretKeySecretAccessKey]))
	list := func(bucket, prefix string) string {
		_, err := c.ListObjectsV2(r.ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix), MaxKeys: aws.Int32(1)})
		return outcome(err)
	}
	if bucket := string(secret.Data[storagev1alpha1.SecretKeyBucketName]); bucket != "" {
		return "listing its bucket: " + list(bucket, "")
	}
	if named := namedBuckets(secret.Data); len(named) > 0 {
		var tries []string
		for _, n := range named {
			tries = append(tries, fmt.Sprintf("listing %s: %s", n.variable, list(n.bucket, n.prefix)))
		}
		return strings.Join(tries, ", ")
	}
	_, err := c.ListBuckets(r.ctx, &s3.ListBucketsInput{})
	return "listing buckets: " + outcome(err)
}

// namedBucket is one bucket a list form's Secret names: its variable, bucket and prefix.
type namedBucket struct{ variable, bucket, prefix string }

// namedBuckets are the buckets of a list form's env Secret (BUCKET_NAME_<NAME>, with
// BUCKET_PREFIX_<NAME>), by variable.
func namedBuckets(data map[string][]byte) []namedBucket {
	var out []namedBucket
	for k, v := range data {
		name, ok := strings.CutPrefix(k, storagev1alpha1.SecretKeyBucketName+"_")
		if !ok {
			continue
		}
		out = append(out, namedBucket{variable: k, bucket: string(v),
			prefix: string(data[storagev1alpha1.SecretKeyBucketPrefix+"_"+name])})
	}
	slices.SortFunc(out, func(a, b namedBucket) int { return strings.Compare(a.variable, b.variable) })
	return out
}

// describeChildren says which of the objects an Application makes exist.
func (r *run) describeChildren(st state) {
	for _, o := range r.list(&appsv1.DeploymentList{}, &corev1.ServiceList{}, &batchv1.CronJobList{}, &batchv1.JobList{}) {
		st[kindOf(o)+" "+o.GetName()] = "exists"
	}
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if code := objectstore.ErrorCode(err); code != "" {
		return code
	}
	return "error"
}

// describeProvider says, for every resource the provider has records for, what they are:
// the contracts sold for each Contract and the principals made for each BucketAccess, with
// how many keys each has in effect.
func (r *run) describeProvider(st state) {
	contracts, err := r.stk.ContractAPI.Contracts()
	if err != nil {
		r.t.Fatal(err)
	}
	principals, err := r.stk.ContractAPI.Principals()
	if err != nil {
		r.t.Fatal(err)
	}
	mine := map[string][]string{}
	for _, c := range contracts {
		if l, ok := r.names.labelOf(c.IdempotencyKey); ok {
			mine["provider contracts of "+l] = append(mine["provider contracts of "+l], c.State)
		}
	}
	for _, p := range principals {
		if l, ok := r.names.labelOf(p.IdempotencyKey); ok {
			mine["provider principals of "+l] = append(mine["provider principals of "+l], fmt.Sprintf("%s with %d keys", p.State, len(p.AccessKeyIDs)))
		}
	}
	for k, v := range mine {
		sort.Strings(v)
		st[k] = strings.Join(v, ", ")
	}
}

// labelOf is the label of a UID the namer knows.
func (n *namer) labelOf(uid string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	l, ok := n.labels[uid]
	return l, ok
}

// describeBuckets says, for every bucket of the run at the S3 server, its owner, settings and
// objects, as the server's administrator reads them, a line each.
func (r *run) describeBuckets(st state) {
	out, err := r.admin().ListBuckets(r.ctx, &s3.ListBucketsInput{})
	if err != nil {
		r.t.Fatal(err)
	}
	for _, b := range out.Buckets {
		name := aws.ToString(b.Name)
		if !strings.HasPrefix(name, r.ns+"-") {
			continue
		}
		for what, v := range r.describeBucket(name) {
			v = r.names.normalize(v)
			// In canonical form again: the order of principals was that of their ids.
			if canon, err := bucketpolicy.CanonicalPolicy([]byte(v)); what == "policy" && err == nil {
				v = canon
			}
			st["s3 bucket "+strings.TrimPrefix(name, r.ns+"-")+" "+what] = v
		}
	}
}

// describeBucket is a bucket's ACL, policy, CORS rules, tags and objects.
func (r *run) describeBucket(name string) map[string]string {
	store := r.lab.store
	acl, aclErr := store.ACL(r.ctx, name)
	policy, policyErr := store.Policy(r.ctx, name)
	cors, corsErr := store.CORS(r.ctx, name)
	tags, tagsErr := store.BucketTags(r.ctx, name)
	objs, objsErr := r.admin().ListObjectsV2(r.ctx, &s3.ListObjectsV2Input{Bucket: aws.String(name)})
	var keys []string
	if objsErr == nil {
		for _, o := range objs.Contents {
			keys = append(keys, fmt.Sprintf("%s(%d)", aws.ToString(o.Key), aws.ToInt64(o.Size)))
		}
	}
	return map[string]string{
		"acl":     fmt.Sprintf("%+v%s", acl, errText(aclErr)),
		"policy":  policy + errText(policyErr),
		"cors":    fmt.Sprintf("%+v%s", cors, errText(corsErr)),
		"tags":    fmt.Sprintf("%v%s", tags, errText(tagsErr)),
		"objects": fmt.Sprintf("%v%s", keys, errText(objsErr)),
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return " (" + outcome(err) + ")"
}
