package contractserver

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
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
	ts := startServer(t, Config{Backend: backend})
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
	ts := startServer(t, Config{Backend: &topicsBackend{}})
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
