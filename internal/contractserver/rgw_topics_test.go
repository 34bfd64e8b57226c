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
	"github.com/ceph/go-ceph/rgw/admin"

	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
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
	adminSNS := snsAs(ceph, Credentials{AccessKeyID: ceph.AdminAccessKey, SecretAccessKey: ceph.AdminSecretKey})

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
		if _, err := adminSNS.endpointOf(arnB); snsCode(err) != "NoSuchEntity" {
			t.Errorf("B's topic after A deleted it: %v, want NoSuchEntity", err)
		}
		if code := rgwErrorCode(notify(t, bb.s3, bb.bucket, "images", arnB)); code != "NoSuchKey" {
			t.Errorf("B's notification after A deleted its topic: %q, want NoSuchKey", code)
		}
	})

	// Contracts made through the server, each in an RGW tenant of its own.
	t.Run("in a tenant of its own no other contract's keys reach a contract's topics", func(t *testing.T) {
		ctx := t.Context()
		ts := startServer(t, Config{Backend: b, PushEndpoints: allow(t, "http://127.0.0.1:*")})
		a, bb := serverAccount(t, b, ts, "uid-topics-a"), serverAccount(t, b, ts, "uid-topics-b")
		toA, toB := newEventReceiver(t), newEventReceiver(t)
		made := putTopic(t, ts.client, bb.id, "images", toB.URL)
		if made.JSON201 == nil {
			t.Fatalf("PutTopic: %d %s", made.StatusCode(), made.Body)
		}
		arnB := made.JSON201.Arn
		if !strings.HasPrefix(arnB, "arn:aws:sns:"+ceph.Region+":"+bb.id+":") {
			t.Errorf("B's topic is %s, not in B's tenant %s", arnB, bb.id)
		}
		topicB := arnB[strings.LastIndex(arnB, ":")+1:]
		mustNotify(t, bb.s3, bb.bucket, "images", arnB)
		upload(t, bb.s3, bb.bucket, "b1")
		toB.wait(t, "b1")

		if got := a.sns.topics(t); len(got) > 0 {
			t.Errorf("A's ListTopics shows %v, want none of B's", got)
		}
		if _, err := a.sns.endpointOf(arnB); snsCode(err) != "NoSuchEntity" {
			t.Errorf("A's GetTopicAttributes of B's topic: %v, want NoSuchEntity", err)
		}
		if arn, err := a.sns.createTopic(topicB, toA.URL); err != nil || arn == arnB {
			t.Errorf("A's CreateTopic with B's topic name: %q, %v; want a topic of A's own", arn, err)
		}
		if err := a.sns.deleteTopic(arnB); err != nil {
			t.Errorf("A's DeleteTopic of B's topic: %v, want a no-op", err)
		}
		if code := rgwErrorCode(notify(t, a.s3, a.bucket, "taken", arnB)); code != "NoSuchKey" {
			t.Errorf("A's notification on B's topic: %q, want NoSuchKey", code)
		}
		mustNotify(t, bb.s3, bb.bucket, "images", arnB) // the topic is there, as B made it
		upload(t, bb.s3, bb.bucket, "b2")
		toB.wait(t, "b2")
		if toA.got("b2") {
			t.Error("A's receiver got B's event")
		}

		// Nor a contract of the default tenant's, made before tenants.
		old := newRGWAccount(t, b, newContractID())
		arnOld, err := b.PutTopic(ctx, old.id, "images", toB.URL)
		if err != nil {
			t.Fatalf("PutTopic of a contract in the default tenant: %v", err)
		}
		if _, err := a.sns.endpointOf(arnOld); snsCode(err) != "NoSuchEntity" {
			t.Errorf("A's GetTopicAttributes of the old contract's topic: %v, want NoSuchEntity", err)
		}
		_ = a.sns.deleteTopic(arnOld)
		if got, err := adminSNS.endpointOf(arnOld); err != nil || got != toB.URL {
			t.Errorf("the old contract's topic after A deleted it: %q, %v", got, err)
		}

		// The tenant's topics go with the contract, one its keys made included.
		if _, err := bb.sns.createTopic("own", toB.URL); err != nil {
			t.Fatalf("B's CreateTopic: %v", err)
		}
		cancelContract(t, ts.client, bb.id, true)
		if left := tenantTopics(t, b, bb.id); len(left) > 0 {
			t.Errorf("B's tenant keeps topics %v after its contract was cancelled", left)
		}
	})

	t.Run("a contract's tenant has its own bucket names, and reaches its website by path", func(t *testing.T) {
		ctx := t.Context()
		ts := startServer(t, Config{Backend: b, WebsiteEndpoint: ceph.WebsiteEndpoint})
		a, bb := serverAccount(t, b, ts, "uid-site-a"), serverAccount(t, b, ts, "uid-site-b")
		name := "site-" + newContractID()
		for _, acct := range []*rgwTestAccount{a, bb} {
			if _, err := acct.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
				t.Fatalf("CreateBucket %s by contract %s: %v", name, acct.id, err)
			}
		}
		if got, want := a.contract.BucketPolicy.OwnerPrincipal["AWS"], "arn:aws:iam::"+a.id+":user/contract-"+a.id; got != want {
			t.Errorf("the owner in bucket policies is %q, want %q", got, want)
		}

		site := strings.ReplaceAll(a.contract.Website.Endpoint, "{bucket}", name)
		if want := strings.Replace(ceph.WebsiteEndpoint, "{bucket}.", "", 1) + "/" + a.id + ":" + name; site != want {
			t.Errorf("the website of %s is at %s, want %s", name, site, want)
		}
		_, err := a.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(name), Key: aws.String("index.html"),
			Body: strings.NewReader("<h1>a</h1>"), ContentType: aws.String("text/html"), ACL: s3types.ObjectCannedACLPublicRead})
		if err != nil {
			t.Fatalf("PutObject: %v", err)
		}
		_, err = a.s3.PutBucketWebsite(ctx, &s3.PutBucketWebsiteInput{Bucket: aws.String(name), WebsiteConfiguration: &s3types.WebsiteConfiguration{
			IndexDocument: &s3types.IndexDocument{Suffix: aws.String("index.html")}}})
		if err != nil {
			t.Fatalf("PutBucketWebsite: %v", err)
		}
		if code, body, err := localenv.GetWebsite(ctx, site, "/"); err != nil || code != http.StatusOK || body != "<h1>a</h1>" {
			t.Errorf("GET %s/: %d %q %v", site, code, body, err)
		}

		// Anonymous S3 requests name the bucket with its tenant; the name alone is the default
		// tenant's.
		for path, want := range map[string]int{"/" + a.id + ":" + name + "/index.html": http.StatusOK, "/" + name + "/index.html": http.StatusNotFound} {
			resp, err := http.Get(ceph.Endpoint + path)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("anonymous GET %s: %d, want %d", path, resp.StatusCode, want)
			}
		}
	})

	t.Run("an admin that is no system user makes no topic outside the contract's tenant, and deletes none", func(t *testing.T) {
		ctx := t.Context()
		generate := true
		u, err := b.api.CreateUser(ctx, admin.User{ID: "plain-admin-" + newContractID(), DisplayName: "admin without system", GenerateKey: &generate})
		if err != nil || len(u.Keys) == 0 {
			t.Fatalf("CreateUser: %v", err)
		}
		if _, err := b.api.AddUserCap(ctx, u.ID, "users=*;buckets=*"); err != nil {
			t.Fatalf("AddUserCap: %v", err)
		}
		plain, err := NewRGWBackend(RGWConfig{Endpoint: ceph.Endpoint, Region: ceph.Region,
			AdminAccessKey: u.Keys[0].AccessKey, AdminSecretKey: u.Keys[0].SecretKey})
		if err != nil {
			t.Fatalf("NewRGWBackend: %v", err)
		}
		account := plain.AccountName(newContractID())
		if err := plain.CreateAccount(ctx, account, newCredentials(newAccessKeyID()), Plan{Name: "standard"}); err != nil {
			t.Fatalf("CreateAccount: %v", err)
		}
		if _, err := plain.PutTopic(ctx, account, "images", "http://127.0.0.1:9/"); err == nil || !strings.Contains(err.Error(), "system user") {
			t.Errorf("PutTopic by an admin that is no system user: %v, want an error that says it must be one", err)
		}
		if _, ok := adminSNS.topics(t)[rgwTopicName(account, "images")]; ok {
			t.Error("the topic was left in the default tenant")
		}
		old := newRGWAccount(t, b, newContractID())
		arnOld, err := b.PutTopic(ctx, old.id, "images", "http://127.0.0.1:9/")
		if err != nil {
			t.Fatalf("PutTopic of a contract in the default tenant: %v", err)
		}
		if err := plain.DeleteAccount(ctx, account, true); err == nil {
			t.Error("DeleteAccount by an admin that is no system user succeeded, with the default tenant's topics in its list")
		}
		if _, err := adminSNS.endpointOf(arnOld); err != nil {
			t.Errorf("the default tenant's topic after that: %v", err)
		}
	})

	// So a contract made before tenants stays where it is, sharing the default tenant's topics.
	t.Run("RGW moves no user into a tenant", func(t *testing.T) {
		old := newRGWAccount(t, b, newContractID())
		out, err := exec.CommandContext(t.Context(), "radosgw-admin", "-c", filepath.Join(ceph.Dir, "ceph.conf"), "user", "rename",
			"--uid", rgwUserID(old.id), "--new-uid", old.id+"$"+rgwUserID(old.id)).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "users have to be under the same tenant namespace") {
			t.Errorf("radosgw-admin user rename into a tenant: %v: %s", err, out)
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
		for who, sns := range map[string]*rgwSNS{"the account": a.sns.at(endpoint), "the admin": adminSNS.at(endpoint)} {
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
	// contract is the server's answer, for an account bought from it.
	contract *contractapi.ContractWithCredentials
}

// newRGWAccount makes the account of contract id in RGW's default tenant, as the server did
// before tenants, with a bucket.
func newRGWAccount(t *testing.T, b *RGWBackend, id string) *rgwTestAccount {
	t.Helper()
	creds := newCredentials(newAccessKeyID())
	if err := b.CreateAccount(t.Context(), id, creds, Plan{Name: "standard"}); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	return withClients(t, b, id, creds)
}

// serverAccount buys a contract from the server, as the operator does, with a bucket.
func serverAccount(t *testing.T, b *RGWBackend, ts *testServer, key string) *rgwTestAccount {
	t.Helper()
	c := createContract(t, ts.client, key, contractapi.ContractRequest{Plan: "standard"})
	a := withClients(t, b, c.Id, Credentials{AccessKeyID: c.Credentials.AccessKeyId, SecretAccessKey: c.Credentials.SecretAccessKey})
	a.contract = c
	return a
}

// withClients gives the account of contract id clients signing with creds, and a bucket.
func withClients(t *testing.T, b *RGWBackend, id string, creds Credentials) *rgwTestAccount {
	t.Helper()
	a := &rgwTestAccount{id: id, bucket: "topics-" + newContractID(), creds: creds}
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

// tenantTopics lists the topics of an RGW tenant, as a user made in it for the purpose.
func tenantTopics(t *testing.T, b *RGWBackend, tenant string) map[string]string {
	t.Helper()
	generate := true
	u, err := b.api.CreateUser(t.Context(), admin.User{ID: tenant + "$lister", DisplayName: "lister", GenerateKey: &generate})
	if err != nil || len(u.Keys) == 0 {
		t.Fatalf("making a user in tenant %s: %v", tenant, err)
	}
	return (&rgwSNS{endpoint: b.Endpoint(),
		c: newSignedClient("sns", b.Region(), u.Keys[0].AccessKey, u.Keys[0].SecretKey, http.DefaultClient)}).topics(t)
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
