package contractserver

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
)

// topicsBackend is fakeBackend with topics: it keeps each contract's topics by name, with the
// endpoint they push to, and fails the next PutTopic when told to.
type topicsBackend struct {
	fakeBackend // its mu guards these too
	topics      map[string]string
	failPut     bool
}

func (b *topicsBackend) PutTopic(_ context.Context, contractID, name, endpoint string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.failPut {
		b.failPut = false
		return "", errors.New("the backend did not answer")
	}
	if b.topics == nil {
		b.topics = map[string]string{}
	}
	b.topics[contractID+"/"+name] = endpoint
	return "arn:aws:sns:us-east-1::" + contractID + "-" + name, nil
}

func (b *topicsBackend) DeleteTopic(_ context.Context, contractID, name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	delete(b.topics, contractID+"/"+name)
	return nil
}

func (b *topicsBackend) names() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for k := range b.topics {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func putTopic(t *testing.T, c contractapi.ClientWithResponsesInterface, id, name, endpoint string) *contractapi.PutTopicResponse {
	t.Helper()
	resp, err := c.PutTopicWithResponse(t.Context(), id, name, contractapi.TopicRequest{PushEndpoint: endpoint})
	if err != nil {
		t.Fatalf("PutTopic: %v", err)
	}
	return resp
}

func listTopics(t *testing.T, c contractapi.ClientWithResponsesInterface, id string) []contractapi.Topic {
	t.Helper()
	resp, err := c.ListTopicsWithResponse(t.Context(), id)
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("ListTopics: %v (status %d)", err, resp.StatusCode())
	}
	return resp.JSON200.Topics
}

// A topic is recorded before the backend is asked for it, so one whose making failed is listed
// (and finished by the next PUT, or removed by a DELETE or the contract's cancel).
func TestATopicIsRecordedBeforeItIsMadeAndGoesWithItsContract(t *testing.T) {
	backend := &topicsBackend{failPut: true}
	ts := startServer(t, Config{Backend: backend, PushEndpoints: allow(t, "http://h.example", "https://h.example")})
	contract := createContract(t, ts.client, "uid-topics", contractapi.ContractRequest{Plan: "standard"})

	failed := putTopic(t, ts.client, contract.Id, "b1-images", "http://h.example/events")
	wantProblem(t, "put with the backend down", failed.HTTPResponse, failed.ApplicationproblemJSON503, http.StatusServiceUnavailable, contractapi.ProblemBackendUnavailable)
	if got := listTopics(t, ts.client, contract.Id); len(got) != 1 || got[0].Name != "b1-images" || got[0].Arn != "" {
		t.Fatalf("after a failed PUT the contract lists %+v, want b1-images without an ARN", got)
	}

	made := putTopic(t, ts.client, contract.Id, "b1-images", "http://h.example/events")
	if made.StatusCode() != http.StatusOK || made.JSON200 == nil || made.JSON200.Arn == "" {
		t.Fatalf("repeating the PUT answered %d %s", made.StatusCode(), made.Body)
	}
	calls := backend.callCount()
	again := putTopic(t, ts.client, contract.Id, "b1-images", "http://h.example/events")
	if again.StatusCode() != http.StatusOK || again.JSON200.Arn != made.JSON200.Arn || backend.callCount() != calls {
		t.Errorf("the same PUT again answered %d (ARN %q) and called the backend %d times", again.StatusCode(), again.JSON200.Arn, backend.callCount()-calls)
	}
	if other := putTopic(t, ts.client, contract.Id, "b1-docs", "https://h.example/docs"); other.StatusCode() != http.StatusCreated {
		t.Errorf("a new topic answered %d, want 201", other.StatusCode())
	}

	del, err := ts.client.DeleteTopicWithResponse(t.Context(), contract.Id, "b1-docs")
	if err != nil || del.StatusCode() != http.StatusNoContent {
		t.Fatalf("DeleteTopic: %v (status %d)", err, del.StatusCode())
	}
	if got := backend.names(); !slices.Equal(got, []string{contract.Id + "/b1-images"}) {
		t.Errorf("the backend has topics %v after one was deleted", got)
	}
	cancelContract(t, ts.client, contract.Id, false)
	if got := backend.names(); len(got) > 0 {
		t.Errorf("the backend keeps topics %v of a cancelled contract", got)
	}
}

func TestTopicRequestsAreValidatedAndNeedABackendWithTopics(t *testing.T) {
	ts := startServer(t, Config{Backend: &topicsBackend{}, PushEndpoints: allow(t, "http://h.example")})
	contract := createContract(t, ts.client, "uid-topic-checks", contractapi.ContractRequest{Plan: "standard"})
	for name, req := range map[string][2]string{
		"a name with a dot":    {"b1.images", "http://h.example/"},
		"an endpoint over ftp": {"b1-images", "ftp://h.example/"},
		"an endpoint no host":  {"b1-images", "http:///events"},
	} {
		t.Run(name, func(t *testing.T) {
			resp := putTopic(t, ts.client, contract.Id, req[0], req[1])
			wantProblem(t, "put", resp.HTTPResponse, resp.ApplicationproblemJSON400, http.StatusBadRequest, contractapi.ProblemInvalidRequest)
		})
	}
	if got := listTopics(t, ts.client, contract.Id); len(got) > 0 {
		t.Errorf("refused requests recorded topics %+v", got)
	}

	plain := &fakeBackend{}
	ts = startServer(t, Config{Backend: plain})
	contract = createContract(t, ts.client, "uid-no-topics", contractapi.ContractRequest{Plan: "standard"})
	calls := plain.callCount()
	resp := putTopic(t, ts.client, contract.Id, "b1-images", "http://h.example/")
	wantProblem(t, "put", resp.HTTPResponse, resp.ApplicationproblemJSON501, http.StatusNotImplemented, contractapi.ProblemNotSupported)
	if plain.callCount() != calls {
		t.Error("a backend without topics was called for one")
	}
}

// Where a topic pushes is the provider's decision: the backend POSTs every event there from
// inside the provider's network, whatever the caller checked. The list refuses what it does not
// name before anything is recorded or asked of the backend, a topic already made included, and
// a backend without topics still answers 501.
func TestTopicsPushOnlyWhereTheProviderAllows(t *testing.T) {
	backend := &topicsBackend{}
	ts := startServer(t, Config{Backend: backend, PushEndpoints: allow(t, "https://events.example.com/hooks")})
	contract := createContract(t, ts.client, "uid-push-endpoints", contractapi.ContractRequest{Plan: "standard"})
	if got := putTopic(t, ts.client, contract.Id, "b1-images", "https://events.example.com/hooks/images"); got.StatusCode() != http.StatusCreated {
		t.Fatalf("a topic pushing where the list allows: %d %s", got.StatusCode(), got.Body)
	}
	calls := backend.callCount()
	for name, endpoint := range map[string]string{
		"the cloud's metadata service": "http://169.254.169.254/latest/meta-data/",
		"another path of the host":     "https://events.example.com/other",
		"another host":                 "https://evil.example.net/hooks",
		"a user and password":          "https://u:p@events.example.com/hooks",
	} {
		t.Run(name, func(t *testing.T) {
			resp := putTopic(t, ts.client, contract.Id, "b1-elsewhere", endpoint)
			wantProblem(t, "put", resp.HTTPResponse, resp.ApplicationproblemJSON400, http.StatusBadRequest, contractapi.ProblemInvalidRequest)
		})
	}
	moved := putTopic(t, ts.client, contract.Id, "b1-images", "http://169.254.169.254/")
	wantProblem(t, "moving a topic", moved.HTTPResponse, moved.ApplicationproblemJSON400, http.StatusBadRequest, contractapi.ProblemInvalidRequest)
	if d := moved.ApplicationproblemJSON400.Detail; d == nil || !strings.Contains(*d, "--"+PushEndpointsFlag) {
		t.Errorf("the refusal says %v, want it to name --%s", d, PushEndpointsFlag)
	}
	if got := listTopics(t, ts.client, contract.Id); len(got) != 1 || got[0].PushEndpoint != "https://events.example.com/hooks/images" {
		t.Errorf("after the refusals the contract lists %+v, want b1-images as it was", got)
	}
	if backend.callCount() != calls {
		t.Errorf("refused topics called the backend %d times", backend.callCount()-calls)
	}

	none := startServer(t, Config{Backend: &topicsBackend{}})
	contract = createContract(t, none.client, "uid-no-push-endpoints", contractapi.ContractRequest{Plan: "standard"})
	resp := putTopic(t, none.client, contract.Id, "b1-images", "https://events.example.com/hooks")
	wantProblem(t, "put with no list", resp.HTTPResponse, resp.ApplicationproblemJSON400, http.StatusBadRequest, contractapi.ProblemInvalidRequest)

	plain := startServer(t, Config{Backend: &fakeBackend{}})
	contract = createContract(t, plain.client, "uid-no-topics-no-list", contractapi.ContractRequest{Plan: "standard"})
	resp = putTopic(t, plain.client, contract.Id, "b1-images", "https://events.example.com/hooks")
	wantProblem(t, "put without topics", resp.HTTPResponse, resp.ApplicationproblemJSON501, http.StatusNotImplemented, contractapi.ProblemNotSupported)
}

// allow is the list of patterns, for a test server's Config.PushEndpoints.
func allow(t *testing.T, patterns ...string) egress.Allowlist {
	t.Helper()
	list, err := egress.Parse(patterns)
	if err != nil {
		t.Fatalf("egress.Parse: %v", err)
	}
	return list
}
