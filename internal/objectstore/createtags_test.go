package objectstore

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// s3Stub answers CreateBucket and the tagging calls as a server of one kind does, and records
// what it was asked. It stands for servers this machine cannot run (AWS) or that behave in one
// particular way; the real servers are in the controller's suites.
type s3Stub struct {
	mu sync.Mutex
	stubKind
	tags  map[string]string // bucket -> its tagging document, as kept
	calls []string
}

// stubKind is what a server does with tags given in CreateBucket: keeps them, or refuses them
// (400 with the code refusesTags); neither: ignores them.
type stubKind struct {
	takesTags   bool
	refusesTags string
	// refusesRecreate answers a CreateBucket of a bucket made before 409
	// BucketAlreadyOwnedByYou, as versitygw does; otherwise 200, as Ceph RGW does.
	refusesRecreate bool
}

func (s *s3Stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	bucket := strings.Trim(r.URL.Path, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	_, tagging := r.URL.Query()["tagging"]
	withTags := strings.Contains(string(body), "<Tags>")
	switch {
	case r.Method == http.MethodPut && !tagging:
		call := map[bool]string{true: "CreateBucket+tags", false: "CreateBucket"}[withTags]
		if r.Header.Get("x-amz-object-ownership") == "" {
			call += "-ownership"
		}
		s.calls = append(s.calls, call)
		if withTags && s.refusesTags != "" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `<Error><Code>`+s.refusesTags+`</Code></Error>`)
			return
		}
		if _, made := s.tags[bucket]; made && s.refusesRecreate {
			w.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(w, `<Error><Code>BucketAlreadyOwnedByYou</Code></Error>`)
			return
		}
		if withTags && s.takesTags {
			s.tags[bucket] = string(body)
		}
	case r.Method == http.MethodPut:
		s.calls = append(s.calls, "PutBucketTagging")
		s.tags[bucket] = string(body)
	case r.Method == http.MethodGet && tagging:
		s.calls = append(s.calls, "GetBucketTagging")
		kept, ok := s.tags[bucket]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `<Error><Code>NoSuchTagSet</Code></Error>`)
			return
		}
		// Both documents list Tag elements; a tagging document is what GetBucketTagging returns.
		start, end := strings.Index(kept, "<Tag>"), strings.LastIndex(kept, "</Tag>")
		_, _ = io.WriteString(w, `<Tagging><TagSet>`+kept[start:end+len("</Tag>")]+`</TagSet></Tagging>`)
	default:
		w.WriteHeader(http.StatusNotImplemented)
	}
}

func (s *s3Stub) takeCalls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	calls := s.calls
	s.calls = nil
	return calls
}

func TestCreateBucketTagsAtCreationOnlyWhereTheServerKeepsThem(t *testing.T) {
	tags := map[string]string{"storage.osm.dev/bucket": "ns/data", "storage.osm.dev/bucket-uid": "uid-1"}
	for _, tt := range []struct {
		name                string
		kind                stubKind
		wantTagged          bool
		firstCalls, thenAll string
	}{
		{"a server that keeps them (AWS, versitygw): checked once, and what it answers a second creation asked once", stubKind{takesTags: true}, true,
			"CreateBucket+tags GetBucketTagging CreateBucket+tags", "CreateBucket+tags"},
		{"a server that ignores them: the caller tags", stubKind{}, false,
			"CreateBucket+tags GetBucketTagging", "CreateBucket"},
		{"a server that refuses them: made without", stubKind{refusesTags: "MalformedXML"}, false,
			"CreateBucket+tags CreateBucket", "CreateBucket"},
		{"a server that refuses them with a code ownership controls also get: made without, with ownership",
			stubKind{refusesTags: "InvalidArgument"}, false,
			"CreateBucket+tags CreateBucket+tags-ownership CreateBucket", "CreateBucket"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stub := &s3Stub{stubKind: tt.kind, tags: map[string]string{}}
			srv := httptest.NewServer(stub)
			defer srv.Close()
			s := New(Config{Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "a", SecretAccessKey: "b",
				HTTPClient: NewHTTPClient(10*time.Second, 2, nil), MaxAttempts: 1})
			for i, bucket := range []string{"first", "second"} {
				tagged, err := s.CreateBucket(context.Background(), bucket, CreateOptions{Tags: tags})
				if err != nil {
					t.Fatalf("CreateBucket %s: %v", bucket, err)
				}
				if tagged != tt.wantTagged {
					t.Errorf("CreateBucket %s: tagged = %v, want %v", bucket, tagged, tt.wantTagged)
				}
				want := map[bool]string{true: tt.firstCalls, false: tt.thenAll}[i == 0]
				if got := strings.Join(stub.takeCalls(), " "); got != want {
					t.Errorf("creating %s called %q, want %q", bucket, got, want)
				}
			}
		})
	}
}

// A Store tells a bucket's existence and owner from CreateBucket alone only on a server that both
// keeps the tags given at creation and refuses to create a bucket the account has: learnt from
// its first creation.
func TestCreateTellsOnlyWhereTheServerKeepsTagsAndRefusesASecondCreation(t *testing.T) {
	tags := map[string]string{"storage.osm.dev/bucket": "ns/data", "storage.osm.dev/bucket-uid": "uid-1"}
	for _, tt := range []struct {
		name string
		kind stubKind
		want bool
	}{
		{"keeps tags, refuses a second creation (versitygw, AWS outside us-east-1)", stubKind{takesTags: true, refusesRecreate: true}, true},
		{"keeps tags, answers 200 again (AWS in us-east-1)", stubKind{takesTags: true}, false},
		{"drops tags, refuses a second creation", stubKind{refusesRecreate: true}, false},
		{"drops tags, answers 200 again (Ceph RGW)", stubKind{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stub := &s3Stub{stubKind: tt.kind, tags: map[string]string{}}
			srv := httptest.NewServer(stub)
			defer srv.Close()
			s := New(Config{Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "a", SecretAccessKey: "b",
				HTTPClient: NewHTTPClient(10*time.Second, 2, nil), MaxAttempts: 1})
			if s.CreateTells() {
				t.Fatal("told before any creation")
			}
			if _, err := s.CreateBucket(context.Background(), "first", CreateOptions{Tags: tags}); err != nil {
				t.Fatal(err)
			}
			if got := s.CreateTells(); got != tt.want {
				t.Errorf("CreateTells() = %v after the first creation, want %v", got, tt.want)
			}
		})
	}
}
