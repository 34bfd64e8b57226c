package contractserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// signedClient calls a backend's own APIs beside S3 (versitygw's admin API, RGW's SNS API):
// SigV4-signed requests with the backend's admin account, answered with S3-style XML error
// documents.
type signedClient struct {
	service, region string
	creds           aws.Credentials
	http            *http.Client
	signer          *v4.Signer
}

func newSignedClient(service, region, accessKey, secretKey string, hc *http.Client) *signedClient {
	return &signedClient{service: service, region: region, http: hc, signer: v4.NewSigner(),
		creds: aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey}}
}

// backendError is an error answer of such an API (an S3 error document).
type backendError struct {
	Op      string
	Status  int
	Code    string
	Message string
}

func (e *backendError) Error() string {
	return fmt.Sprintf("%s: HTTP %d %s: %s", e.Op, e.Status, e.Code, e.Message)
}

// do sends one signed request and returns the answer body. Errors never contain the request
// body, which can hold a secret.
func (c *signedClient) do(ctx context.Context, op, method, u, contentType string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	if err := c.signer.SignHTTP(ctx, c.creds, req, payloadHash, c.service, c.region, time.Now()); err != nil {
		return nil, fmt.Errorf("signing %s: %w", op, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s: %w", op, err)
	}
	if resp.StatusCode >= 300 {
		e := &backendError{Op: op, Status: resp.StatusCode}
		var doc struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		}
		if xml.Unmarshal(data, &doc) == nil {
			e.Code, e.Message = doc.Code, doc.Message
		}
		return nil, e
	}
	return data, nil
}
