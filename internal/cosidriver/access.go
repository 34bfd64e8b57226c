package cosidriver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	cosi "sigs.k8s.io/container-object-storage-interface-spec"

	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// The keys of DriverGrantBucketAccessResponse.credentials that COSI's v1alpha1 sidecar reads
// into the BucketInfo it writes (its pkg/consts): one entry, "s3", with the key pair. The
// endpoint and region ride along for sidecars that read them; v0.1.0's does not.
const (
	credentialsS3          = "s3"
	credentialAccessKeyID  = "accessKeyID"
	credentialAccessSecret = "accessSecretKey" //nolint:gosec // a key's name, not a key
	credentialEndpoint     = "endpoint"
	credentialRegion       = "region"
)

// DriverGrantBucketAccess implements cosi.ProvisionerServer: a principal of the bucket's
// Contract with its own key pair, allowed what the BucketAccessClass asks in the bucket's
// policy. The principal is asked for under an idempotency key of the bucket and req.Name (the
// sidecar's "ba-<BucketAccess UID>"), so a retry gets the same principal and key pair back.
func (d *Driver) DriverGrantBucketAccess(ctx context.Context, req *cosi.DriverGrantBucketAccessRequest) (*cosi.DriverGrantBucketAccessResponse, error) {
	id, err := parseBucketID(req.GetBucketId())
	if err != nil {
		return nil, invalid("%v", err)
	}
	if req.GetName() == "" {
		return nil, invalid("the access has no name")
	}
	if t := req.GetAuthenticationType(); t != cosi.AuthenticationType_Key {
		return nil, invalid("authentication type %s is not supported: this driver hands out keys (authenticationType: Key)", t)
	}
	mode, err := accessClassParams(req.GetParameters())
	if err != nil {
		return nil, invalid("%v", err)
	}
	ctx, acct, unlock, err := d.open(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if acct.ContractID == "" {
		return nil, status.Errorf(codes.FailedPrecondition,
			"Contract %s is an existing account, not one bought through the contract API, so it has no principals to grant access to", id.Contract)
	}
	store := d.store(acct)
	if err := d.ownedOrStatic(ctx, store, id); err != nil {
		return nil, err
	}
	if err := d.recordGrant(ctx, id, req.GetName()); err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	p, _, err := d.principals.CreatePrincipal(ctx, acct.ContractID, grantKey(id, req.GetName()))
	if errors.Is(err, contractclient.ErrPrincipalDeleted) {
		return nil, status.Errorf(codes.FailedPrecondition,
			"access %q to bucket %q was revoked, and a revoked access is not granted again: create a new BucketAccess", req.GetName(), id.Bucket)
	}
	if err != nil {
		return nil, fromError(err)
	}
	if p.Credentials == nil || len(p.PolicyPrincipal) == 0 {
		return nil, status.Errorf(codes.Unavailable, "the contract API answered principal %s without its key pair or its policy name", p.ID)
	}
	grant := bucketpolicy.AccessGrant{Name: p.ID, Access: mode, Principal: p.PolicyPrincipal}
	if err := d.editGrants(ctx, store, acct, id, func(grants []bucketpolicy.AccessGrant) []bucketpolicy.AccessGrant {
		return append(bucketpolicy.WithoutPrincipal(grants, p.PolicyPrincipal), grant)
	}); err != nil {
		return nil, err
	}
	return &cosi.DriverGrantBucketAccessResponse{
		AccountId: p.ID,
		Credentials: map[string]*cosi.CredentialDetails{credentialsS3: {Secrets: map[string]string{
			credentialAccessKeyID:  p.Credentials.AccessKeyID,
			credentialAccessSecret: p.Credentials.SecretAccessKey,
			credentialEndpoint:     acct.Endpoint,
			credentialRegion:       acct.Region,
		}}},
	}, nil
}

// DriverRevokeBucketAccess implements cosi.ProvisionerServer: the principal's statements leave
// the bucket's policy first, then the principal goes with its keys, so no step leaves a
// policy that names a principal the driver no longer knows. An access already revoked is done.
func (d *Driver) DriverRevokeBucketAccess(ctx context.Context, req *cosi.DriverRevokeBucketAccessRequest) (*cosi.DriverRevokeBucketAccessResponse, error) {
	id, err := parseBucketID(req.GetBucketId())
	if err != nil {
		return nil, invalid("%v", err)
	}
	principalID := req.GetAccountId()
	if principalID == "" {
		return nil, invalid("the account id is empty")
	}
	ctx, acct, unlock, err := d.open(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if acct.ContractID == "" {
		return nil, status.Errorf(codes.FailedPrecondition, "Contract %s has no principals, so it granted no access to revoke", id.Contract)
	}
	p, err := d.principals.GetPrincipal(ctx, acct.ContractID, principalID)
	if errors.Is(err, contractclient.ErrNotFound) {
		return &cosi.DriverRevokeBucketAccessResponse{}, nil
	}
	if err != nil {
		return nil, fromError(err)
	}
	if err := d.revoke(ctx, acct, id, p); err != nil {
		return nil, err
	}
	d.log.Info("Revoked access", "bucket", id.Bucket, "contract", id.Contract.String(), "principal", principalID)
	return &cosi.DriverRevokeBucketAccessResponse{}, nil
}

// revoke takes principal p's statements out of the policy of bucket id, then deletes p with its
// keys. The caller holds the bucket's lock.
func (d *Driver) revoke(ctx context.Context, acct account, id bucketID, p contractclient.Principal) error {
	err := d.editGrants(ctx, d.store(acct), acct, id, func(grants []bucketpolicy.AccessGrant) []bucketpolicy.AccessGrant {
		return bucketpolicy.WithoutPrincipal(grants, p.PolicyPrincipal)
	})
	if err != nil && !errors.Is(err, errBucketGone) {
		return err
	}
	if err := d.principals.DeletePrincipal(ctx, acct.ContractID, p.ID); err != nil {
		return fromError(err)
	}
	return nil
}

// grantKey is the idempotency key of the principal for access name to bucket: a hash, since
// the API takes keys of up to 128 characters and a bucket id and name can be longer.
func grantKey(id bucketID, name string) string {
	sum := sha256.Sum256([]byte(id.String() + "\x00" + name))
	return "cosi-" + hex.EncodeToString(sum[:])
}

// ownedOrStatic checks that the bucket exists in the account. Unlike deletion, granting
// access does not ask for the owner tag: a static COSI Bucket (existingBucketID) names a
// bucket the driver did not create.
func (d *Driver) ownedOrStatic(ctx context.Context, store objectstore.Store, id bucketID) error {
	switch err := store.HeadBucket(ctx, id.Bucket); {
	case errors.Is(err, objectstore.ErrNoSuchBucket):
		return status.Errorf(codes.NotFound, "bucket %q does not exist in the account of Contract %s", id.Bucket, id.Contract)
	case err != nil:
		return fromError(err)
	}
	return nil
}

// errBucketGone: the bucket whose policy was to change no longer exists; nothing grants
// anything on it.
var errBucketGone = errors.New("the bucket no longer exists")

// editGrants rewrites the bucket's policy with the grants edit returns from those it holds,
// when that changes it. The caller holds the bucket's lock.
func (d *Driver) editGrants(ctx context.Context, store objectstore.Store, acct account, id bucketID,
	edit func([]bucketpolicy.AccessGrant) []bucketpolicy.AccessGrant) error {
	current, err := store.Policy(ctx, id.Bucket)
	if errors.Is(err, objectstore.ErrNoSuchBucket) {
		return errBucketGone
	}
	if err != nil {
		return fromError(err)
	}
	grants := edit(bucketpolicy.GrantsIn(current))
	if len(grants) == 0 {
		if current == "" {
			return nil
		}
		if err := store.DeletePolicy(ctx, id.Bucket); err != nil && !errors.Is(err, objectstore.ErrNoSuchBucket) {
			return fromError(err)
		}
		return nil
	}
	want := bucketpolicy.Compose("", id.Bucket, grants, acct.Form)
	if current != "" && bucketpolicy.PoliciesEqual(current, want) {
		return nil
	}
	if err := store.PutPolicy(ctx, id.Bucket, want); err != nil {
		return fromError(err)
	}
	return nil
}
