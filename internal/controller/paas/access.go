package paas

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// An Application's workloads never get its Contract's account keys: each link, the backup and
// the restore get the keys of a BucketAccess of their own, which the Application owns, with no
// more access than they need.
//
// The app's pods get every link's key. A backup run gets, besides its own WriteOnly key, a
// ReadOnly key to each Bucket a link may read, to copy the data from, and nothing else: no key
// of a link that may write, so a run cannot change the data, nor delete the backups in the
// backup Bucket. A restore gets, besides the restore's ReadOnly key, the keys of the links that
// may write, to put the data back, and no key of a ReadOnly link.
//
// With spec.authentication ServiceAccount the app's pods get no key: the links share one
// BucketAccess with authentication ServiceAccount, named after the Application, over every
// linked Bucket with the link's access, whose role the Application's own ServiceAccount
// assumes (an SDK takes one AWS_ROLE_ARN per process, so one role covers every link). The
// backup and the restore keep keys of their own: the backup writes the backup Bucket WriteOnly
// under its prefix and reads the same Bucket when a link reaches it, two grants on one Bucket
// that one BucketAccess's spec.buckets cannot hold. With no key of a link to reuse, the backup
// gets a ReadOnly key of its own to each Bucket a link may read, and the restore a key of its
// own, with the link's access, to each Bucket a link may write ("<bucket>-write").

// Suffixes of the BucketAccesses of the backup (WriteOnly: a run puts objects and never lists,
// reads or deletes them), of restores and the operator's listing of status.backups (ReadOnly),
// and of the backup's reads of a Bucket a link reaches ReadWrite ("<bucket>-read", ReadOnly).
const (
	backupAccessSuffix  = "backup"
	restoreAccessSuffix = "restore"
	readAccessSuffix    = "-read"
	writeAccessSuffix   = "-write"
)

// wantedAccess is a BucketAccess an Application needs.
type wantedAccess struct {
	// Name is the BucketAccess; Bucket the Bucket it reaches, with Access.
	Name, Bucket string
	Access       storagev1alpha1.AccessMode
	// Prefix limits it to the objects under it: the backup prefix, for the backup's and the
	// restore's, so their keys cannot touch another Application's backups.
	Prefix string
	// Component labels it as the app's, the backup's or the restore's.
	Component string
	// Buckets, for the links' shared BucketAccess of a keyless Application, are the linked
	// Buckets with their access (Bucket, Access and Prefix are then empty), and ServiceAccount
	// the ServiceAccount whose tokens assume its role.
	Buckets        []storagev1alpha1.AccessBucket
	ServiceAccount string
}

// describe says, for events, what w reaches.
func (w wantedAccess) describe() string {
	if len(w.Buckets) == 0 {
		return fmt.Sprintf("%s access to Bucket %s", w.Access, w.Bucket)
	}
	parts := make([]string, len(w.Buckets))
	for i, b := range w.Buckets {
		parts[i] = fmt.Sprintf("%s to %s", b.Access, b.Name)
	}
	return fmt.Sprintf("a role for ServiceAccount %s with %s", w.ServiceAccount, strings.Join(parts, ", "))
}

// authentication is the authentication w asks for.
func (w wantedAccess) authentication() storagev1alpha1.Authentication {
	if w.ServiceAccount != "" {
		return storagev1alpha1.AuthenticationServiceAccount
	}
	return storagev1alpha1.AuthenticationKey
}

// sharedAccessName is the links' shared BucketAccess of a keyless Application, and its
// ServiceAccount: the Application's own name (hashed past 63 characters, as accessName does).
func sharedAccessName(app string) string {
	if len(app) <= validation.LabelValueMaxLength {
		return app
	}
	return hashedName(app)
}

// accessName is the BucketAccess "<app>-<suffix>", shortened to 63 characters with a hash of
// the whole name when longer: the name is a label value on the BucketAccess's Secret.
func accessName(app, suffix string) string {
	name := app + "-" + suffix
	if len(name) <= validation.LabelValueMaxLength {
		return name
	}
	return hashedName(name)
}

// hashedName is name cut to leave room for "-" and ten hex digits of its hash, which end it.
func hashedName(name string) string {
	sum := sha256.Sum256([]byte(name))
	h := hex.EncodeToString(sum[:])[:10]
	cut := min(len(name), validation.LabelValueMaxLength-len(h)-1)
	return strings.TrimRight(name[:cut], "-.") + "-" + h
}

// wantedAccesses are the BucketAccesses app needs, in the order its environment uses them: one
// per link, "<app>-<bucket>" with the link's access (keyless, one "<app>" that all the links
// share, unless links is false: the operator refuses them); with a backup into a linked
// Bucket, a WriteOnly one "<app>-backup" and a ReadOnly one "<app>-restore" of that Bucket,
// and a ReadOnly one "<app>-<bucket>-read" for each Bucket a link reaches ReadWrite, which the
// backup reads with (a ReadOnly link's Bucket it reads with the link's own key; the restore's
// key reaches only the backup prefix). Keyless, the links have no key to lend: the backup gets
// a read one for every link that may read, and the restore "<app>-<bucket>-write", with the
// link's access, for every link that may write. A backup the operator refuses (backup false)
// gets none. A link keeps its name when another would have it: the backup's, the restore's, a
// read or a write one then gets a hashed name.
func wantedAccesses(app *paasv1alpha1.Application, links, backup bool) []wantedAccess {
	wanted := make([]wantedAccess, 0, len(app.Spec.Buckets)+2)
	taken := map[string]bool{}
	keyless := app.Keyless()
	switch {
	case keyless && links && len(app.Spec.Buckets) > 0:
		shared := wantedAccess{Name: sharedAccessName(app.Name), Component: ComponentApp, ServiceAccount: app.Name}
		for _, l := range app.Spec.Buckets {
			shared.Buckets = append(shared.Buckets, storagev1alpha1.AccessBucket{Name: storagev1alpha1.BucketName(l.Name), Access: l.AccessOrDefault()})
		}
		taken[shared.Name] = true
		wanted = append(wanted, shared)
	case !keyless:
		for _, l := range app.Spec.Buckets {
			name := accessName(app.Name, l.Name)
			taken[name] = true
			wanted = append(wanted, wantedAccess{Name: name, Bucket: l.Name, Access: l.AccessOrDefault(), Component: ComponentApp})
		}
	}
	b := app.Spec.Backup
	if !backup || b == nil || !linksBucket(app.Spec.Buckets, b.Bucket) {
		return wanted
	}
	more := []wantedAccess{
		{Name: backupAccessSuffix, Bucket: b.Bucket, Access: storagev1alpha1.AccessWriteOnly, Prefix: app.BackupPrefixOrDefault(), Component: ComponentBackup},
		{Name: restoreAccessSuffix, Bucket: b.Bucket, Access: storagev1alpha1.AccessReadOnly, Prefix: app.BackupPrefixOrDefault(), Component: ComponentRestore},
	}
	for _, l := range app.Spec.Buckets {
		if l.AccessOrDefault() == storagev1alpha1.AccessReadWrite || (keyless && l.AccessOrDefault() == storagev1alpha1.AccessReadOnly) {
			more = append(more, wantedAccess{Name: l.Name + readAccessSuffix, Bucket: l.Name, Access: storagev1alpha1.AccessReadOnly, Component: ComponentBackup})
		}
	}
	for _, l := range app.Spec.Buckets {
		if keyless && l.AccessOrDefault() != storagev1alpha1.AccessReadOnly {
			more = append(more, wantedAccess{Name: l.Name + writeAccessSuffix, Bucket: l.Name, Access: l.AccessOrDefault(), Component: ComponentRestore})
		}
	}
	for _, w := range more {
		suffix := w.Name
		w.Name = accessName(app.Name, suffix)
		if taken[w.Name] {
			w.Name = hashedName(app.Name + "-" + suffix + "-" + suffix)
		}
		taken[w.Name] = true
		wanted = append(wanted, w)
	}
	return wanted
}

// isBackupRead says whether w is one of the backup's ReadOnly BucketAccesses.
func (w wantedAccess) isBackupRead() bool {
	return w.Component == ComponentBackup && w.Access == storagev1alpha1.AccessReadOnly
}

// isRestoreWrite says whether w is one of the restore's keys to a link that may write.
func (w wantedAccess) isRestoreWrite() bool {
	return w.Component == ComponentRestore && w.Access != storagev1alpha1.AccessReadOnly
}

// accessState is what one pass saw of a BucketAccess.
type accessState struct {
	// Name is the BucketAccess, UID its uid.
	Name string
	UID  string
	// SecretName is the Secret that holds its key, AccessKeyID the key's public half: both
	// from its status, set once a key is in the Secret. A keyless one has RoleARN instead,
	// once the Secret holds it.
	SecretName, AccessKeyID, RoleARN string
	// Keyless: it has a role, and no key (authentication ServiceAccount).
	Keyless bool
	// Usable: a key is in the Secret, so pods can be given it.
	Usable bool
	// Ready: Usable, and the BucketAccess is Ready for its current spec (the key works).
	Ready bool
	// Problem says, for people, why it is not Ready; Reason is the reason of its Ready
	// condition then ("" when it has none).
	Problem, Reason string
}

// credentialID names the credentials in its Secret: the key's id, or the role's ARN.
func (a accessState) credentialID() string {
	if a.Keyless {
		return a.RoleARN
	}
	return a.AccessKeyID
}

// observeAccess reads what a BucketAccess says of its key.
func observeAccess(ba *storagev1alpha1.BucketAccess) accessState {
	st := accessState{Name: ba.Name, UID: string(ba.UID), SecretName: ba.Status.SecretName, AccessKeyID: ba.Status.AccessKeyID,
		RoleARN: ba.Status.RoleARN, Keyless: ba.Keyless()}
	ready := meta.FindStatusCondition(ba.Status.Conditions, storagev1alpha1.ReadyCondition)
	notReady := fmt.Sprintf("BucketAccess %s has no status yet", ba.Name)
	if ready != nil {
		notReady = fmt.Sprintf("BucketAccess %s is not Ready (%s: %s)", ba.Name, ready.Reason, ready.Message)
	}
	switch {
	case !ba.DeletionTimestamp.IsZero():
		st.Problem = fmt.Sprintf("BucketAccess %s is being deleted", ba.Name)
		return st
	case st.SecretName == "" || st.credentialID() == "":
		st.Problem = notReady
		if ready != nil {
			st.Reason = ready.Reason
		}
		return st
	}
	st.Usable = true
	st.Ready = ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == ba.Generation
	switch {
	case st.Ready:
	case ready != nil && ready.Status == metav1.ConditionTrue && ba.MultiBucket():
		st.Problem = fmt.Sprintf("BucketAccess %s has not yet taken its buckets into account", ba.Name)
	case ready != nil && ready.Status == metav1.ConditionTrue:
		st.Problem = fmt.Sprintf("BucketAccess %s has not yet taken its access %s into account", ba.Name, ba.Spec.Access)
	default:
		st.Problem, st.Reason = notReady, ptr.Deref(ready, metav1.Condition{}).Reason
	}
	return st
}

// appAccesses is what one pass saw of an Application's BucketAccesses.
type appAccesses struct {
	// links holds each link's, by Bucket name.
	links map[string]accessState
	// backup and restore are the backup's and the restore's, nil without a backup into a
	// linked Bucket.
	backup, restore *accessState
	// backupReads holds the backup's ReadOnly ones, by Bucket name: one for each Bucket that a
	// link reaches ReadWrite (keyless: that a link may read).
	backupReads map[string]accessState
	// restoreWrites holds, for a keyless Application, the restore's keys to the Buckets that a
	// link may write, by Bucket name.
	restoreWrites map[string]accessState
	// keyless: the links share one BucketAccess with a role and no key (spec.authentication
	// ServiceAccount), so the backup and the restore have no link key to use.
	keyless bool
}

// syncAccesses makes the BucketAccesses app needs, deletes those it owns and no longer needs,
// and returns what each wanted one says. buckets are the linked Buckets that exist, by name:
// admission refuses a BucketAccess for a Bucket that does not exist or is being deleted, so
// none is made for one until it is there (one made before is kept and kept up to date).
func (k applicationKind) syncAccesses(ctx context.Context, app *paasv1alpha1.Application, buckets map[string]*storagev1alpha1.Bucket,
	links, backup bool) (appAccesses, error) {
	wanted := wantedAccesses(app, links, backup)
	out := appAccesses{links: make(map[string]accessState, len(app.Spec.Buckets)), backupReads: map[string]accessState{},
		restoreWrites: map[string]accessState{}, keyless: app.Keyless()}
	states := make(map[string]bool, len(wanted))
	for _, w := range wanted {
		missing := missingBucket(w, buckets)
		ba, err := k.applyAccess(ctx, app, w, missing == "")
		st := accessState{Name: w.Name, Problem: fmt.Sprintf("BucketAccess %s waits for Bucket %s", w.Name, missing)}
		switch {
		case errors.Is(err, errReplaced):
			st.Problem = fmt.Sprintf("BucketAccess %s is being replaced: its authentication or form cannot change", w.Name)
		case err != nil:
			return appAccesses{}, err
		case ba != nil:
			st = observeAccess(ba)
		}
		states[w.Name] = true
		out.record(w, st)
	}

	var owned storagev1alpha1.BucketAccessList
	if err := k.List(ctx, &owned, client.InNamespace(app.Namespace),
		client.MatchingLabels{LabelInstance: app.Name, LabelManagedBy: ManagedBy}); err != nil {
		return appAccesses{}, fmt.Errorf("listing the BucketAccesses of the Application: %w", err)
	}
	for i := range owned.Items {
		ba := &owned.Items[i]
		if _, ok := states[ba.Name]; ok || !metav1.IsControlledBy(ba, app) || !ba.DeletionTimestamp.IsZero() {
			continue
		}
		if err := k.releaseAccess(ctx, app, ba); err != nil {
			return appAccesses{}, err
		}
		if err := k.deleteOwned(ctx, app, ba, "BucketAccess", unwantedBecause(app, ba)); err != nil {
			return appAccesses{}, err
		}
	}
	return out, nil
}

// record files st, what a pass saw of the wanted BucketAccess w, where the steps look for it.
func (a *appAccesses) record(w wantedAccess, st accessState) {
	switch {
	case w.Component == ComponentApp && len(w.Buckets) > 0:
		for _, b := range w.Buckets {
			a.links[string(b.Name)] = st
		}
	case w.Component == ComponentApp:
		a.links[w.Bucket] = st
	case w.isBackupRead():
		a.backupReads[w.Bucket] = st
	case w.isRestoreWrite():
		a.restoreWrites[w.Bucket] = st
	case w.Component == ComponentBackup:
		a.backup = &st
	case w.Component == ComponentRestore:
		a.restore = &st
	}
}

// unwantedBecause says, for the event, why app no longer needs its BucketAccess ba.
func unwantedBecause(app *paasv1alpha1.Application, ba *storagev1alpha1.BucketAccess) string {
	component := ba.Labels[LabelComponent]
	switch {
	case component == ComponentApp && ba.Keyless() != app.Keyless():
		return fmt.Sprintf("the Application's spec.authentication is now %s", authenticationOf(app))
	case component == ComponentApp && ba.MultiBucket():
		return "the Application links no Bucket with spec.authentication ServiceAccount"
	case component == ComponentApp:
		return fmt.Sprintf("the Application no longer links Bucket %s", ba.Spec.Bucket)
	case component == ComponentBackup && ba.Spec.Access == storagev1alpha1.AccessReadOnly:
		return fmt.Sprintf("the backup no longer reads Bucket %s with a key of its own", ba.Spec.Bucket)
	case component == ComponentRestore && ba.Spec.Access != storagev1alpha1.AccessReadOnly:
		return fmt.Sprintf("the restore no longer writes Bucket %s with a key of its own", ba.Spec.Bucket)
	}
	return fmt.Sprintf("the Application no longer backs up into Bucket %s", ba.Spec.Bucket)
}

// errReplaced says that a BucketAccess of the Application is being deleted, to be made again
// with an authentication or form it cannot change to.
var errReplaced = errors.New("the BucketAccess is being replaced")

// missingBucket is the Bucket of w that does not exist or is being deleted, "" when all are
// there.
func missingBucket(w wantedAccess, buckets map[string]*storagev1alpha1.Bucket) string {
	names := []string{w.Bucket}
	if len(w.Buckets) > 0 {
		names = names[:0]
		for _, b := range w.Buckets {
			names = append(names, string(b.Name))
		}
	}
	for _, n := range names {
		if b := buckets[n]; b == nil || !b.DeletionTimestamp.IsZero() {
			return n
		}
	}
	return ""
}

// authenticationOf is spec.authentication as defaulted.
func authenticationOf(app *paasv1alpha1.Application) storagev1alpha1.Authentication {
	if app.Keyless() {
		return storagev1alpha1.AuthenticationServiceAccount
	}
	return storagev1alpha1.AuthenticationKey
}

// applyAccess creates the BucketAccess w (when create is set) or brings its spec in line with a
// patch, and returns it as it stands, nil when there is none. It never takes over a
// BucketAccess that belongs to something else. Its spec.secretName (which its webhook
// defaults) and spec.rotation are left to whoever set them. One of its own whose
// authentication or form (spec.bucket or spec.buckets) is not w's, neither of which can
// change, is released and deleted, and made again once gone.
func (k applicationKind) applyAccess(ctx context.Context, app *paasv1alpha1.Application, w wantedAccess, create bool) (*storagev1alpha1.BucketAccess, error) {
	ba := &storagev1alpha1.BucketAccess{}
	err := k.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: w.Name}, ba)
	switch {
	case apierrors.IsNotFound(err) && !create:
		return nil, nil
	case apierrors.IsNotFound(err):
		ba = &storagev1alpha1.BucketAccess{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: w.Name}}
		mutateAccess(ba, app, w)
		if err := controllerutil.SetControllerReference(app, ba, k.Scheme()); err != nil {
			return nil, err
		}
		if err := k.Create(ctx, ba); err != nil {
			return nil, fmt.Errorf("creating BucketAccess %q: %w", w.Name, err)
		}
		logf.FromContext(ctx).Info("Created BucketAccess", "object", klog.KObj(ba), "access", w.describe())
		k.Recorder.Eventf(app, ba, corev1.EventTypeNormal, "BucketAccessCreated", "Create",
			"Created BucketAccess %s: %s", ba.Name, w.describe())
		return ba, nil
	case err != nil:
		return nil, fmt.Errorf("reading BucketAccess %q: %w", w.Name, err)
	case !metav1.IsControlledBy(ba, app):
		return nil, &foreignError{kind: "BucketAccess", name: w.Name}
	case ba.Keyless() != (w.authentication() == storagev1alpha1.AuthenticationServiceAccount) || ba.MultiBucket() != (len(w.Buckets) > 0):
		if !ba.DeletionTimestamp.IsZero() {
			return nil, errReplaced
		}
		if err := k.releaseAccess(ctx, app, ba); err != nil {
			return nil, err
		}
		if err := k.deleteOwned(ctx, app, ba, "BucketAccess", "its authentication or form cannot change; it is made again"); err != nil {
			return nil, err
		}
		return nil, errReplaced
	}
	before := ba.DeepCopy()
	mutateAccess(ba, app, w)
	if apiequality.Semantic.DeepEqual(before, ba) {
		return ba, nil
	}
	if err := k.Patch(ctx, ba, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, fmt.Errorf("updating BucketAccess %q: %w", w.Name, err)
	}
	logf.FromContext(ctx).Info("Updated BucketAccess", "object", klog.KObj(ba), "access", w.describe())
	k.Recorder.Eventf(app, ba, corev1.EventTypeNormal, "BucketAccessUpdated", "Update",
		"Updated BucketAccess %s to %s", ba.Name, w.describe())
	return ba, nil
}

// releaseAccess tells a BucketAccess the Application no longer needs before deleting it: made
// for the Application, its deletion would otherwise wait for the Application to go, and a link
// added again would wait for it for ever. Marked first, so a pass that stops between the two
// finds it unwanted and deletes it then.
func (k applicationKind) releaseAccess(ctx context.Context, app *paasv1alpha1.Application, ba *storagev1alpha1.BucketAccess) error {
	if ba.Annotations[storagev1alpha1.ReleasedAnnotation] == string(app.UID) {
		return nil
	}
	before := ba.DeepCopy()
	metav1.SetMetaDataAnnotation(&ba.ObjectMeta, storagev1alpha1.ReleasedAnnotation, string(app.UID))
	if err := k.Patch(ctx, ba, client.MergeFrom(before)); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

// mutateAccess sets what the Application owns of a BucketAccess: its labels, Bucket, access
// and prefix, or its Buckets, and its authentication. A BucketAccess wanted again is no longer
// released.
func mutateAccess(ba *storagev1alpha1.BucketAccess, app *paasv1alpha1.Application, w wantedAccess) {
	delete(ba.Annotations, storagev1alpha1.ReleasedAnnotation)
	setLabels(&ba.Labels, app, w.Component)
	ba.Spec.Bucket = storagev1alpha1.BucketName(w.Bucket)
	ba.Spec.Access = w.Access
	ba.Spec.Prefix = storagev1alpha1.ObjectPrefix(w.Prefix)
	ba.Spec.Buckets = w.Buckets
	ba.Spec.Authentication = w.authentication()
	ba.Spec.ServiceAccountName = w.ServiceAccount
}

func linksBucket(links []paasv1alpha1.BucketLink, name string) bool {
	for _, l := range links {
		if l.Name == name {
			return true
		}
	}
	return false
}
