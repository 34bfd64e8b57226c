package objectstore

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// awsSubresources answers the bucket sub-resources encryption, publicAccessBlock and logging as
// AWS documents them: a PUT keeps the document (whose shape is the GET's answer), a DELETE drops
// it, and a GET of one never set answers what AWS answers for a bucket that never set it.
type awsSubresources struct {
	mu   sync.Mutex
	docs map[string][]byte
}

// awsUnset is AWS's answer for a sub-resource never set: a 200 with a body, or a 404 code.
var awsUnset = map[string]struct{ body, code string }{
	// Every bucket is encrypted with SSE-S3 by default since January 2023.
	"encryption": {body: `<ServerSideEncryptionConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule>` +
		`<ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault>` +
		`<BucketKeyEnabled>false</BucketKeyEnabled></Rule></ServerSideEncryptionConfiguration>`},
	"publicAccessBlock": {code: "NoSuchPublicAccessBlockConfiguration"},
	"logging":           {body: `<BucketLoggingStatus xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>`},
	"ownershipControls": {code: "OwnershipControlsNotFoundError"},
}

func (a *awsSubresources) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var sub string
	for s := range awsUnset {
		if r.URL.Query().Has(s) {
			sub = s
		}
	}
	if sub == "" {
		w.WriteHeader(http.StatusNotImplemented)
		_, _ = w.Write([]byte(`<Error><Code>NotImplemented</Code><Message>not in this fake</Message></Error>`))
		return
	}
	switch r.Method {
	case http.MethodPut:
		body, _ := io.ReadAll(r.Body)
		a.docs[sub] = body
	case http.MethodDelete:
		delete(a.docs, sub)
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet:
		if doc, ok := a.docs[sub]; ok {
			_, _ = w.Write(doc)
			return
		}
		if unset := awsUnset[sub]; unset.code != "" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`<Error><Code>` + unset.code + `</Code><Message>none</Message></Error>`))
		} else {
			_, _ = w.Write([]byte(unset.body))
		}
	}
}

func awsFake(t *testing.T) Store {
	t.Helper()
	srv := httptest.NewServer(&awsSubresources{docs: map[string][]byte{}})
	t.Cleanup(srv.Close)
	return New(Config{Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s", MaxAttempts: 1,
		HTTPClient: NewHTTPClient(5*time.Second, 1, nil)})
}

func TestEncryptionBlockAndLoggingRoundTripAsAWSAnswersThem(t *testing.T) {
	ctx := context.Background()
	st := awsFake(t)
	if enc, err := st.Encryption(ctx, "b"); err != nil || enc != (Encryption{Algorithm: SSES3}) {
		t.Errorf("encryption of a new bucket = %+v, %v; want AWS's default, SSE-S3", enc, err)
	}
	if b, err := st.PublicAccessBlock(ctx, "b"); err != nil || b != (PublicAccessBlock{}) {
		t.Errorf("block of a new bucket = %+v, %v; want none", b, err)
	}
	if l, err := st.Logging(ctx, "b"); err != nil || l != (Logging{}) {
		t.Errorf("logging of a new bucket = %+v, %v; want off", l, err)
	}

	enc := Encryption{Algorithm: SSEKMS, KMSKeyID: "arn:aws:kms:us-east-1:111122223333:key/k1", BucketKeyEnabled: true}
	block := PublicAccessBlock{BlockPublicAcls: true, RestrictPublicBuckets: true}
	logging := Logging{TargetBucket: "logs", TargetPrefix: "b/"}
	for name, err := range map[string]error{
		"PutEncryption":        st.PutEncryption(ctx, "b", enc),
		"PutPublicAccessBlock": st.PutPublicAccessBlock(ctx, "b", block),
		"PutLogging":           st.PutLogging(ctx, "b", logging),
	} {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if got, err := st.Encryption(ctx, "b"); err != nil || got != enc {
		t.Errorf("encryption = %+v, %v; want %+v", got, err, enc)
	}
	if got, err := st.PublicAccessBlock(ctx, "b"); err != nil || got != block {
		t.Errorf("block = %+v, %v; want %+v", got, err, block)
	}
	if got, err := st.Logging(ctx, "b"); err != nil || got != logging {
		t.Errorf("logging = %+v, %v; want %+v", got, err, logging)
	}

	if err := st.DeletePublicAccessBlock(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeletePublicAccessBlock(ctx, "b"); err != nil {
		t.Errorf("deleting a block that is gone: %v", err)
	}
	if err := st.PutLogging(ctx, "b", Logging{}); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Logging(ctx, "b"); err != nil || got != (Logging{}) {
		t.Errorf("logging after turning it off = %+v, %v", got, err)
	}
}

func TestA405ForASubresourceIsTheServerLackingIt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusMethodNotAllowed) // Ceph RGW's answer to PutBucketLogging
		_, _ = w.Write([]byte(`<Error><Code>MethodNotAllowed</Code><Message></Message></Error>`))
	}))
	defer srv.Close()
	st := New(Config{Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s", MaxAttempts: 1,
		HTTPClient: NewHTTPClient(5*time.Second, 1, nil)})
	err := st.PutLogging(context.Background(), "b", Logging{TargetBucket: "logs"})
	if !IsNotImplemented(err) || IsTransient(err) {
		t.Errorf("IsNotImplemented(%v) = false or IsTransient true", err)
	}
}

func TestOwnershipControlsRoundTripAsAWSAnswersThem(t *testing.T) {
	ctx := context.Background()
	st := awsFake(t)
	if o, err := st.OwnershipControls(ctx, "b"); err != nil || o != "" {
		t.Errorf("ownership of a bucket without controls = %q, %v; want none", o, err)
	}
	for _, want := range []string{"BucketOwnerEnforced", "BucketOwnerPreferred", "ObjectWriter"} {
		if err := st.PutOwnershipControls(ctx, "b", want); err != nil {
			t.Fatalf("PutOwnershipControls %s: %v", want, err)
		}
		if got, err := st.OwnershipControls(ctx, "b"); err != nil || got != want {
			t.Errorf("ownership = %q, %v; want %q", got, err, want)
		}
	}
}

// Ceph RGW 16.2 knows no ownershipControls sub-resource: it answers the GET with the bucket's
// listing, which must read as no controls rather than as an error or a value.
func TestOwnershipControlsOfAServerAnsweringAListingAreNone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
			`<Name>b</Name><Prefix></Prefix><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>` +
			`<Contents><Key>k</Key><Size>1</Size></Contents></ListBucketResult>`))
	}))
	defer srv.Close()
	st := New(Config{Endpoint: srv.URL, Region: "us-east-1", AccessKeyID: "k", SecretAccessKey: "s", MaxAttempts: 1,
		HTTPClient: NewHTTPClient(5*time.Second, 1, nil)})
	if o, err := st.OwnershipControls(context.Background(), "b"); err != nil || o != "" {
		t.Errorf("OwnershipControls = %q, %v; want none", o, err)
	}
}
