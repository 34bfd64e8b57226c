package paas

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
)

// syncServiceAccount gives a keyless Application (spec.authentication ServiceAccount) a
// ServiceAccount of its own name, whose tokens the links' role trusts, and deletes the one it
// made when the Application has keys. A ServiceAccount of that name that is not the
// Application's is never taken over: the role would trust whatever runs under it.
func (k applicationKind) syncServiceAccount(ctx context.Context, s *appPass) error {
	app := s.app
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: sharedAccessName(app.Name)}}
	if !app.Keyless() {
		return k.deleteOwned(ctx, app, sa, "ServiceAccount", "spec.authentication is Key")
	}
	return k.apply(ctx, app, sa, "ServiceAccount", func() { mutateServiceAccount(sa, app) })
}

// mutateServiceAccount labels sa as the app's, and keeps its token out of every pod that does
// not ask for one: the Application's pods get a projected token of their own audience.
func mutateServiceAccount(sa *corev1.ServiceAccount, app *paasv1alpha1.Application) {
	setLabels(&sa.Labels, app, ComponentApp)
	sa.AutomountServiceAccountToken = ptr.To(false)
}
