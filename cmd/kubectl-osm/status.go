package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// summary is what status shows of one namespace.
type summary struct {
	namespace string
	// kinds counts each kind's objects by Ready: "Ready", or the reason it is not.
	kinds map[kind]map[string]int
	// due are keys whose rotation is due within the window, or overdue.
	due []dueKey
	// blocked are Buckets whose deletion waits on the user (DeletionBlocked=True).
	blocked []blockedDeletion
}

type dueKey struct {
	ref      ref
	key      string
	issued   time.Time
	due      time.Time
	field    string
	period   time.Duration
	rotation string // the KeyRotation condition, when it is False or a rotation is under way
}

type blockedDeletion struct {
	ref     ref
	reason  string
	message string
}

// statusReader lists what status summarises.
type statusReader struct {
	c client.Reader
	// namespace is "" for every namespace.
	namespace string
	now       time.Time
	within    time.Duration
}

func (s statusReader) summaries(ctx context.Context) ([]*summary, error) {
	var opts []client.ListOption
	if s.namespace != "" {
		opts = append(opts, client.InNamespace(s.namespace))
	}
	var (
		contracts storagev1alpha1.ContractList
		buckets   storagev1alpha1.BucketList
		accesses  storagev1alpha1.BucketAccessList
		apps      paasv1alpha1.ApplicationList
	)
	for _, l := range []client.ObjectList{&contracts, &buckets, &accesses} {
		if err := s.c.List(ctx, l, opts...); err != nil {
			return nil, err
		}
	}
	if err := s.c.List(ctx, &apps, opts...); err != nil && !meta.IsNoMatchError(err) {
		return nil, err
	}

	byNamespace := map[string]*summary{}
	get := func(ns string) *summary {
		if byNamespace[ns] == nil {
			byNamespace[ns] = &summary{namespace: ns, kinds: map[kind]map[string]int{}}
		}
		return byNamespace[ns]
	}
	count := func(k kind, obj client.Object, conds []metav1.Condition) *summary {
		sum := get(obj.GetNamespace())
		if sum.kinds[k] == nil {
			sum.kinds[k] = map[string]int{}
		}
		sum.kinds[k][readiness(conds)]++
		return sum
	}
	for i := range contracts.Items {
		c := &contracts.Items[i]
		sum := count(kindContract, c, c.Status.Conditions)
		s.addDue(sum, ref{kindContract, c.Name}, &c.Status.KeyStatus, c.Spec.KeyRotation, "spec.keyRotation.period", c.Status.Conditions)
	}
	for i := range buckets.Items {
		b := &buckets.Items[i]
		sum := count(kindBucket, b, b.Status.Conditions)
		if c := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.DeletionBlockedCondition); c != nil && c.Status == metav1.ConditionTrue {
			sum.blocked = append(sum.blocked, blockedDeletion{ref{kindBucket, b.Name}, c.Reason, c.Message})
		}
	}
	for i := range accesses.Items {
		a := &accesses.Items[i]
		sum := count(kindBucketAccess, a, a.Status.Conditions)
		s.addDue(sum, ref{kindBucketAccess, a.Name}, &a.Status.KeyStatus, a.Spec.Rotation, "spec.rotation.period", a.Status.Conditions)
	}
	for i := range apps.Items {
		count(kindApplication, &apps.Items[i], apps.Items[i].Status.Conditions)
	}

	out := make([]*summary, 0, len(byNamespace))
	for _, sum := range byNamespace {
		sort.Slice(sum.due, func(i, j int) bool { return sum.due[i].due.Before(sum.due[j].due) })
		out = append(out, sum)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].namespace < out[j].namespace })
	return out, nil
}

// readiness is "Ready", or the reason an object is not.
func readiness(conds []metav1.Condition) string {
	c := meta.FindStatusCondition(conds, storagev1alpha1.ReadyCondition)
	switch {
	case c == nil:
		return reasonNoStatus
	case c.Status == metav1.ConditionTrue:
		return "Ready"
	}
	return c.Reason
}

// addDue records a key whose rotation period ends within the window (or has ended).
func (s statusReader) addDue(sum *summary, r ref, keys *storagev1alpha1.KeyStatus, rotation *storagev1alpha1.KeyRotation, field string, conds []metav1.Condition) {
	if rotation == nil || keys.KeyIssuedAt == nil {
		return
	}
	due := keys.KeyIssuedAt.Add(rotation.Period.Duration)
	if due.After(s.now.Add(s.within)) {
		return
	}
	d := dueKey{ref: r, key: keys.AccessKeyID, issued: keys.KeyIssuedAt.Time, due: due, field: field, period: rotation.Period.Duration}
	if c := meta.FindStatusCondition(conds, storagev1alpha1.KeyRotationCondition); c != nil &&
		(c.Status != metav1.ConditionTrue || keys.PendingKey != nil) {
		d.rotation = fmt.Sprintf("KeyRotation %s %s", c.Status, c.Reason)
	}
	sum.due = append(sum.due, d)
}

// renderStatus writes one block per namespace.
func renderStatus(w io.Writer, sums []*summary, now time.Time, within time.Duration) error {
	var out bytes.Buffer
	if len(sums) == 0 {
		out.WriteString("No Contracts, Buckets, BucketAccesses or Applications.\n")
	}
	for i, sum := range sums {
		if i > 0 {
			out.WriteString("\n")
		}
		fmt.Fprintf(&out, "Namespace %s\n", sum.namespace)
		t := &table{}
		t.row("  KIND", "TOTAL", "READY", "NOT READY")
		for _, k := range []kind{kindContract, kindBucket, kindBucketAccess, kindApplication} {
			counts := sum.kinds[k]
			if len(counts) == 0 {
				continue
			}
			total := 0
			var notReady []string
			for reason, n := range counts {
				total += n
				if reason != "Ready" {
					notReady = append(notReady, fmt.Sprintf("%s %d", reason, n))
				}
			}
			sort.Strings(notReady)
			t.row("  "+string(k), strconv.Itoa(total), strconv.Itoa(counts["Ready"]), strings.Join(notReady, ", "))
		}
		t.writeTo(&out)
		if len(sum.due) > 0 {
			fmt.Fprintf(&out, "  Keys due for rotation within %s:\n", duration.HumanDuration(within))
			t = &table{}
			for _, d := range sum.due {
				when := "due in " + duration.ShortHumanDuration(d.due.Sub(now))
				if !d.due.After(now) {
					when = "overdue by " + duration.ShortHumanDuration(now.Sub(d.due))
				}
				line := fmt.Sprintf("key %s, issued %s, %s (%s %s)", d.key, d.issued.UTC().Format(time.RFC3339), when, d.field, d.period)
				if d.rotation != "" {
					line += ": " + d.rotation
				}
				t.row("    "+d.ref.String(), line)
			}
			t.writeTo(&out)
		}
		if len(sum.blocked) > 0 {
			out.WriteString("  Deletions blocked:\n")
			t = &table{}
			for _, b := range sum.blocked {
				t.row("    "+b.ref.String(), b.reason+": "+b.message)
			}
			t.writeTo(&out)
		}
	}
	_, err := w.Write(out.Bytes())
	return err
}
