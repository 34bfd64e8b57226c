package contractserver

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

var _ TopicBackend = (*RGWBackend)(nil)

// rgwTopicName is the RGW topic of a contract's topic. RGW 16.2 keeps topics per tenant, and
// contract users have none, so every contract's topics share one namespace: the contract's id
// keeps them apart.
func rgwTopicName(contractID, name string) string { return rgwUserID(contractID) + "-" + name }

// PutTopic makes the topic with RGW's SNS API (CreateTopic, which also changes an existing
// topic's attributes) with the admin's keys, pushing to endpoint.
func (b *RGWBackend) PutTopic(ctx context.Context, contractID, name, endpoint string) (string, error) {
	form := url.Values{
		"Action":                   {"CreateTopic"},
		"Name":                     {rgwTopicName(contractID, name)},
		"Attributes.entry.1.key":   {"push-endpoint"},
		"Attributes.entry.1.value": {endpoint},
	}
	data, err := b.sns(ctx, "CreateTopic", form)
	if err != nil {
		return "", err
	}
	var out struct {
		ARN string `xml:"CreateTopicResult>TopicArn"`
	}
	if err := xml.Unmarshal(data, &out); err != nil || out.ARN == "" {
		return "", fmt.Errorf("rgw CreateTopic answered no topic ARN: %v", err)
	}
	return out.ARN, nil
}

// DeleteTopic deletes the topic; one RGW does not know is deleted already.
func (b *RGWBackend) DeleteTopic(ctx context.Context, contractID, name string) error {
	arn := "arn:aws:sns:" + b.region + "::" + rgwTopicName(contractID, name)
	_, err := b.sns(ctx, "DeleteTopic", url.Values{"Action": {"DeleteTopic"}, "TopicArn": {arn}})
	var bErr *backendError
	if errors.As(err, &bErr) && bErr.Code == "NoSuchKey" || errors.As(err, &bErr) && bErr.Status == http.StatusNotFound {
		return nil
	}
	return err
}

// sns posts one SNS API action to radosgw, which serves it on its S3 endpoint.
func (b *RGWBackend) sns(ctx context.Context, action string, form url.Values) ([]byte, error) {
	return b.topics.do(ctx, "rgw "+action, http.MethodPost, strings.TrimSuffix(b.endpoint, "/")+"/",
		"application/x-www-form-urlencoded", []byte(form.Encode()))
}
