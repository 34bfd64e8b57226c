package contractserver

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/ceph/go-ceph/rgw/admin"
)

var _ TopicBackend = (*RGWBackend)(nil)

// RGW 16.2 keeps topics per tenant and checks no permission on them: any user of a tenant
// lists, reads, changes and deletes every topic of its tenant, and a bucket's notification may
// name any of them (rgw_topics_test.go). A contract's topics are safe from other contracts only
// in a tenant of its own (rgwAccount). RGW makes a topic in the tenant of the user who asks, so
// the admin asks as the contract's user: a system user may name the user it acts as with
// rgwx-uid, as RGW's own multisite sync does.

// rgwTopicName is the RGW topic of a contract's topic, named after the contract: in the
// default tenant, every contract's topics share one namespace.
func rgwTopicName(account, name string) string { return rgwAccountOf(account).user + "-" + name }

// topicARN is how RGW names topic name of tenant: arn:aws:sns:<zonegroup>:<tenant>:<name>.
func (b *RGWBackend) topicARN(tenant, name string) string {
	return "arn:aws:sns:" + b.region + ":" + tenant + ":" + name
}

// PutTopic makes the topic with RGW's SNS API (CreateTopic, which also changes an existing
// topic's attributes) as the contract's user, pushing to endpoint.
func (b *RGWBackend) PutTopic(ctx context.Context, account, name, endpoint string) (string, error) {
	a := rgwAccountOf(account)
	form := url.Values{
		"Action":                   {"CreateTopic"},
		"Name":                     {rgwTopicName(account, name)},
		"Attributes.entry.1.key":   {"push-endpoint"},
		"Attributes.entry.1.value": {endpoint},
	}
	data, err := b.asUser(ctx, b.topics, a, form)
	if err != nil {
		return "", err
	}
	var out struct {
		ARN string `xml:"CreateTopicResult>TopicArn"`
	}
	if err := xml.Unmarshal(data, &out); err != nil || out.ARN == "" {
		return "", fmt.Errorf("rgw CreateTopic answered no topic ARN: %v", err)
	}
	if tenant := arnAccount(out.ARN); tenant != a.tenant {
		// An admin that is no system user is taken as itself: the topic was made in the admin's
		// own tenant, where no bucket of the contract can name it. Take it back.
		_, _ = b.asUser(ctx, b.topics, rgwAccount{}, url.Values{"Action": {"DeleteTopic"}, "TopicArn": {out.ARN}})
		return "", fmt.Errorf("rgw made topic %s in tenant %q, not in the contract's tenant %q: the admin user must be a system user "+
			"(radosgw-admin user modify --uid=<admin> --system) to make topics in a contract's tenant", out.ARN, tenant, a.tenant)
	}
	return out.ARN, nil
}

// arnAccount is the account field of an ARN, which RGW fills with the tenant.
func arnAccount(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 {
		return ""
	}
	return parts[4]
}

// DeleteTopic deletes the topic; one RGW does not know is deleted already, and so is one of a
// tenant whose user is gone: DeleteAccount deleted its topics first.
func (b *RGWBackend) DeleteTopic(ctx context.Context, account, name string) error {
	a := rgwAccountOf(account)
	return b.deleteTopic(ctx, a, b.topicARN(a.tenant, rgwTopicName(account, name)))
}

func (b *RGWBackend) deleteTopic(ctx context.Context, a rgwAccount, arn string) error {
	_, err := b.asUser(ctx, b.topics, a, url.Values{"Action": {"DeleteTopic"}, "TopicArn": {arn}})
	var bErr *backendError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &bErr) && (bErr.Code == "NoSuchKey" || bErr.Status == http.StatusNotFound):
		return nil
	case errors.As(err, &bErr) && bErr.Status == http.StatusForbidden && a.tenant != "":
		// RGW refuses a system user acting as a user that does not exist.
		if _, uErr := b.api.GetUser(ctx, admin.User{ID: a.uid()}); errors.Is(uErr, admin.ErrNoSuchUser) {
			return nil
		}
	}
	return err
}

// deleteTenantTopics deletes every topic of the account's tenant, those its own keys made
// included: the tenant is the contract's alone. A contract in the default tenant shares it, so
// only the topics the server recorded for it are deleted (by the server, with DeleteTopic).
func (b *RGWBackend) deleteTenantTopics(ctx context.Context, a rgwAccount) error {
	if a.tenant == "" {
		return nil
	}
	data, err := b.asUser(ctx, b.topics, a, url.Values{"Action": {"ListTopics"}})
	var bErr *backendError
	if errors.As(err, &bErr) && bErr.Status == http.StatusForbidden {
		if _, uErr := b.api.GetUser(ctx, admin.User{ID: a.uid()}); errors.Is(uErr, admin.ErrNoSuchUser) {
			return nil // the user went, and its topics before it
		}
	}
	if err != nil {
		return err
	}
	var out struct {
		Topics []struct {
			// Name, not the ARN, says which topic to delete: RGW lists a bucket notification's
			// own copy of a topic ("<notification>_<topic>") with the ARN of the topic copied.
			Name string `xml:"Name"`
			ARN  string `xml:"TopicArn"`
		} `xml:"ListTopicsResult>Topics>member"`
	}
	if err := xml.Unmarshal(data, &out); err != nil {
		return fmt.Errorf("reading rgw ListTopics of tenant %q: %w", a.tenant, err)
	}
	for _, t := range out.Topics {
		// An admin that is no system user lists its own tenant's topics: never those.
		if arnAccount(t.ARN) != a.tenant {
			return fmt.Errorf("rgw listed topic %s outside tenant %q: the admin user must be a system user", t.ARN, a.tenant)
		}
		if err := b.deleteTopic(ctx, a, b.topicARN(a.tenant, t.Name)); err != nil {
			return fmt.Errorf("deleting topic %q of tenant %q: %w", t.Name, a.tenant, err)
		}
	}
	return nil
}

// asUser posts one action of an API beside S3 (SNS, IAM) to radosgw, which serves them on its
// S3 endpoint, with client c as the user of account a; as the admin itself in the default
// tenant.
func (b *RGWBackend) asUser(ctx context.Context, c *signedClient, a rgwAccount, form url.Values) ([]byte, error) {
	u := strings.TrimSuffix(b.endpoint, "/") + "/"
	if a.tenant != "" {
		u += "?" + url.Values{"rgwx-uid": {a.uid()}}.Encode()
	}
	action := form.Get("Action")
	return c.do(ctx, "rgw "+action, http.MethodPost, u, "application/x-www-form-urlencoded", []byte(form.Encode()))
}
