package storage

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCheckResponseClassifiesTheAPIsAnswers(t *testing.T) {
	problem := func(typ, title, detail string) []byte {
		return []byte(`{"type":"https://osm.dev/problems/` + typ + `","title":"` + title + `","status":422,"detail":"` + detail + `"}`)
	}
	tests := []struct {
		name       string
		status     int
		header     http.Header
		body       []byte
		wantErr    bool
		retryable  bool
		retryAfter time.Duration
		summary    string
	}{
		{name: "2xx is success", status: 201},
		{name: "a refusal with a problem body is not retried", status: 422,
			body:    problem("unknown-plan", "Unknown plan.", "plan 'gold' is not offered."),
			wantErr: true, summary: "Unknown plan: plan 'gold' is not offered (HTTP 422)"},
		{name: "a refusal without a body says its status", status: 404, wantErr: true, summary: "HTTP 404"},
		{name: "an outage is retried after Retry-After", status: 503, header: http.Header{"Retry-After": {"5"}},
			wantErr: true, retryable: true, retryAfter: 5 * time.Second, summary: "HTTP 503"},
		{name: "throttling is retried", status: 429, wantErr: true, retryable: true, summary: "HTTP 429"},
		{name: "a rejected token is the operator's to fix, so it is retried", status: 401, wantErr: true, retryable: true, summary: "HTTP 401"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tt.status, Header: tt.header}
			if resp.Header == nil {
				resp.Header = http.Header{}
			}
			err := checkResponse("creating the contract", resp, tt.body)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			if err == nil {
				return
			}
			ae, ok := asAPIError(err)
			if !ok {
				t.Fatalf("error %T is not an *apiError", err)
			}
			got := struct {
				Retryable  bool
				RetryAfter time.Duration
				Summary    string
			}{ae.retryable(), ae.retryAfter, ae.summary()}
			want := struct {
				Retryable  bool
				RetryAfter time.Duration
				Summary    string
			}{tt.retryable, tt.retryAfter, tt.summary}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("classification (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnUnansweredCallIsRetried(t *testing.T) {
	e := &apiError{op: "reading contract x", cause: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}
	if !e.retryable() {
		t.Error("a call without an answer must be retried")
	}
	if got, want := e.Error(), "reading contract x: dial tcp 127.0.0.1:1: connect: connection refused"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
