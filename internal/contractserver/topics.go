package contractserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"time"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
)

// Topics follow the pattern of principals: a topic is recorded, pending, before the backend is
// asked to make it, so a crash in between leaves a record that a repeated PUT finishes and a
// DELETE (or the contract's cancel) removes; a topic is never made that the server does not
// know of. Every call holds the contract's lock.

// TopicBackend is implemented by a backend that can make topics pushing bucket event
// notifications to an HTTP endpoint. A backend without it answers the topic calls 501
// not-supported. Both methods are idempotent.
type TopicBackend interface {
	// PutTopic makes topic name of contractID (or changes it) to push to endpoint, and returns
	// the ARN bucket notifications name it by.
	PutTopic(ctx context.Context, contractID, name, endpoint string) (arn string, err error)
	// DeleteTopic removes it; one already gone is no error.
	DeleteTopic(ctx context.Context, contractID, name string) error
}

// Topic states: pending was recorded before the backend was asked; active has its ARN.
const (
	topicPending = "pending"
	topicActive  = "active"
)

// storedTopic is a topic as stored in its contract's record.
type storedTopic struct {
	Name         string    `json:"name"`
	PushEndpoint string    `json:"pushEndpoint"`
	ARN          string    `json:"arn,omitempty"`
	State        string    `json:"state"`
	CreatedAt    time.Time `json:"createdAt"`
}

// topic returns the topic of this name, or nil.
func (r *record) topic(name string) *storedTopic {
	return named(r.Topics, name, func(t storedTopic) string { return t.Name })
}

// named returns the element of xs called name, or nil: a contract's topics and roles are each
// one of a name.
func named[T any](xs []T, name string, nameOf func(T) string) *T {
	if i := slices.IndexFunc(xs, func(x T) bool { return nameOf(x) == name }); i >= 0 {
		return &xs[i]
	}
	return nil
}

var topicName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// validateTopic checks what the generated server does not: the name's pattern and the push
// endpoint.
func validateTopic(name string, body *contractapi.TopicRequest) error {
	if !topicName.MatchString(name) {
		return newProblem(contractapi.ProblemInvalidRequest, http.StatusBadRequest,
			"a topic's name is 1 to 128 letters, digits, '-' and '_'")
	}
	if body == nil {
		return newProblem(contractapi.ProblemInvalidRequest, http.StatusBadRequest, "the request needs a body with pushEndpoint")
	}
	u, err := url.Parse(body.PushEndpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(body.PushEndpoint) > 2048 {
		return newProblem(contractapi.ProblemInvalidRequest, http.StatusBadRequest,
			"pushEndpoint must be an http:// or https:// URL of at most 2048 characters")
	}
	return nil
}

// PutTopic records the topic (pending), asks the backend for it, then records its ARN. A topic
// that already pushes to the endpoint is answered as it is, without asking the backend.
func (s *Server) PutTopic(ctx context.Context, req contractapi.PutTopicRequestObject) (contractapi.PutTopicResponseObject, error) {
	if err := validateTopic(req.TopicName, req.Body); err != nil {
		return nil, err
	}
	tb, rec, unlock, err := inAccount[TopicBackend](s, req.Id, lacksTopics, s.activeContract)
	if err != nil {
		return nil, err
	}
	defer unlock()
	endpoint := req.Body.PushEndpoint
	// After the 501 of a backend without topics, and before a topic already made is answered:
	// one the list no longer allows is not made again.
	if err := s.pushEndpoints.CheckURL(endpoint); err != nil {
		if na := (*egress.NotAllowedError)(nil); errors.As(err, &na) && na.Why != "" {
			return nil, newProblem(contractapi.ProblemInvalidRequest, http.StatusBadRequest, "pushEndpoint %v", err)
		}
		return nil, newProblem(contractapi.ProblemInvalidRequest, http.StatusBadRequest,
			"pushEndpoint %s is not where this provider pushes events: its contract server's --%s does not list it", endpoint, PushEndpointsFlag)
	}
	existed := rec.topic(req.TopicName) != nil
	if t := rec.topic(req.TopicName); t != nil && t.State == topicActive && t.PushEndpoint == endpoint {
		return contractapi.PutTopic200JSONResponse(toTopic(t)), nil
	}
	if !existed && !within(len(rec.Topics), s.limits.Topics) {
		return nil, limitExceeded("contract %s has %d topics, the most this server allows; delete one first", rec.ID, len(rec.Topics))
	}
	rec, err = s.putNamed(ctx, rec.ID, "topic", req.TopicName,
		func(r *record) {
			if t := r.topic(req.TopicName); t != nil {
				t.PushEndpoint, t.State = endpoint, topicPending
				return
			}
			r.Topics = append(r.Topics, storedTopic{Name: req.TopicName, PushEndpoint: endpoint, State: topicPending, CreatedAt: now()})
		},
		func(bctx context.Context, account string) (string, error) {
			return tb.PutTopic(bctx, account, req.TopicName, endpoint)
		},
		func(r *record, arn string) {
			t := r.topic(req.TopicName)
			t.ARN, t.State = arn, topicActive
		})
	if err != nil {
		return nil, err
	}
	s.log.Info("Topic made", "contract", rec.ID, "topic", req.TopicName)
	if existed {
		return contractapi.PutTopic200JSONResponse(toTopic(rec.topic(req.TopicName))), nil
	}
	return contractapi.PutTopic201JSONResponse(toTopic(rec.topic(req.TopicName))), nil
}

// ListTopics answers every topic the contract has, pending ones included: they may exist at
// the backend.
func (s *Server) ListTopics(_ context.Context, req contractapi.ListTopicsRequestObject) (contractapi.ListTopicsResponseObject, error) {
	if _, err := s.topicBackend(); err != nil {
		return nil, err
	}
	rec, err := s.visible(req.Id)
	if err != nil {
		return nil, err
	}
	out := contractapi.TopicList{Topics: []contractapi.Topic{}}
	for i := range rec.Topics {
		out.Topics = append(out.Topics, toTopic(&rec.Topics[i]))
	}
	return contractapi.ListTopics200JSONResponse(out), nil
}

// DeleteTopic removes the topic at the backend, then its record; a crash in between is
// repaired by the next delete. A topic the contract does not have is deleted already.
func (s *Server) DeleteTopic(ctx context.Context, req contractapi.DeleteTopicRequestObject) (contractapi.DeleteTopicResponseObject, error) {
	tb, rec, unlock, err := inAccount[TopicBackend](s, req.Id, lacksTopics, s.visible)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if rec.topic(req.TopicName) == nil {
		return contractapi.DeleteTopic204Response{}, nil
	}
	err = s.deleteNamed(ctx, rec, "topic", req.TopicName,
		func(bctx context.Context) error { return tb.DeleteTopic(bctx, rec.account(), req.TopicName) },
		func(r *record) { r.Topics = withoutTopic(r.Topics, req.TopicName) })
	if err != nil {
		return nil, err
	}
	return contractapi.DeleteTopic204Response{}, nil
}

// putNamed makes one of a contract's named things (a topic, a role): pending records it as
// asked for, put asks the backend (in the account) for it, and active records what the backend
// answered. A crash in between leaves it pending, and the next put finishes it.
func (s *Server) putNamed(ctx context.Context, id, what, name string, pending func(*record),
	put func(context.Context, string) (string, error), active func(*record, string)) (*record, error) {
	rec, err := s.store.update(id, func(r *record) error {
		pending(r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recording %s %s of contract %s: %w", what, name, id, err)
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BackendTimeout)
	defer cancel()
	arn, err := put(bctx, rec.account())
	if err != nil {
		return nil, backendProblem("making the "+what, fmt.Errorf("making %s %s of contract %s: %w", what, name, rec.ID, err))
	}
	rec, err = s.store.update(id, func(r *record) error {
		active(r, arn)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("marking %s %s of contract %s active: %w", what, name, id, err)
	}
	return rec, nil
}

// deleteNamed removes one of a contract's named things (a topic, a role) at the backend with
// del, then from its record with forget: a crash in between is repaired by the next delete.
func (s *Server) deleteNamed(ctx context.Context, rec *record, what, name string,
	del func(context.Context) error, forget func(*record)) error {
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BackendTimeout)
	defer cancel()
	if err := del(bctx); err != nil {
		return backendProblem("deleting the "+what, fmt.Errorf("deleting %s %s of contract %s: %w", what, name, rec.ID, err))
	}
	if _, err := s.store.update(rec.ID, func(r *record) error {
		forget(r)
		return nil
	}); err != nil {
		return fmt.Errorf("forgetting %s %s of contract %s: %w", what, name, rec.ID, err)
	}
	s.log.Info("Deleted", "contract", rec.ID, what, name)
	return nil
}

// deleteTopics removes every topic of a contract at the backend, for its cancel. The caller
// forgets them.
func (s *Server) deleteTopics(ctx context.Context, rec *record) error {
	if len(rec.Topics) == 0 {
		return nil // also on a backend without topics
	}
	tb, err := s.topicBackend()
	if err != nil {
		return err
	}
	for _, t := range rec.Topics {
		if err := tb.DeleteTopic(ctx, rec.account(), t.Name); err != nil {
			return backendProblem("deleting the contract's topics", fmt.Errorf("deleting topic %s of contract %s: %w", t.Name, rec.ID, err))
		}
	}
	return nil
}

// PushEndpointsFlag is the contract server's flag that sets Config.PushEndpoints.
const PushEndpointsFlag = "allowed-push-endpoints"

// lacksTopics ends the 501 of a backend without topics.
const lacksTopics = "makes no topics: it sends bucket events only to targets set when it starts"

// topicBackend is the backend's support for topics, or the 501 a caller gets without it.
func (s *Server) topicBackend() (TopicBackend, error) {
	return capability[TopicBackend](s, lacksTopics)
}

func withoutTopic(topics []storedTopic, name string) []storedTopic {
	out := topics[:0]
	for _, t := range topics {
		if t.Name != name {
			out = append(out, t)
		}
	}
	return out
}

func toTopic(t *storedTopic) contractapi.Topic {
	return contractapi.Topic{Name: t.Name, Arn: t.ARN, PushEndpoint: t.PushEndpoint, CreatedAt: t.CreatedAt}
}
