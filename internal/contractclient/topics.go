package contractclient

import (
	"cmp"
	"context"
	"fmt"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
)

// Topics is what the Bucket controller calls for event notifications: topics in a contract's
// account that push to an HTTP endpoint, which a bucket's notifications publish to. Creating
// one is idempotent by name; deleting one that is gone succeeds. A provider that makes no
// topics answers every call ErrNotSupported.
type Topics interface {
	// PutTopic makes topic name of contractID pushing to endpoint, or changes the endpoint of
	// the one there, and returns it.
	PutTopic(ctx context.Context, contractID, name, endpoint string) (Topic, error)
	// ListTopics returns every topic of the contract, those whose creation may not have
	// finished included.
	ListTopics(ctx context.Context, contractID string) ([]Topic, error)
	// DeleteTopic deletes a topic; one already gone is not an error.
	DeleteTopic(ctx context.Context, contractID, name string) error
}

// Topic is a topic as the provider reports it.
type Topic struct {
	Name, Endpoint string
	// ARN is what a bucket's notification names it by; "" for a topic whose creation did not
	// finish.
	ARN string
}

var _ Topics = (*Client)(nil)

// PutTopic implements Topics.
func (c *Client) PutTopic(ctx context.Context, contractID, name, endpoint string) (Topic, error) {
	op := fmt.Sprintf("making topic %s of contract %s", name, contractID)
	resp, err := c.gen.PutTopicWithResponse(ctx, contractID, name, contractapi.TopicRequest{PushEndpoint: endpoint}, sendTenant)
	if err != nil {
		return Topic{}, &Error{Op: op, Cause: err}
	}
	if err := check(op, contractPath(contractID, "topics", name), resp.HTTPResponse, resp.Body); err != nil {
		return Topic{}, err
	}
	got := cmp.Or(resp.JSON201, resp.JSON200)
	if got == nil {
		return Topic{}, noBody(op, resp.StatusCode(), "a topic")
	}
	return Topic{Name: got.Name, Endpoint: got.PushEndpoint, ARN: got.Arn}, nil
}

// ListTopics implements Topics.
func (c *Client) ListTopics(ctx context.Context, contractID string) ([]Topic, error) {
	op := fmt.Sprintf("listing the topics of contract %s", contractID)
	resp, err := c.gen.ListTopicsWithResponse(ctx, contractID, sendTenant)
	if err != nil {
		return nil, &Error{Op: op, Cause: err}
	}
	if err := check(op, contractPath(contractID, "topics"), resp.HTTPResponse, resp.Body); err != nil {
		return nil, err
	}
	if resp.JSON200 == nil {
		return nil, noBody(op, resp.StatusCode(), "a topic list")
	}
	out := make([]Topic, 0, len(resp.JSON200.Topics))
	for _, t := range resp.JSON200.Topics {
		out = append(out, Topic{Name: t.Name, Endpoint: t.PushEndpoint, ARN: t.Arn})
	}
	return out, nil
}

// DeleteTopic implements Topics. The API's own not-found (no such contract) means there is
// nothing left to delete.
func (c *Client) DeleteTopic(ctx context.Context, contractID, name string) error {
	op := fmt.Sprintf("deleting topic %s of contract %s", name, contractID)
	resp, err := c.gen.DeleteTopicWithResponse(ctx, contractID, name, sendTenant)
	if err != nil {
		return &Error{Op: op, Cause: err}
	}
	return gone(check(op, contractPath(contractID, "topics", name), resp.HTTPResponse, resp.Body))
}
