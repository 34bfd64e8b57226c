package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	osmcredentials "github.com/object-storage-manager/object-storage-manager/internal/credentials"
)

// Reasons the plugin gives for what has no Ready condition of its own. Each has a section of
// the same name in docs/troubleshooting.md.
const (
	// reasonNotFound: an object the tree names does not exist.
	reasonNotFound = "NotFound"
	// reasonNoStatus: the object has no Ready condition yet: the manager has not seen it.
	reasonNoStatus = "NoStatus"
	// reasonExists and reasonKeysMissing: a credentials Secret with all its keys, or without some.
	reasonExists      = "Exists"
	reasonKeysMissing = "KeysMissing"
)

// troubleshooting is where a reason is explained, from the root of the repository.
const troubleshooting = "docs/troubleshooting.md"

// node is one object of a trace: what it is, whether it is Ready and why, and the objects
// related to it.
type node struct {
	ref ref
	// ready is the Ready condition's status ("True", "False", "Unknown"), or "-" for what
	// has none (a Secret, an object that does not exist).
	ready   string
	reason  string
	message string
	// ok: Ready is True, or the Secret holds its keys.
	ok bool
	// needs are what this object needs to be Ready (a Bucket's Contract); others are what
	// comes from it or uses it (a Contract's Secret, a Bucket's BucketAccesses).
	needs, others []*node
}

func (n *node) children() []*node { return append(slices.Clip(n.needs), n.others...) }

// firstNotReady is the object to look at first: what n needs, before n, before what uses n.
// Of a Bucket that waits for its Contract, that is the Contract.
func firstNotReady(n *node) *node {
	for _, c := range n.needs {
		if f := firstNotReady(c); f != nil {
			return f
		}
	}
	if !n.ok {
		return n
	}
	for _, c := range n.others {
		if f := firstNotReady(c); f != nil {
			return f
		}
	}
	return nil
}

// tracer reads the objects of one namespace.
type tracer struct {
	ctx       context.Context
	c         client.Reader
	namespace string
}

// trace builds the tree of what relates to r.
func (t *tracer) trace(r ref) (*node, error) {
	switch r.Kind {
	case kindContract:
		return t.contractTree(r.Name)
	case kindBucket:
		var b storagev1alpha1.Bucket
		if err := t.get(r.Name, &b); err != nil {
			return nil, err
		}
		return t.bucket(&b, true, true)
	case kindBucketAccess:
		return t.accessTree(r.Name)
	case kindApplication:
		return t.applicationTree(r.Name)
	}
	return nil, fmt.Errorf("cannot trace %s", r.Kind)
}

func (t *tracer) get(name string, obj client.Object) error {
	return t.c.Get(t.ctx, client.ObjectKey{Namespace: t.namespace, Name: name}, obj)
}

// lookup gets name into obj, or returns the node of an object that does not exist. Any other
// error is returned.
func (t *tracer) lookup(k kind, name string, obj client.Object) (*node, error) {
	err := t.get(name, obj)
	if apierrors.IsNotFound(err) {
		return &node{ref: ref{k, name}, ready: "-", reason: reasonNotFound,
			message: fmt.Sprintf("%s %s does not exist in namespace %s", k, name, t.namespace)}, nil
	}
	return nil, err
}

// conditionNode is the node of an object from its conditions.
func conditionNode(k kind, obj client.Object, conds []metav1.Condition) *node {
	n := &node{ref: ref{k, obj.GetName()}, ready: "-", reason: reasonNoStatus,
		message: "No Ready condition yet: the manager has not reported on it (is it running?)"}
	if c := meta.FindStatusCondition(conds, storagev1alpha1.ReadyCondition); c != nil {
		n.ready, n.reason, n.message, n.ok = string(c.Status), c.Reason, c.Message, c.Status == metav1.ConditionTrue
	}
	if b := meta.FindStatusCondition(conds, storagev1alpha1.DeletionBlockedCondition); b != nil && b.Status == metav1.ConditionTrue {
		n.message = fmt.Sprintf("%s: DeletionBlocked (%s): %s", strings.TrimSuffix(n.message, " (see DeletionBlocked)"), b.Reason, b.Message)
	}
	return n
}

// secret is the node of a credentials Secret, which must hold keys.
func (t *tracer) secret(name, writer string, keys ...string) (*node, error) {
	var s corev1.Secret
	if missing, err := t.lookup(kindSecret, name, &s); missing != nil || err != nil {
		if missing != nil {
			missing.message += fmt.Sprintf("; %s writes it once it has a key", writer)
		}
		return missing, err
	}
	var absent []string
	for _, k := range keys {
		if len(s.Data[k]) == 0 {
			absent = append(absent, k)
		}
	}
	if len(absent) > 0 {
		return &node{ref: ref{kindSecret, name}, ready: "-", reason: reasonKeysMissing,
			message: fmt.Sprintf("Lacks %s; %s writes them", strings.Join(absent, ", "), writer)}, nil
	}
	return &node{ref: ref{kindSecret, name}, ready: "-", reason: reasonExists, ok: true,
		message: "Holds " + strings.Join(keys, ", ")}, nil
}

var contractKeys = []string{
	storagev1alpha1.SecretKeyAccessKeyID, storagev1alpha1.SecretKeySecretAccessKey,
	storagev1alpha1.SecretKeyEndpointURL, storagev1alpha1.SecretKeyRegion,
}

// accessKeys are the keys a one-Bucket BucketAccess's Secret holds in the env format.
var accessKeys = append(slices.Clip(contractKeys), storagev1alpha1.SecretKeyBucketName)

// accessKeysOf are the keys a's Secret holds in the env format: accessKeys for one Bucket,
// BUCKET_NAME_<NAME> for each of several.
func accessKeysOf(a *storagev1alpha1.BucketAccess) []string {
	if len(a.Spec.Buckets) == 0 {
		return accessKeys
	}
	keys := slices.Clip(contractKeys)
	for _, b := range a.Spec.Buckets {
		keys = append(keys, osmcredentials.EnvBucketNameKey(string(b.Name)))
	}
	return keys
}

// contract is the node of a Contract and its Secret.
func (t *tracer) contract(name string) (*node, *storagev1alpha1.Contract, error) {
	var c storagev1alpha1.Contract
	if missing, err := t.lookup(kindContract, name, &c); missing != nil || err != nil {
		return missing, nil, err
	}
	n := conditionNode(kindContract, &c, c.Status.Conditions)
	keys, writer := contractKeys, "Contract "+c.Name
	if c.Spec.Credentials != nil {
		// An account the user has: the Secret is the user's, and its endpoint and region may be
		// in the spec instead.
		keys, writer = contractKeys[:2], "its owner (the Secret of spec.credentials)"
	}
	s, err := t.secret(secretName(c.Status.SecretName, c.SecretNameOrDefault()), writer, keys...)
	if err != nil {
		return nil, nil, err
	}
	n.others = append(n.others, s)
	return n, &c, nil
}

func (t *tracer) contractTree(name string) (*node, error) {
	n, c, err := t.contract(name)
	if err != nil || c == nil {
		return n, err
	}
	var buckets storagev1alpha1.BucketList
	if err := t.c.List(t.ctx, &buckets, client.InNamespace(t.namespace)); err != nil {
		return nil, err
	}
	for i := range buckets.Items {
		b := &buckets.Items[i]
		if b.Spec.ContractName != name {
			continue
		}
		bn, err := t.bucket(b, false, true)
		if err != nil {
			return nil, err
		}
		n.others = append(n.others, bn)
	}
	return n, nil
}

// bucket is the node of a Bucket; withContract adds its Contract (and the Contract's Secret),
// withUsers its BucketAccesses and the Applications that link it.
func (t *tracer) bucket(b *storagev1alpha1.Bucket, withContract, withUsers bool) (*node, error) {
	n := conditionNode(kindBucket, b, b.Status.Conditions)
	if withContract {
		c, _, err := t.contract(b.Spec.ContractName)
		if err != nil {
			return nil, err
		}
		n.needs = append(n.needs, c)
	}
	if !withUsers {
		return n, nil
	}
	apps, err := t.applicationsLinking(b.Name)
	if err != nil {
		return nil, err
	}
	accesses, err := t.accessesOf(b.Name)
	if err != nil {
		return nil, err
	}
	// An Application's own BucketAccesses go under it; the others under the Bucket.
	byApp := map[string][]*storagev1alpha1.BucketAccess{}
	for _, a := range accesses {
		if owner := ownerApplication(a); owner != "" && slices.ContainsFunc(apps, func(p *paasv1alpha1.Application) bool { return p.Name == owner }) {
			byApp[owner] = append(byApp[owner], a)
			continue
		}
		an, err := t.access(a)
		if err != nil {
			return nil, err
		}
		n.others = append(n.others, an)
	}
	for _, p := range apps {
		pn := conditionNode(kindApplication, p, p.Status.Conditions)
		for _, a := range byApp[p.Name] {
			an, err := t.access(a)
			if err != nil {
				return nil, err
			}
			pn.needs = append(pn.needs, an)
		}
		n.others = append(n.others, pn)
	}
	return n, nil
}

// access is the node of a BucketAccess and its Secret.
func (t *tracer) access(a *storagev1alpha1.BucketAccess) (*node, error) {
	n := conditionNode(kindBucketAccess, a, a.Status.Conditions)
	s, err := t.secret(secretName(a.Status.SecretName, a.SecretNameOrDefault()), "BucketAccess "+a.Name, accessKeysOf(a)...)
	if err != nil {
		return nil, err
	}
	n.others = append(n.others, s)
	return n, nil
}

// neededBucket is the node of Bucket name as something the tree needs: one that says it does
// not exist, or the Bucket read and drawn with what it needs in turn.
func (t *tracer) neededBucket(name string) (*node, error) {
	var b storagev1alpha1.Bucket
	bn, err := t.lookup(kindBucket, name, &b)
	if err != nil || bn != nil {
		return bn, err
	}
	return t.bucket(&b, true, false)
}

func (t *tracer) accessTree(name string) (*node, error) {
	var a storagev1alpha1.BucketAccess
	if err := t.get(name, &a); err != nil {
		return nil, err
	}
	n, err := t.access(&a)
	if err != nil {
		return nil, err
	}
	for _, b := range a.AccessBuckets() {
		bn, err := t.neededBucket(string(b.Name))
		if err != nil {
			return nil, err
		}
		n.needs = append(n.needs, bn)
	}
	if owner := ownerApplication(&a); owner != "" {
		var p paasv1alpha1.Application
		pn, err := t.lookup(kindApplication, owner, &p)
		if err != nil {
			return nil, err
		}
		if pn == nil {
			pn = conditionNode(kindApplication, &p, p.Status.Conditions)
		}
		n.others = append(n.others, pn)
	}
	return n, nil
}

func (t *tracer) applicationTree(name string) (*node, error) {
	var p paasv1alpha1.Application
	if err := t.get(name, &p); err != nil {
		return nil, err
	}
	n := conditionNode(kindApplication, &p, p.Status.Conditions)
	for _, l := range p.Spec.Buckets {
		bn, err := t.neededBucket(l.Name)
		if err != nil {
			return nil, err
		}
		n.needs = append(n.needs, bn)
	}
	var accesses storagev1alpha1.BucketAccessList
	if err := t.c.List(t.ctx, &accesses, client.InNamespace(t.namespace)); err != nil {
		return nil, err
	}
	for i := range accesses.Items {
		a := &accesses.Items[i]
		if ownerApplication(a) != p.Name {
			continue
		}
		an, err := t.access(a)
		if err != nil {
			return nil, err
		}
		n.needs = append(n.needs, an)
	}
	return n, nil
}

// applicationsLinking are the Applications that link Bucket name, sorted by name.
func (t *tracer) applicationsLinking(bucket string) ([]*paasv1alpha1.Application, error) {
	var apps paasv1alpha1.ApplicationList
	if err := t.c.List(t.ctx, &apps, client.InNamespace(t.namespace)); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil // the paas group is not installed: no Application links anything
		}
		return nil, err
	}
	var out []*paasv1alpha1.Application
	for i := range apps.Items {
		p := &apps.Items[i]
		if slices.ContainsFunc(p.Spec.Buckets, func(l paasv1alpha1.BucketLink) bool { return l.Name == bucket }) {
			out = append(out, p)
		}
	}
	return out, nil
}

// accessesOf are the BucketAccesses of Bucket name, sorted by name.
func (t *tracer) accessesOf(bucket string) ([]*storagev1alpha1.BucketAccess, error) {
	var list storagev1alpha1.BucketAccessList
	if err := t.c.List(t.ctx, &list, client.InNamespace(t.namespace)); err != nil {
		return nil, err
	}
	var out []*storagev1alpha1.BucketAccess
	for i := range list.Items {
		if _, ok := list.Items[i].AccessBucketNamed(bucket); ok {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// ownerApplication is the Application that controls a BucketAccess, "" when none does.
func ownerApplication(a *storagev1alpha1.BucketAccess) string {
	if o := metav1.GetControllerOf(a); o != nil && o.Kind == "Application" && strings.HasPrefix(o.APIVersion, paasv1alpha1.GroupVersion.Group+"/") {
		return o.Name
	}
	return ""
}

// secretName is the Secret status names, or the spec's default before status says.
func secretName(status, byDefault string) string {
	if status != "" {
		return status
	}
	return byDefault
}

// renderTrace writes the tree as a table, the first object not Ready marked with ">", and
// a line that says where to look next.
func renderTrace(w io.Writer, root *node, namespace string) error {
	first := firstNotReady(root)
	t := &table{}
	t.row("  NAME", "READY", "REASON", "MESSAGE")
	var walk func(n *node, prefix, branch string)
	walk = func(n *node, prefix, branch string) {
		mark := "  "
		if n == first {
			mark = "> "
		}
		t.row(mark+prefix+branch+n.ref.String(), n.ready, n.reason, n.message)
		kids := n.children()
		next := prefix
		switch branch {
		case "├─ ":
			next += "│  "
		case "└─ ":
			next += "   "
		}
		for i, c := range kids {
			b := "├─ "
			if i == len(kids)-1 {
				b = "└─ "
			}
			walk(c, next, b)
		}
	}
	walk(root, "", "")
	var out bytes.Buffer
	t.writeTo(&out)
	if first == nil {
		out.WriteString("\nEverything above is Ready.\n")
	} else {
		more := fmt.Sprintf("kubectl -n %s describe %s %s", namespace, strings.ToLower(string(first.ref.Kind)), first.ref.Name)
		if first.reason == reasonNotFound {
			more = fmt.Sprintf("kubectl -n %s get %s", namespace, strings.ToLower(string(first.ref.Kind))+"s")
		}
		fmt.Fprintf(&out, "\n> %s is the first not Ready (%s). More: %s; what to do: %s#%s\n",
			first.ref, first.reason, more, troubleshooting, strings.ToLower(first.reason))
	}
	_, err := w.Write(out.Bytes())
	return err
}
