package localenv

import (
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	corev1 "k8s.io/api/core/v1"
)

// NewS3Client returns a path-style S3 client for a local endpoint. Tests check the servers with
// it rather than with the operator's own S3 code, so a bug there cannot hide itself.
func NewS3Client(endpoint, region, accessKey, secretKey string) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(endpoint),
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider(accessKey, secretKey, ""),
		UsePathStyle: true,
		HTTPClient:   &http.Client{Timeout: 30 * time.Second, Transport: KeepAliveTransport()},
		// Local servers do not all speak the newest checksum headers.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// KeepAliveTransport keeps a connection open for each request a caller has in flight (up to 256):
// http.DefaultTransport keeps two, so a client or proxy with more in flight would close a
// connection after most answers and dial a new one for the next request, which costs it and the
// server more than small requests do.
func KeepAliveTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 256, 256
	return t
}

// S3ClientOfSecret is NewS3Client with the keys, endpoint and region of a credentials Secret
// (a Contract's or a BucketAccess's), as a workload that mounts it would connect.
func S3ClientOfSecret(secret *corev1.Secret) *s3.Client {
	d := secret.Data
	return NewS3Client(string(d["AWS_ENDPOINT_URL"]), string(d["AWS_REGION"]),
		string(d["AWS_ACCESS_KEY_ID"]), string(d["AWS_SECRET_ACCESS_KEY"]))
}
