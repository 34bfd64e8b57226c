package contractserver

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// TestRGWTopicsAcrossContracts finds out, on the real RGW 16.2, what a tenant holding its
// contract's account keys can do with RGW's SNS API to another contract's notification topics,
// and to topics at all. Each subtest works on contracts of its own on one Ceph cluster.
func TestRGWTopicsAcrossContracts(t *testing.T) {
	ceph := startCeph(t)
	b, err := NewRGWBackend(RGWConfig{Endpoint: ceph.Endpoint, Region: ceph.Region,
		AdminAccessKey: ceph.AdminAccessKey, AdminSecretKey: ceph.AdminSecretKey})
	if err != nil {
		t.Fatalf("NewRGWBackend: %v", err)
	}
	admin := snsAs(ceph, Credentials{AccessKeyID: ceph.AdminAccessKey, SecretAccessKey: ceph.AdminSecretKey})

	// Contracts in RGW's default tenant, where every contract was before tenants (and those
	// made then still are): one namespace of topics for all, and RGW checks no permission.
	t.Run("in the default tenant another contract's keys read, repoint, delete and attach a topic", func(t *testing.T) {
		ctx := t.Context()
		a, bb := newRGWAccount(t, b, newContractID()), newRGWAccount(t, b, newContractID())
		toA, toB := newEventReceiver(t), newEventReceiver(t)
		arnB, err := b.PutTopic(ctx, bb.id, "images", toB.URL)
		if err != nil {
			t.Fatalf("PutTopic: %v", err)
		}
		mustNotify(t, bb.s3, bb.bucket, "images", arnB)
		upload(t, bb.s3, bb.bucket, "b1")
		toB.wait(t, "b1")

		topicB := rgwTopicName(bb.id, "images")
		if got := a.sns.topics(t); got[topicB] != toB.URL {
			t.Errorf("A's ListTopics shows %v, want B's topic %s pushing to %s", got, topicB, toB.URL)
		}
		if got, err := a.sns.endpointOf(arnB); err != nil || got != toB.URL {
			t.Errorf("A's GetTopicAttributes of B's topic: %q, %v; want %s", got, err, toB.URL)
		}

		arn, err := a.sns.createTopic(topicB, toA.URL)
		if err != nil || arn != arnB {
			t.Fatalf("A's CreateTopic with B's topic name: %q, %v; want B's ARN %s", arn, err, arnB)
		}
		upload(t, bb.s3, bb.bucket, "b2")
		toB.wait(t, "b2") // a notification pushes to its own copy of the topic...
		mustNotify(t, bb.s3, bb.bucket, "images", arnB)
		upload(t, bb.s3, bb.bucket, "b3")
		toA.wait(t, "b3") // ...made again from the topic when the notification is written again
		if toB.got("b3") {
			t.Error("B's receiver got the event of b3 too")
		}
		if _, err := b.PutTopic(ctx, bb.id, "images", toB.URL); err != nil {
			t.Fatalf("PutTopic again: %v", err)
		}
		upload(t, bb.s3, bb.bucket, "b4")
		toA.wait(t, "b4") // repairing the topic does not repair the copy

		mustNotify(t, a.s3, a.bucket, "taken", arnB)
		upload(t, a.s3, a.bucket, "a1")
		toB.wait(t, "a1") // A's events reach B's receiver through B's topic

		if err := a.sns.deleteTopic(arnB); err != nil {
			t.Fatalf("A's DeleteTopic of B's topic: %v", err)
		}
		if _, err := admin.endpointOf(arnB); snsCode(err) != "NoSuchEntity" {
			t.Errorf("B's topic after A deleted it: %v, want NoSuchEntity", err)
		}
		if code := rgwErrorCode(notify(t, bb.s3, bb.bucket, "images", arnB)); code != "NoSuchKey" {
			t.Errorf("B's notification after A deleted its topic: %q, want NoSuchKey", code)
		}
	})

	t.Run("any user makes topics pushing anywhere, and no policy of RGW 16.2 stops it", func(t *testing.T) {
		ctx := t.Context()
		a := newRGWAccount(t, b, newContractID())
		to := newEventReceiver(t) // 127.0.0.1: where no platform would let a tenant push
		arn, err := a.sns.createTopic("own", to.URL)
		if err != nil {
			t.Fatalf("CreateTopic with the account's keys: %v", err)
		}
		for name, endpoint := range map[string]string{"own-amqp": "amqp://127.0.0.1:5672", "own-kafka": "kafka://127.0.0.1:9092"} {
			if _, err := a.sns.createTopic(name, endpoint); err != nil {
				t.Errorf("CreateTopic pushing to %s: %v", endpoint, err)
			}
		}

		if _, err := b.api.AddUserCap(ctx, localenv.CephAdminUID, "user-policy=*"); err != nil {
			t.Fatalf("giving the admin the user-policy cap: %v", err)
		}
		iam := newSignedClient("iam", ceph.Region, ceph.AdminAccessKey, ceph.AdminSecretKey, http.DefaultClient)
		putUserPolicy := func(name, actions string) error {
			doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":[` + actions + `],"Resource":"*"}]}`
			form := url.Values{"Action": {"PutUserPolicy"}, "UserName": {rgwUserID(a.id)}, "PolicyName": {name}, "PolicyDocument": {doc}}
			_, err := iam.do(ctx, "PutUserPolicy", http.MethodPost, ceph.Endpoint+"/", "application/x-www-form-urlencoded", []byte(form.Encode()))
			return err
		}
		if err := putUserPolicy("no-topics", `"sns:CreateTopic"`); snsCode(err) != "MalformedPolicyDocument" {
			t.Errorf("a user policy on sns:CreateTopic: %v, want MalformedPolicyDocument (RGW 16.2 knows no SNS actions)", err)
		}
		if err := putUserPolicy("no-notifications", `"s3:PutBucketNotification"`); err != nil {
			t.Fatalf("a user policy denying s3:PutBucketNotification: %v", err)
		}
		_, err = a.s3.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(a.bucket), Policy: aws.String(
			`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:PutBucketNotification","Resource":"arn:aws:s3:::` + a.bucket + `"}]}`)})
		if err != nil {
			t.Fatalf("a bucket policy denying s3:PutBucketNotification: %v", err)
		}
		mustNotify(t, a.s3, a.bucket, "own", arn)
		upload(t, a.s3, a.bucket, "sent")
		to.wait(t, "sent")

		// The policies are in force, for what RGW checks them for.
		if err := putUserPolicy("no-reads", `"s3:GetObject"`); err != nil {
			t.Fatalf("a user policy denying s3:GetObject: %v", err)
		}
		_, err = a.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(a.bucket), Key: aws.String("sent")})
		if code := rgwErrorCode(err); code != "AccessDenied" {
			t.Errorf("GetObject under a user policy denying it: %q, want AccessDenied", code)
		}
	})

	t.Run("a gateway without the notifications API refuses topics and bucket notifications to everyone", func(t *testing.T) {
		ctx := t.Context()
		a := newRGWAccount(t, b, newContractID())
		endpoint := startGatewayWithout(t, ceph, "notifications")
		for who, sns := range map[string]*rgwSNS{"the account": a.sns.at(endpoint), "the admin": admin.at(endpoint)} {
			if _, err := sns.createTopic("any", "http://127.0.0.1:9/"); snsStatus(err) != http.StatusMethodNotAllowed {
				t.Errorf("CreateTopic by %s: %v, want 405", who, err)
			}
		}
		client := rgwS3(b, a.creds, func(o *s3.Options) { o.BaseEndpoint = aws.String(endpoint) })
		if code := rgwErrorCode(notify(t, client, a.bucket, "any", "arn:aws:sns:default::any")); code != "InvalidArgument" {
			t.Errorf("PutBucketNotificationConfiguration: %q, want InvalidArgument", code)
		}
		if _, err := client.ListBuckets(ctx, &s3.ListBucketsInput{}); err != nil {
			t.Errorf("ListBuckets on the same gateway: %v", err)
		}
	})
}

// rgwTestAccount is a contract's account made by the backend, with its keys, an S3 and an SNS
// client signing with them, and a bucket of its own.
type rgwTestAccount struct {
	id, bucket string
	creds      Credentials
	s3         *s3.Client
	sns        *rgwSNS
}

// newRGWAccount makes the account of contract id (a contract id, or the account's name) with a
// bucket.
func newRGWAccount(t *testing.T, b *RGWBackend, id string) *rgwTestAccount {
	t.Helper()
	a := &rgwTestAccount{id: id, bucket: "topics-" + newContractID(), creds: newCredentials(newAccessKeyID())}
	if err := b.CreateAccount(t.Context(), id, a.creds, Plan{Name: "standard"}); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	a.s3 = rgwS3(b, a.creds)
	a.sns = &rgwSNS{endpoint: b.Endpoint(),
		c: newSignedClient("sns", b.Region(), a.creds.AccessKeyID, a.creds.SecretAccessKey, http.DefaultClient)}
	if _, err := a.s3.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(a.bucket)}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	return a
}

// rgwSNS calls RGW's SNS API with one key pair, as a tenant holding its account's keys can.
type rgwSNS struct {
	endpoint string
	c        *signedClient
}

func snsAs(ceph *localenv.Ceph, creds Credentials) *rgwSNS {
	return &rgwSNS{endpoint: ceph.Endpoint,
		c: newSignedClient("sns", ceph.Region, creds.AccessKeyID, creds.SecretAccessKey, http.DefaultClient)}
}

// at is the same caller at another gateway.
func (s *rgwSNS) at(endpoint string) *rgwSNS { return &rgwSNS{endpoint: endpoint, c: s.c} }

func (s *rgwSNS) call(form url.Values) ([]byte, error) {
	return s.c.do(context.Background(), form.Get("Action"), http.MethodPost, s.endpoint+"/",
		"application/x-www-form-urlencoded", []byte(form.Encode()))
}

func (s *rgwSNS) createTopic(name, endpoint string) (string, error) {
	data, err := s.call(url.Values{"Action": {"CreateTopic"}, "Name": {name},
		"Attributes.entry.1.key": {"push-endpoint"}, "Attributes.entry.1.value": {endpoint}})
	if err != nil {
		return "", err
	}
	var out struct {
		ARN string `xml:"CreateTopicResult>TopicArn"`
	}
	err = xml.Unmarshal(data, &out)
	return out.ARN, err
}

func (s *rgwSNS) deleteTopic(arn string) error {
	_, err := s.call(url.Values{"Action": {"DeleteTopic"}, "TopicArn": {arn}})
	return err
}

// topics is what ListTopics answers: each topic's name and where it pushes.
func (s *rgwSNS) topics(t *testing.T) map[string]string {
	t.Helper()
	data, err := s.call(url.Values{"Action": {"ListTopics"}})
	if err != nil {
		t.Fatalf("ListTopics: %v", err)
	}
	var out struct {
		Topics []struct {
			Name     string `xml:"Name"`
			Endpoint string `xml:"EndPoint>EndpointAddress"`
		} `xml:"ListTopicsResult>Topics>member"`
	}
	if err := xml.Unmarshal(data, &out); err != nil {
		t.Fatalf("reading ListTopics: %v", err)
	}
	topics := map[string]string{}
	for _, tp := range out.Topics {
		topics[tp.Name] = tp.Endpoint
	}
	return topics
}

// endpointOf is where the topic pushes, as GetTopicAttributes answers.
func (s *rgwSNS) endpointOf(arn string) (string, error) {
	data, err := s.call(url.Values{"Action": {"GetTopicAttributes"}, "TopicArn": {arn}})
	if err != nil {
		return "", err
	}
	var out struct {
		Entries []struct {
			Key   string `xml:"key"`
			Value string `xml:"value"`
		} `xml:"GetTopicAttributesResult>Attributes>entry"`
	}
	if err := xml.Unmarshal(data, &out); err != nil {
		return "", err
	}
	for _, e := range out.Entries {
		if e.Key == "EndPoint" {
			var ep struct{ EndpointAddress string }
			err := json.Unmarshal([]byte(e.Value), &ep)
			return ep.EndpointAddress, err
		}
	}
	return "", errors.New("GetTopicAttributes answered no EndPoint")
}

// snsCode and snsStatus are the error code and HTTP status of an SNS API answer.
func snsCode(err error) string {
	var bErr *backendError
	if errors.As(err, &bErr) {
		return bErr.Code
	}
	return ""
}

func snsStatus(err error) int {
	var bErr *backendError
	if errors.As(err, &bErr) {
		return bErr.Status
	}
	return 0
}

// notify sets the bucket's notification id (RGW adds it to the others) on topic arn, for every
// object made.
func notify(t *testing.T, client *s3.Client, bucket, id, arn string) error {
	_, err := client.PutBucketNotificationConfiguration(t.Context(), &s3.PutBucketNotificationConfigurationInput{
		Bucket: aws.String(bucket),
		NotificationConfiguration: &s3types.NotificationConfiguration{TopicConfigurations: []s3types.TopicConfiguration{{
			Id: aws.String(id), TopicArn: aws.String(arn), Events: []s3types.Event{"s3:ObjectCreated:*"}}}},
	})
	return err
}

func mustNotify(t *testing.T, client *s3.Client, bucket, id, arn string) {
	t.Helper()
	if err := notify(t, client, bucket, id, arn); err != nil {
		t.Fatalf("notification %s of bucket %s on %s: %v", id, bucket, arn, err)
	}
}

func upload(t *testing.T, client *s3.Client, bucket, key string) {
	t.Helper()
	_, err := client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(key)})
	if err != nil {
		t.Fatalf("PutObject %s/%s: %v", bucket, key, err)
	}
}

// eventReceiver is an HTTP endpoint on 127.0.0.1 that keeps the object keys of the S3 events
// RGW pushes to it.
type eventReceiver struct {
	URL  string
	mu   sync.Mutex
	keys []string
}

func newEventReceiver(t *testing.T) *eventReceiver {
	r := &eventReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var ev struct {
			Records []struct {
				S3 struct {
					Object struct {
						Key string `json:"key"`
					} `json:"object"`
				} `json:"s3"`
			} `json:"Records"`
		}
		if err := json.NewDecoder(io.LimitReader(req.Body, 1<<20)).Decode(&ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, rec := range ev.Records {
			r.keys = append(r.keys, rec.S3.Object.Key)
		}
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/events"
	return r
}

func (r *eventReceiver) got(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.keys, key)
}

// wait waits a few seconds for the event of the object key.
func (r *eventReceiver) wait(t *testing.T, key string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if r.got(key) {
			return
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.Fatalf("no event of %s reached %s; it got %v", key, r.URL, r.keys)
}

// startGatewayWithout starts a second radosgw on the cluster, serving every API of RGW 16.2's
// default rgw_enable_apis but the one named, and returns its endpoint.
func startGatewayWithout(t *testing.T, ceph *localenv.Ceph, api string) string {
	t.Helper()
	apis := slices.DeleteFunc([]string{"s3", "s3website", "swift", "swift_auth", "admin", "sts", "iam", "notifications"},
		func(a string) bool { return a == api })
	bin, err := exec.LookPath("radosgw")
	if err != nil {
		t.Fatalf("radosgw: %v", err)
	}
	port, err := localenv.FreePort()
	if err != nil {
		t.Fatalf("FreePort: %v", err)
	}
	name := "rgw-without-" + api
	p, err := localenv.StartProcess(name, filepath.Join(ceph.Dir, "log", name+".out"), bin, []string{
		"-c", filepath.Join(ceph.Dir, "ceph.conf"), "-n", "client.rgw", "-f",
		"--rgw-frontends", "beast endpoint=127.0.0.1:" + strconv.Itoa(port),
		"--rgw-enable-apis", strings.Join(apis, ", "),
		"--log-file", filepath.Join(ceph.Dir, "log", name+".log"),
		"--pid-file", filepath.Join(ceph.Dir, "run", name+".pid"),
		"--admin-socket", filepath.Join(ceph.Dir, "run", name+".asok"),
	}, nil)
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	// The cluster is thrown away: nothing for radosgw's slow clean exit to save.
	t.Cleanup(p.Kill)
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := localenv.WaitHTTP(t.Context(), p, endpoint, time.Minute); err != nil {
		t.Fatal(err)
	}
	return endpoint
}
