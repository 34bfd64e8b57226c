package cosidriver

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	cosi "sigs.k8s.io/container-object-storage-interface-spec"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/naming"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// OwnerTag marks a bucket the driver created, with the name of the COSI Bucket it was created
// for. It is set in the creating call itself, so a bucket is never seen without it: after a
// crash or a lost answer, a bucket of the asked name that carries it is this request's.
const OwnerTag = storagev1alpha1.COSIBucketTag

// DriverCreateBucket implements cosi.ProvisionerServer: it creates the bucket req.Name in the
// account of the Contract the BucketClass names, or answers as before when that bucket is
// already the driver's.
func (d *Driver) DriverCreateBucket(ctx context.Context, req *cosi.DriverCreateBucketRequest) (*cosi.DriverCreateBucketResponse, error) {
	ref, err := bucketClassParams(req.GetParameters())
	if err != nil {
		return nil, invalid("%v", err)
	}
	name := req.GetName()
	if reasons := naming.ValidateBucketName(name); len(reasons) > 0 {
		return nil, invalid("the COSI Bucket's name %q is the bucket's name, and the bucket name %s", name, strings.Join(reasons, "; "))
	}
	id := bucketID{Contract: ref, Bucket: name}
	ctx, acct, unlock, err := d.open(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	store := d.store(acct)
	if err := d.ensureBucket(ctx, store, id); err != nil {
		return nil, err
	}
	return &cosi.DriverCreateBucketResponse{
		BucketId: id.String(),
		BucketInfo: &cosi.Protocol{Type: &cosi.Protocol_S3{S3: &cosi.S3{
			Region: acct.Region, SignatureVersion: cosi.S3SignatureVersion_S3V4}}},
	}, nil
}

// ensureBucket creates the bucket with its owner tag, or finds it already the driver's.
func (d *Driver) ensureBucket(ctx context.Context, store objectstore.Store, id bucketID) error {
	switch err := store.HeadBucket(ctx, id.Bucket); {
	case err == nil:
		return d.ownedBucket(ctx, store, id)
	case errors.Is(err, objectstore.ErrAccessDenied):
		return status.Errorf(codes.AlreadyExists, "bucket %q exists and belongs to another account than Contract %s's", id.Bucket, id.Contract)
	case !errors.Is(err, objectstore.ErrNoSuchBucket):
		return fromError(err)
	}
	tags := map[string]string{OwnerTag: id.Bucket}
	tagged, err := store.CreateBucket(ctx, id.Bucket, objectstore.CreateOptions{Tags: tags})
	if errors.Is(err, objectstore.ErrBucketTakenElsewhere) {
		return status.Errorf(codes.AlreadyExists, "bucket %q exists and belongs to another account than Contract %s's", id.Bucket, id.Contract)
	}
	if err != nil {
		// Made or not, the next call finds out: HeadBucket, then the tag.
		return fromError(err)
	}
	if !tagged {
		// A server that takes no tags at creation (Ceph RGW): a crash before this call leaves
		// the bucket untagged, and the next call refuses it as not the driver's (see README).
		if err := store.PutBucketTags(ctx, id.Bucket, tags); err != nil {
			return fromError(err)
		}
	}
	d.log.Info("Created bucket", "bucket", id.Bucket, "contract", id.Contract.String())
	return nil
}

// ownedBucket answers whether an existing bucket is the one the driver made for id: nil when
// it is, AlreadyExists otherwise.
func (d *Driver) ownedBucket(ctx context.Context, store objectstore.Store, id bucketID) error {
	tags, err := store.BucketTags(ctx, id.Bucket)
	if err != nil {
		return fromError(err)
	}
	if tags[OwnerTag] != id.Bucket {
		return status.Errorf(codes.AlreadyExists,
			"bucket %q already exists in the account of Contract %s and was not created by this driver (it has no tag %s=%s); "+
				"to use it, create a COSI Bucket with existingBucketID %q", id.Bucket, id.Contract, OwnerTag, id.Bucket, id.String())
	}
	return nil
}

// DriverDeleteBucket implements cosi.ProvisionerServer: it deletes a bucket the driver
// created. A bucket already gone is deleted; one the driver did not create (a static Bucket's)
// is left alone, and so is one that still holds objects: it is never emptied silently.
func (d *Driver) DriverDeleteBucket(ctx context.Context, req *cosi.DriverDeleteBucketRequest) (*cosi.DriverDeleteBucketResponse, error) {
	id, err := parseBucketID(req.GetBucketId())
	if err != nil {
		return nil, invalid("%v", err)
	}
	ctx, acct, unlock, err := d.open(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	store := d.store(acct)
	tags, err := store.BucketTags(ctx, id.Bucket)
	switch {
	case errors.Is(err, objectstore.ErrNoSuchBucket):
		return &cosi.DriverDeleteBucketResponse{}, nil
	case err != nil:
		return nil, fromError(err)
	case tags[OwnerTag] != id.Bucket:
		return nil, status.Errorf(codes.FailedPrecondition,
			"bucket %q was not created by this driver (it has no tag %s=%s), so it is not deleted: "+
				"set the COSI Bucket's deletionPolicy to Retain", id.Bucket, OwnerTag, id.Bucket)
	}
	switch err := store.DeleteBucket(ctx, id.Bucket); {
	case errors.Is(err, objectstore.ErrNoSuchBucket):
	case errors.Is(err, objectstore.ErrBucketNotEmpty):
		return nil, status.Errorf(codes.FailedPrecondition,
			"bucket %q is not empty, and the driver never empties one: delete its objects, or set the COSI Bucket's deletionPolicy to Retain", id.Bucket)
	case err != nil:
		return nil, fromError(err)
	default:
		d.log.Info("Deleted bucket", "bucket", id.Bucket, "contract", id.Contract.String())
	}
	return &cosi.DriverDeleteBucketResponse{}, nil
}
