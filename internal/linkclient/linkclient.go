// Package linkclient gives the images built here (cmd/osm-demo, cmd/osm-backup) an S3 client for
// a Bucket as an Application hands it to a container: a linked Bucket in <PREFIX>_BUCKET,
// _ENDPOINT, _REGION and, when the link carries one, its key in _ACCESS_KEY_ID and
// _SECRET_ACCESS_KEY; the backup's own Bucket in BACKUP_BUCKET with the AWS_* variables every S3
// client reads. A link without a key uses the SDK's own chain (AWS_ROLE_ARN with
// AWS_WEB_IDENTITY_TOKEN_FILE under ServiceAccount authentication).
package linkclient

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/application"
)

// Bucket is one bucket and a client that reaches it.
type Bucket struct {
	Name   string
	Client *s3.Client
}

// Getenv reads a variable; os.Getenv in the commands, a map in tests.
type Getenv func(string) string

// Link is the linked Bucket whose variables start with prefix ("PHOTOS_").
func Link(ctx context.Context, getenv Getenv, prefix string) (Bucket, error) {
	v := func(suffix string) string { return getenv(prefix + suffix) }
	return bucket(ctx, prefix, v(application.EnvBucket), v(application.EnvEndpoint), v(application.EnvRegion),
		v(application.EnvAccessKeyID), v(application.EnvSecretAccessKey))
}

// Backup is the backup's Bucket: BACKUP_BUCKET with the AWS_* variables.
func Backup(ctx context.Context, getenv Getenv) (Bucket, error) {
	return bucket(ctx, "backup ", getenv(application.EnvBackupBucket), getenv(storagev1alpha1.SecretKeyEndpointURL),
		getenv(storagev1alpha1.SecretKeyRegion), getenv(storagev1alpha1.SecretKeyAccessKeyID), getenv(storagev1alpha1.SecretKeySecretAccessKey))
}

func bucket(ctx context.Context, what, name, endpoint, region, keyID, secret string) (Bucket, error) {
	if name == "" || endpoint == "" {
		return Bucket{}, fmt.Errorf("%sbucket: its name and endpoint are not set in the environment", what)
	}
	if region == "" {
		region = "us-east-1"
	}
	var opts []func(*config.LoadOptions) error
	opts = append(opts, config.WithRegion(region))
	if keyID != "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(keyID, secret, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return Bucket{}, fmt.Errorf("%sbucket %s: %w", what, name, err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		// Local and on-premises servers are reached by address: path-style.
		o.UsePathStyle = true
		// Checksums only where S3 requires them: not every server speaks the newer ones.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return Bucket{Name: name, Client: client}, nil
}

// Prefix is the link a command is told of ("PHOTOS" or "PHOTOS_"), or else the one link in
// environ; see OnlyLink.
func Prefix(flag string, environ []string) (string, error) {
	if flag != "" {
		return strings.TrimSuffix(flag, "_") + "_", nil
	}
	return OnlyLink(environ)
}

// OnlyLink is the prefix of the one link in the environment, for a command not told which:
// every prefix P with both P_BUCKET and P_ENDPOINT set, except the backup's own variables.
func OnlyLink(environ []string) (string, error) {
	var prefixes []string
	set := map[string]bool{}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		set[name] = true
	}
	for name := range set {
		prefix, ok := strings.CutSuffix(name, application.EnvBucket)
		if !ok || prefix == "" || name == application.EnvBackupBucket || !set[prefix+application.EnvEndpoint] {
			continue
		}
		prefixes = append(prefixes, prefix)
	}
	sort.Strings(prefixes)
	switch len(prefixes) {
	case 1:
		return prefixes[0], nil
	case 0:
		return "", fmt.Errorf("no linked Bucket in the environment (no <PREFIX>_%s with <PREFIX>_%s)", application.EnvBucket, application.EnvEndpoint)
	default:
		return "", fmt.Errorf("%d linked Buckets in the environment (%s): name one with --link", len(prefixes), strings.Join(prefixes, ", "))
	}
}
