package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

func TestStatus(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	issued := func(ago time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-ago)} }
	rotating := func(a *storagev1alpha1.BucketAccess, period time.Duration, ago time.Duration, key string) *storagev1alpha1.BucketAccess {
		a.Spec.Rotation = &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: period}}
		a.Status.AccessKeyID, a.Status.KeyIssuedAt = key, issued(ago)
		return a
	}
	inNamespace := func(obj client.Object, namespace string) client.Object {
		obj.SetNamespace(namespace)
		return obj
	}
	notRotatable := contract("single", available)
	notRotatable.Spec.KeyRotation = &storagev1alpha1.KeyRotation{Period: metav1.Duration{Duration: time.Hour}}
	notRotatable.Status.AccessKeyID, notRotatable.Status.KeyIssuedAt = "OSMSINGLE", issued(3*time.Hour)
	notRotatable.Status.Conditions = append(notRotatable.Status.Conditions, metav1.Condition{
		Type: storagev1alpha1.KeyRotationCondition, Status: metav1.ConditionFalse, Reason: "KeyRotationUnsupported"})

	for _, tc := range []struct {
		name      string
		objs      []client.Object
		namespace string
		want      string
	}{{
		name:      "nothing",
		namespace: "",
		want:      "No Contracts, Buckets, BucketAccesses or Applications.\n",
	}, {
		name: "Buckets by reason, keys due, a blocked deletion, per namespace",
		objs: []client.Object{
			contract("demo", available),
			notRotatable,
			bucket("a", "demo", available),
			bucket("b", "demo", available),
			bucket("c", "gold", ready(metav1.ConditionFalse, "ContractNotReady", "")),
			bucket("d", "gold", ready(metav1.ConditionFalse, "ContractNotReady", "")),
			bucket("e", "demo", nil),
			bucket("private", "demo", []metav1.Condition{
				{Type: storagev1alpha1.ReadyCondition, Status: metav1.ConditionFalse, Reason: "Deleting"},
				{Type: storagev1alpha1.DeletionBlockedCondition, Status: metav1.ConditionTrue, Reason: "BucketNotEmpty", Message: "Bucket demo-private still holds 1 object"},
			}),
			rotating(access("soon", "a", available), 24*time.Hour, 20*time.Hour, "OSMSOON"),
			rotating(access("later", "a", available), 30*24*time.Hour, time.Hour, "OSMLATER"),
			access("never", "a", available),
			application("web", available, "a"),
			inNamespace(contract("other", ready(metav1.ConditionFalse, "ContractAPIUnavailable", "")), "team-b"),
		},
		want: `Namespace demo
  KIND           TOTAL   READY   NOT READY
  Contract       2       2
  Bucket         6       2       ContractNotReady 2, Deleting 1, NoStatus 1
  BucketAccess   3       3
  Application    1       1
  Keys due for rotation within 24h:
    Contract/single     key OSMSINGLE, issued 2026-11-25T09:00:00Z, overdue by 2h (spec.keyRotation.period 1h0m0s): KeyRotation False KeyRotationUnsupported
    BucketAccess/soon   key OSMSOON, issued 2026-11-24T16:00:00Z, due in 4h (spec.rotation.period 24h0m0s)
  Deletions blocked:
    Bucket/private   BucketNotEmpty: Bucket demo-private still holds 1 object

Namespace team-b
  KIND       TOTAL   READY   NOT READY
  Contract   1       0       ContractAPIUnavailable 1
`,
	}, {
		name:      "one namespace only",
		namespace: "team-b",
		objs:      []client.Object{contract("demo", available), inNamespace(contract("other", available), "team-b")},
		want: `Namespace team-b
  KIND       TOTAL   READY   NOT READY
  Contract   1       1
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			sums, err := statusReader{c: fakeClient(tc.objs...), namespace: tc.namespace, now: now, within: 24 * time.Hour}.summaries(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := renderStatus(&out, sums, now, 24*time.Hour); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if lines := strings.Count(out.String(), "\n"); lines > 24 {
				t.Errorf("%d lines: status must fit on one screen", lines)
			}
		})
	}
}
