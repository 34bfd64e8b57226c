package paas

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
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

// Suffixes of the BucketAccesses of the backup (WriteOnly: a run puts objects and never lists,
// reads or deletes them), of restores and the operator's listing of status.backups (ReadOnly),
// and of the backup's reads of a Bucket a link reaches ReadWrite ("<bucket>-read", ReadOnly).
const (
	backupAccessSuffix  = "backup"
	restoreAccessSuffix = "restore"
	readAccessSuffix    = "-read"
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
// per link, "<app>-<bucket>" with the link's access; with a backup into a linked Bucket, a
// WriteOnly one "<app>-backup" and a ReadOnly one "<app>-restore" of that Bucket, and a
// ReadOnly one "<app>-<bucket>-read" for each Bucket a link reaches ReadWrite, which the backup
// reads with (a ReadOnly link's Bucket it reads with the link's own key; the restore's key
// reaches only the backup prefix). A backup the operator refuses (backup false) gets none. A
// link keeps its name when another would have it: the backup's, the restore's or a read one
// then gets a hashed name.
func wantedAccesses(app *paasv1alpha1.Application, backup bool) []wantedAccess {
	wanted := make([]wantedAccess, 0, len(app.Spec.Buckets)+2)
	taken := map[string]bool{}
	for _, l := range app.Spec.Buckets {
		name := accessName(app.Name, l.Name)
		taken[name] = true
		wanted = append(wanted, wantedAccess{Name: name, Bucket: l.Name, Access: l.AccessOrDefault(), Component: ComponentApp})
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
		if l.AccessOrDefault() == storagev1alpha1.AccessReadWrite {
			more = append(more, wantedAccess{Name: l.Name + readAccessSuffix, Bucket: l.Name, Access: storagev1alpha1.AccessReadOnly, Component: ComponentBackup})
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

// accessState is what one pass saw of a BucketAccess.
type accessState struct {
	// Name is the BucketAccess, UID its uid.
	Name string
	UID  string
	// SecretName is the Secret that holds its key, AccessKeyID the key's public half: both
	// from its status, set once a key is in the Secret.
	SecretName, AccessKeyID string
	// Usable: a key is in the Secret, so pods can be given it.
	Usable bool
	// Ready: Usable, and the BucketAccess is Ready for its current spec (the key works).
	Ready bool
	// Problem says, for people, why it is not Ready.
	Problem string
}

// observeAccess reads what a BucketAccess says of its key.
func observeAccess(ba *storagev1alpha1.BucketAccess) accessState {
	st := accessState{Name: ba.Name, UID: string(ba.UID), SecretName: ba.Status.SecretName, AccessKeyID: ba.Status.AccessKeyID}
	ready := meta.FindStatusCondition(ba.Status.Conditions, storagev1alpha1.ReadyCondition)
	notReady := fmt.Sprintf("BucketAccess %s has no status yet", ba.Name)
	if ready != nil {
		notReady = fmt.Sprintf("BucketAccess %s is not Ready (%s: %s)", ba.Name, ready.Reason, ready.Message)
	}
	switch {
	case !ba.DeletionTimestamp.IsZero():
		st.Problem = fmt.Sprintf("BucketAccess %s is being deleted", ba.Name)
		return st
	case st.SecretName == "" || st.AccessKeyID == "":
		st.Problem = notReady
		return st
	}
	st.Usable = true
	st.Ready = ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == ba.Generation
	switch {
	case st.Ready:
	case ready != nil && ready.Status == metav1.ConditionTrue:
		st.Problem = fmt.Sprintf("BucketAccess %s has not yet taken its access %s into account", ba.Name, ba.Spec.Access)
	default:
		st.Problem = notReady
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
	// link reaches ReadWrite.
	backupReads map[string]accessState
}

// syncAccesses makes the BucketAccesses app needs, deletes those it owns and no longer needs,
// and returns what each wanted one says. buckets are the linked Buckets that exist, by name:
// admission refuses a BucketAccess for a Bucket that does not exist or is being deleted, so
// none is made for one until it is there (one made before is kept and kept up to date).
func (k applicationKind) syncAccesses(ctx context.Context, app *paasv1alpha1.Application, buckets map[string]*storagev1alpha1.Bucket, backup bool) (appAccesses, error) {
	wanted := wantedAccesses(app, backup)
	out := appAccesses{links: make(map[string]accessState, len(app.Spec.Buckets)), backupReads: map[string]accessState{}}
	states := make(map[string]bool, len(wanted))
	for _, w := range wanted {
		b := buckets[w.Bucket]
		ba, err := k.applyAccess(ctx, app, w, b != nil && b.DeletionTimestamp.IsZero())
		if err != nil {
			return appAccesses{}, err
		}
		st := accessState{Name: w.Name, Problem: fmt.Sprintf("BucketAccess %s waits for Bucket %s", w.Name, w.Bucket)}
		if ba != nil {
			st = observeAccess(ba)
		}
		states[w.Name] = true
		switch {
		case w.Component == ComponentApp:
			out.links[w.Bucket] = st
		case w.isBackupRead():
			out.backupReads[w.Bucket] = st
		case w.Component == ComponentBackup:
			out.backup = &st
		case w.Component == ComponentRestore:
			out.restore = &st
		}
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
		why := fmt.Sprintf("the Application no longer links Bucket %s", ba.Spec.Bucket)
		switch {
		case ba.Labels[LabelComponent] == ComponentBackup && ba.Spec.Access == storagev1alpha1.AccessReadOnly:
			why = fmt.Sprintf("the backup no longer reads Bucket %s with a key of its own", ba.Spec.Bucket)
		case ba.Labels[LabelComponent] != ComponentApp:
			why = fmt.Sprintf("the Application no longer backs up into Bucket %s", ba.Spec.Bucket)
		}
		if err := k.releaseAccess(ctx, app, ba); err != nil {
			return appAccesses{}, err
		}
		if err := k.deleteOwned(ctx, app, ba, "BucketAccess", why); err != nil {
			return appAccesses{}, err
		}
	}
	return out, nil
}

// applyAccess creates the BucketAccess w (when create is set) or brings its spec in line with a
// patch, and returns it as it stands, nil when there is none. It never takes over a
// BucketAccess that belongs to something else. Its spec.secretName (which its webhook
// defaults) and spec.rotation are left to whoever set them.
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
		logf.FromContext(ctx).Info("Created BucketAccess", "object", klog.KObj(ba), "bucket", w.Bucket, "access", w.Access)
		k.Recorder.Eventf(app, ba, corev1.EventTypeNormal, "BucketAccessCreated", "Create",
			"Created BucketAccess %s: %s access to Bucket %s", ba.Name, w.Access, w.Bucket)
		return ba, nil
	case err != nil:
		return nil, fmt.Errorf("reading BucketAccess %q: %w", w.Name, err)
	case !metav1.IsControlledBy(ba, app):
		return nil, &foreignError{kind: "BucketAccess", name: w.Name}
	}
	before := ba.DeepCopy()
	mutateAccess(ba, app, w)
	if apiequality.Semantic.DeepEqual(before, ba) {
		return ba, nil
	}
	if err := k.Patch(ctx, ba, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, fmt.Errorf("updating BucketAccess %q: %w", w.Name, err)
	}
	logf.FromContext(ctx).Info("Updated BucketAccess", "object", klog.KObj(ba), "access", w.Access)
	k.Recorder.Eventf(app, ba, corev1.EventTypeNormal, "BucketAccessUpdated", "Update",
		"Updated BucketAccess %s to %s access to Bucket %s", ba.Name, w.Access, w.Bucket)
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
// and prefix. A BucketAccess wanted again is no longer released.
func mutateAccess(ba *storagev1alpha1.BucketAccess, app *paasv1alpha1.Application, w wantedAccess) {
	delete(ba.Annotations, storagev1alpha1.ReleasedAnnotation)
	setLabels(&ba.Labels, app, w.Component)
	ba.Spec.Bucket = storagev1alpha1.BucketName(w.Bucket)
	ba.Spec.Access = w.Access
	ba.Spec.Prefix = storagev1alpha1.ObjectPrefix(w.Prefix)
}

func linksBucket(links []paasv1alpha1.BucketLink, name string) bool {
	for _, l := range links {
		if l.Name == name {
			return true
		}
	}
	return false
}
