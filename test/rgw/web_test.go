package rgw_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractapi"
	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

// receiver is an HTTP endpoint on 127.0.0.1 that keeps the object keys of the S3 events
// POSTed to it.
type receiver struct {
	URL string
	mu  sync.Mutex
	got []string
}

func newReceiver() *receiver {
	GinkgoHelper()
	port, err := localenv.FreePort()
	Expect(err).NotTo(HaveOccurred())
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(port)))
	Expect(err).NotTo(HaveOccurred())
	r := &receiver{URL: "http://" + l.Addr().String() + "/events"}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	DeferCleanup(srv.Close)
	return r
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var event struct {
		Records []struct {
			EventName string `json:"eventName"`
			S3        struct {
				Object struct {
					Key string `json:"key"`
				} `json:"object"`
			} `json:"s3"`
		} `json:"Records"`
	}
	if json.Unmarshal(body, &event) == nil {
		r.mu.Lock()
		for _, rec := range event.Records {
			r.got = append(r.got, rec.EventName+" "+rec.S3.Object.Key)
		}
		r.mu.Unlock()
	}
	w.WriteHeader(http.StatusOK)
}

func (r *receiver) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// eventReasons lists the reasons of the events recorded about obj.
func eventReasons(ctx SpecContext, obj client.Object) []string {
	var list eventsv1.EventList
	Expect(k8s.List(ctx, &list, client.InNamespace(obj.GetNamespace()))).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.UID == obj.GetUID() {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

var _ = Describe("Bucket website and notifications on Ceph RGW", func() {
	var (
		ns       string
		contract *storagev1alpha1.Contract
		owner    *s3.Client
	)
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		contract = &storagev1alpha1.Contract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: storagev1alpha1.ContractSpec{Plan: "standard"}}
		Expect(k8s.Create(ctx, contract)).To(Succeed())
		ready(ctx, contract, func() []metav1.Condition { return contract.Status.Conditions })
		secret := &corev1.Secret{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: contract.Status.SecretName}, secret)).To(Succeed())
		owner = localenv.S3ClientOfSecret(secret)
	})
	bucket := func(name string, spec storagev1alpha1.BucketSpec) *storagev1alpha1.Bucket {
		spec.BucketName, spec.ContractName = name+"-"+ns, "web"
		return &storagev1alpha1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
	}
	upload := func(ctx SpecContext, bucket, key, body string) {
		GinkgoHelper()
		_, err := owner.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key),
			Body: strings.NewReader(body), ContentType: aws.String("text/html")})
		Expect(err).NotTo(HaveOccurred())
	}

	It("serves the index document at status.websiteEndpoint", func(ctx SpecContext) {
		b := bucket("site", storagev1alpha1.BucketSpec{Website: &storagev1alpha1.BucketWebsite{IndexDocument: "index.html"}})
		name := b.Spec.BucketName
		b.Spec.Policy = &runtime.RawExtension{Raw: []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow",` +
			`"Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::` + name + `/*"}]}`)}
		Expect(k8s.Create(ctx, b)).To(Succeed())
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })
		Expect(b.Status.Website).To(Equal(b.Spec.Website))
		// The bucket is in the contract's own RGW tenant, which RGW's website host names by path.
		Expect(contract.Status.WebsiteEndpoint).To(Equal(
			strings.Replace(stk.S3.WebsiteEndpoint, "{bucket}.", "", 1) + "/" + contract.Status.ContractID + ":{bucket}"))
		Expect(b.Status.WebsiteEndpoint).To(Equal(strings.ReplaceAll(contract.Status.WebsiteEndpoint, "{bucket}", name)))
		upload(ctx, name, "index.html", "<h1>on rgw</h1>")
		Eventually(func(g Gomega) {
			code, body, err := localenv.GetWebsite(ctx, b.Status.WebsiteEndpoint, "/")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK), body)
			g.Expect(body).To(Equal("<h1>on rgw</h1>"))
		}).Should(Succeed())
	})

	It("sends the event of a real upload to an HTTP receiver, through a topic it makes and deletes", func(ctx SpecContext) {
		events := newReceiver()
		b := bucket("noted", storagev1alpha1.BucketSpec{BucketReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete,
			Notifications: []storagev1alpha1.BucketNotification{{Name: "images", Endpoint: events.URL,
				Events: []storagev1alpha1.NotificationEvent{"s3:ObjectCreated:*"},
				Filter: &storagev1alpha1.NotificationFilter{Prefix: "images/", Suffix: ".jpg"}}}})
		Expect(k8s.Create(ctx, b)).To(Succeed())
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })
		Expect(b.Status.Topics).To(HaveLen(1))
		Expect(b.Status.Topics[0].ARN).NotTo(BeEmpty())
		Expect(b.Status.Notifications).To(HaveLen(1))
		Expect(b.Status.Notifications[0].TopicARN).To(Equal(b.Status.Topics[0].ARN))

		name := b.Spec.BucketName
		upload(ctx, name, "docs/readme.txt", "not sent: outside the filter")
		upload(ctx, name, "images/cat.jpg", "meow")
		Eventually(events.events).Should(ConsistOf(HaveSuffix(" images/cat.jpg")))

		By("costing no API write while nothing changes")
		time.Sleep(2 * time.Second)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		version := b.ResourceVersion
		time.Sleep(3 * time.Second)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		Expect(b.ResourceVersion).To(Equal(version), "the Bucket was written during resyncs")

		By("restoring the notification changed behind its back")
		_, err := owner.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{
			Bucket: aws.String(name), NotificationConfiguration: &s3types.NotificationConfiguration{
				TopicConfigurations: []s3types.TopicConfiguration{{Id: aws.String("images"), TopicArn: aws.String(b.Status.Topics[0].ARN),
					Events: []s3types.Event{"s3:ObjectRemoved:*"}}}}})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			out, err := owner.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: aws.String(name)})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.TopicConfigurations).To(HaveLen(1))
			g.Expect(out.TopicConfigurations[0].Events).To(ConsistOf(s3types.Event("s3:ObjectCreated:*")))
			g.Expect(eventReasons(ctx, b)).To(ContainElement("NotificationsDriftCorrected"))
		}).Should(Succeed())
		upload(ctx, name, "images/dog.jpg", "woof")
		Eventually(events.events).Should(ContainElement(HaveSuffix(" images/dog.jpg")))

		By("deleting the topic of a notification the spec drops")
		api, err := contractapi.NewClientWithResponses(stk.ContractAPI.URL, contractapi.WithBearerToken(stk.ContractAPI.Token))
		Expect(err).NotTo(HaveOccurred())
		topics, err := api.ListTopicsWithResponse(ctx, contract.Status.ContractID)
		Expect(err).NotTo(HaveOccurred())
		Expect(topics.JSON200).NotTo(BeNil())
		Expect(topics.JSON200.Topics).To(HaveLen(1))
		Eventually(func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
				return err
			}
			b.Spec.Notifications = append(b.Spec.Notifications, storagev1alpha1.BucketNotification{Name: "removals",
				Endpoint: events.URL, Events: []storagev1alpha1.NotificationEvent{"s3:ObjectRemoved:*"}})
			b.Spec.Notifications = b.Spec.Notifications[1:]
			return k8s.Update(ctx, b)
		}).Should(Succeed())
		ready(ctx, b, func() []metav1.Condition { return b.Status.Conditions })
		Expect(b.Status.Topics).To(ConsistOf(HaveField("Name", HaveSuffix("-removals"))))
		Expect(b.Status.Notifications).To(ConsistOf(HaveField("Name", "removals")), "RGW kept the notification the spec dropped")
		topics, err = api.ListTopicsWithResponse(ctx, contract.Status.ContractID)
		Expect(err).NotTo(HaveOccurred())
		Expect(topics.JSON200.Topics).To(ConsistOf(HaveField("Name", HaveSuffix("-removals"))))

		By("deleting its topics with the Bucket")
		for _, key := range []string{"docs/readme.txt", "images/cat.jpg", "images/dog.jpg"} {
			_, err := owner.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(name), Key: aws.String(key)})
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(k8s.Delete(ctx, b)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)) }).Should(BeTrue())
		Expect(events.events()).To(ContainElement(ContainSubstring("ObjectRemoved")), "the removals notification was not sent")
		topics, err = api.ListTopicsWithResponse(ctx, contract.Status.ContractID)
		Expect(err).NotTo(HaveOccurred())
		Expect(topics.JSON200.Topics).To(BeEmpty())
	})

	It("says notifications need a provider on a Contract over an existing account, with the rest applied", func(ctx SpecContext) {
		existingAccount(ctx, ns, "own")
		b := bucket("own", storagev1alpha1.BucketSpec{BucketReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete,
			Website: &storagev1alpha1.BucketWebsite{IndexDocument: "index.html"},
			Notifications: []storagev1alpha1.BucketNotification{{Name: "all", Endpoint: "http://127.0.0.1:9/",
				Events: []storagev1alpha1.NotificationEvent{"s3:ObjectCreated:*"}}}})
		b.Spec.ContractName = "own"
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			c := meta.FindStatusCondition(b.Status.Conditions, storagev1alpha1.ReadyCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(storagev1alpha1.ReasonNotificationsUnsupported), c.Message)
			g.Expect(c.Message).To(ContainSubstring("Contract own is an account of its own (spec.credentials), and no provider makes topics for it"))
		}).Should(Succeed())
		Expect(b.Status.Website).To(Equal(b.Spec.Website), "the rest of the spec is applied")
		Expect(b.Status.Topics).To(BeEmpty())
		Expect(k8s.Delete(ctx, b)).To(Succeed())
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(b), b)) }).Should(BeTrue())
	})
})
