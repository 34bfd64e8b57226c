package credentials

import (
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

// Role is a keyless BucketAccess's Secret (authentication ServiceAccount): what an SDK needs to
// exchange the workload's ServiceAccount token for credentials at the provider's STS, and
// nothing secret. AWS_ROLE_ARN is the role to assume; AWS_ENDPOINT_URL the S3 endpoint, and
// AWS_ENDPOINT_URL_STS the same endpoint for STS (the Go SDK builds its STS client before it
// reads AWS_ENDPOINT_URL); AWS_REGION the region to sign for; OSM_TOKEN_AUDIENCE the audience
// the token must be minted for. AWS_WEB_IDENTITY_TOKEN_FILE is the workload's own: where its
// projected token is mounted.
func Role(c Connection, roleARN, audience string) Rendered {
	return Rendered{Data: map[string][]byte{
		storagev1alpha1.SecretKeyRoleARN:       []byte(roleARN),
		storagev1alpha1.SecretKeyEndpointURL:   []byte(c.Endpoint),
		storagev1alpha1.SecretKeyEndpointSTS:   []byte(c.Endpoint),
		storagev1alpha1.SecretKeyRegion:        []byte(c.Region),
		storagev1alpha1.SecretKeyTokenAudience: []byte(audience),
	}}
}
