package cosidriver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// account is a Contract's account as the driver uses it: where it is, its keys, and how
// policies name things there.
type account struct {
	// ContractID is the provider's id; "" for a Contract over an existing account, which has
	// no principals.
	ContractID       string
	Endpoint, Region string
	VirtualHosted    bool
	// TenantEndpoint: the Contract is over an existing account, whose endpoint a tenant named.
	TenantEndpoint  bool
	AccessKeyID     string
	SecretAccessKey string
	Form            bucketpolicy.Form
}

// errNotReady: the Contract exists but is not ready to be used yet (bought but not yet
// recorded, Secret not yet written); asking again later helps.
type errNotReady struct{ msg string }

func (e *errNotReady) Error() string { return e.msg }

// errNoContract: the class names a Contract that does not exist.
type errNoContract struct{ ref contractRef }

func (e *errNoContract) Error() string {
	return fmt.Sprintf("Contract %s does not exist: the BucketClass's %s and %s must name a Contract (storage.osm.dev)",
		e.ref, ParamContractNamespace, ParamContractName)
}

// account reads the Contract ref names and its account Secret.
func (d *Driver) account(ctx context.Context, ref contractRef) (account, error) {
	var c storagev1alpha1.Contract
	if err := d.kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &c); err != nil {
		if apierrors.IsNotFound(err) {
			return account{}, &errNoContract{ref: ref}
		}
		return account{}, fmt.Errorf("reading Contract %s: %w", ref, err)
	}
	if !c.DeletionTimestamp.IsZero() {
		return account{}, &errNotReady{msg: fmt.Sprintf("Contract %s is being deleted", ref)}
	}
	st := c.Status
	if st.Endpoint == "" || st.SecretName == "" {
		return account{}, &errNotReady{msg: fmt.Sprintf("Contract %s is not ready yet: its status has no endpoint or Secret", ref)}
	}
	var secret corev1.Secret
	if err := d.kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: st.SecretName}, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return account{}, &errNotReady{msg: fmt.Sprintf("the Secret %s of Contract %s does not exist yet", st.SecretName, ref)}
		}
		return account{}, fmt.Errorf("reading the Secret of Contract %s: %w", ref, err)
	}
	key := credentials.KeyOf(&secret)
	if key.AccessKeyID == "" || key.SecretAccessKey == "" {
		return account{}, &errNotReady{msg: fmt.Sprintf("the Secret %s of Contract %s holds no key pair", st.SecretName, ref)}
	}
	a := account{ContractID: st.ContractID, Endpoint: st.Endpoint, Region: st.Region, VirtualHosted: st.VirtualHostedStyle,
		TenantEndpoint: c.Spec.Credentials != nil, AccessKeyID: key.AccessKeyID, SecretAccessKey: key.SecretAccessKey}
	if f := st.BucketPolicy; f != nil {
		a.Form = bucketpolicy.Form{ResourcePrefix: f.ResourcePrefix, Owner: f.OwnerPrincipal, OwnerNeedsAllow: f.OwnerNeedsAllow}
	}
	return a, nil
}

// store is an S3 client with the account's keys.
func (d *Driver) store(a account) objectstore.Store {
	httpClient := d.httpClient
	if a.TenantEndpoint {
		httpClient = d.tenantClient
	}
	return objectstore.New(objectstore.Config{Endpoint: a.Endpoint, Region: a.Region, AccessKeyID: a.AccessKeyID,
		SecretAccessKey: a.SecretAccessKey, VirtualHosted: a.VirtualHosted, HTTPClient: httpClient})
}
