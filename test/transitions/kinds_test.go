package transitions

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1 "k8s.io/api/core/v1"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractserver"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// object is a new object of f's kind named name, with f set to value (absent: nil).
func (e *env) object(f field, name string, value any) *unstructured.Unstructured {
	var base map[string]any
	switch f.kind {
	case "Bucket":
		base = map[string]any{"bucketName": ns + "-" + name, "contractName": "team"}
	case "BucketAccess":
		base = map[string]any{"bucket": "photos", "access": "ReadOnly"}
	case "Application":
		base = map[string]any{"image": "app:1"}
	case "Contract":
		base = map[string]any{"plan": "standard"}
	}
	spec := merged(base, f.base)
	if f.kind == "Contract" && f.name == "credentials" && value != nil {
		// An existing account's keys, the team's, in a Secret of the object's own: a Secret
		// serves one Contract.
		e.copySecret("team-credentials", name+"-own-keys")
	}
	group := storagev1alpha1.GroupVersion.String()
	if f.kind == "Application" {
		group = paasv1alpha1.GroupVersion.String()
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group, "kind": f.kind,
		"metadata": map[string]any{"namespace": ns, "name": name}, "spec": spec}}
	if value != nil {
		spec[f.name] = e.fill(value, u)
	} else {
		delete(spec, f.name) // absent, even where the base sets it (a BucketAccess's bucket and access)
	}
	return u
}

func bucketObject(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": storagev1alpha1.GroupVersion.String(), "kind": "Bucket",
		"metadata": map[string]any{"namespace": ns, "name": name}, "spec": spec}}
}

// fill puts obj's names and the account's owner into a value of testdata/values.yaml.
func (e *env) fill(value any, obj *unstructured.Unstructured) any {
	if value == nil {
		return nil
	}
	raw, _ := json.Marshal(value)
	s := strings.NewReplacer("{{bucket}}", ns+"-"+obj.GetName(), "{{name}}", obj.GetName(), "{{ns}}", ns, "{{owner}}", e.owner,
		"{{region}}", e.stk.S3.Region).Replace(string(raw))
	var out any
	_ = json.Unmarshal([]byte(s), &out)
	return out
}

// normalize replaces obj's own names in s, so that two objects' outcomes compare.
func (e *env) normalize(s string, obj *unstructured.Unstructured) string {
	bucket, _, _ := unstructured.NestedString(obj.Object, "status", "bucketName")
	r := []string{}
	if bucket != "" {
		r = append(r, bucket, "{{bucket}}")
	}
	// An object's UID names what the server keeps for it alone (an RGW topic).
	// A contract's id is the provider's name for it.
	if id, _, _ := unstructured.NestedString(obj.Object, "status", "contractID"); id != "" && obj.GetKind() == "Contract" {
		r = append(r, id, "{{id}}")
	}
	r = append(r, ns+"-"+obj.GetName(), "{{bucket}}", obj.GetName(), "{{name}}", string(obj.GetUID()), "{{uid}}")
	return rolloutGeneration.ReplaceAllString(strings.NewReplacer(r...).Replace(s), "generation N")
}

// rolloutGeneration is the Deployment generation an Application's Ready names while it rolls
// out: it counts the changes made, not where they led.
var rolloutGeneration = regexp.MustCompile(`generation [0-9]+`)

// stateOf is the server's state of obj, as it compares between two objects.
func (e *env) stateOf(kind string, obj *unstructured.Unstructured) any {
	e.t.Helper()
	var state map[string]string
	switch kind {
	case "Bucket":
		state = e.bucketState(obj)
	case "BucketAccess":
		state = e.accessState(obj)
	case "Application":
		state = e.applicationState(obj)
	case "Contract":
		state = e.contractState(obj)
	}
	out := make(map[string]string, len(state))
	for k, v := range state {
		out[e.normalize(k, obj)] = e.normalize(v, obj)
	}
	return out
}

// bucketState reads every setting of obj's bucket with the account's keys, straight from the
// server: each as the server answers it, or the error code it answers.
func (e *env) bucketState(obj *unstructured.Unstructured) map[string]string {
	name, _, _ := unstructured.NestedString(obj.Object, "status", "bucketName")
	if name == "" {
		// An observed Bucket's status names no bucket of its own.
		name, _, _ = unstructured.NestedString(obj.Object, "spec", "bucketName")
	}
	st := e.store("team-credentials")
	ctx := e.ctx
	read := func(v any, err error) string {
		if err != nil {
			return "error " + objectstore.ErrorCode(err)
		}
		return jsonOf(v)
	}
	tags, err := st.BucketTags(ctx, name)
	maps.DeleteFunc(tags, func(k, _ string) bool { return strings.HasPrefix(k, "storage.osm.dev/") })
	state := map[string]string{
		"tags":              read(tags, err),
		"acl":               read(st.ACL(ctx, name)),
		"policy":            read(st.Policy(ctx, name)),
		"versioning":        read(versioning(st.Versioning(ctx, name))),
		"lifecycle":         read(st.Lifecycle(ctx, name)),
		"cors":              read(st.CORS(ctx, name)),
		"objectLock":        read(st.ObjectLock(ctx, name)),
		"encryption":        read(st.Encryption(ctx, name)),
		"publicAccessBlock": read(st.PublicAccessBlock(ctx, name)),
		"ownershipControls": read(st.OwnershipControls(ctx, name)),
		"logging":           read(st.Logging(ctx, name)),
		"website":           read(st.Website(ctx, name)),
		"notifications":     read(st.Notifications(ctx, name)),
	}
	if quota, ok := e.quota(name); ok {
		state["quota"] = quota
	}
	return state
}

// quota is the quota the provider enforces on bucket, read from its own admin side, where the
// backend has one (Ceph RGW).
func (e *env) quota(bucket string) (string, bool) {
	ub, ok := e.stk.Backend.(contractserver.UsageBackend)
	if !ok {
		return "", false
	}
	var contract storagev1alpha1.Contract
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: "team"}, &contract); err != nil {
		e.t.Fatal(err)
	}
	account := contract.Status.ContractID
	if namer, ok := e.stk.Backend.(contractserver.AccountNamer); ok {
		account = namer.AccountName(account)
	}
	usage, err := ub.BucketUsage(e.ctx, account)
	if err != nil {
		return "error " + err.Error(), true
	}
	for _, u := range usage {
		if u.Name == bucket {
			return jsonOf(u.Quota), true
		}
	}
	return "no such bucket", true
}

// accessState is what obj's key can do, checked with the key itself, and its Secret's data
// with the key's own values replaced.
func (e *env) accessState(obj *unstructured.Unstructured) map[string]string {
	secretName, _, _ := unstructured.NestedString(obj.Object, "status", "secretName")
	bucket, _, _ := unstructured.NestedString(obj.Object, "status", "bucketName")
	prefix, _, _ := unstructured.NestedString(obj.Object, "spec", "prefix")
	var sec corev1.Secret
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: secretName}, &sec); err != nil {
		return map[string]string{"secret": "error " + err.Error()}
	}
	id, _, _ := unstructured.NestedString(obj.Object, "status", "accessKeyID")
	key := secretKeyIn(sec)
	if id == "" || key == "" {
		return map[string]string{"secret": "no key in Secret " + secretName}
	}
	state := map[string]string{}
	hide := strings.NewReplacer(id, "{{key}}", key, "{{secret}}", secretName, "{{secret-name}}")
	for _, k := range slices.Sorted(maps.Keys(sec.Data)) {
		state["secret "+k] = hide.Replace(string(sec.Data[k]))
	}
	if buckets, _, _ := unstructured.NestedSlice(obj.Object, "status", "buckets"); len(buckets) > 0 {
		// Over several Buckets: what the key does in each, as status.buckets lists them.
		for _, b := range buckets {
			item, _ := b.(map[string]any)
			name, _ := item["name"].(string)
			bucketName, _ := item["bucketName"].(string)
			itemPrefix, _ := item["prefix"].(string)
			check, err := e.storeWith(id, key).CheckAccess(e.ctx, bucketName, itemPrefix)
			state["checked with the key in "+name] = jsonOf(check) + " " + objectstore.ErrorCode(err)
		}
		return state
	}
	check, err := e.storeWith(id, key).CheckAccess(e.ctx, bucket, prefix)
	state["checked with the key"] = jsonOf(check) + " " + objectstore.ErrorCode(err)
	return state
}

// store reaches the server directly with the keys in Secret name.
func (e *env) store(name string) objectstore.Store {
	e.t.Helper()
	var sec corev1.Secret
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: name}, &sec); err != nil {
		e.t.Fatal(err)
	}
	return e.storeWith(string(sec.Data[storagev1alpha1.SecretKeyAccessKeyID]), string(sec.Data[storagev1alpha1.SecretKeySecretAccessKey]))
}

// storeWith reaches the server directly, past the proxy that counts the manager's writes.
func (e *env) storeWith(id, key string) objectstore.Store {
	return objectstore.New(objectstore.Config{Endpoint: e.stk.S3.Direct, Region: e.stk.S3.Region,
		AccessKeyID: id, SecretAccessKey: key, HTTPClient: objectstore.NewHTTPClient(10*time.Second, 1, nil)})
}

// versioning reads a bucket never versioned as Suspended: S3 cannot take a bucket back to never
// versioned, and both keep one null version of each object.
func versioning(status string, err error) (string, error) {
	if status == "" && err == nil {
		return "Suspended", nil
	}
	return status, err
}

// secretKeyPattern finds the secret key in each format's files: aws-files' credentials, rclone,
// s3cfg and COSI's BucketInfo.
var secretKeyPattern = regexp.MustCompile(`(?:aws_secret_access_key|secret_access_key|secret_key|accessSecretKey)"?\s*[=:]\s*"?([^\s"]+)`)

// secretKeyIn is the secret key a BucketAccess's Secret holds, in whichever format.
func secretKeyIn(sec corev1.Secret) string {
	if key := sec.Data[storagev1alpha1.SecretKeySecretAccessKey]; len(key) > 0 {
		return string(key)
	}
	for _, v := range sec.Data {
		if m := secretKeyPattern.FindSubmatch(v); m != nil {
			return string(m[1])
		}
	}
	return ""
}

// applicationState is the spec of each object an Application owns: its Deployment, Service,
// Ingress, backup CronJob and the BucketAccesses of its links.
func (e *env) applicationState(obj *unstructured.Unstructured) map[string]string {
	e.t.Helper()
	state := map[string]string{}
	for _, kind := range []schema.GroupVersionKind{
		{Group: "apps", Version: "v1", Kind: "Deployment"}, {Version: "v1", Kind: "Service"},
		{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, {Group: "batch", Version: "v1", Kind: "CronJob"},
		storagev1alpha1.GroupVersion.WithKind("BucketAccess"),
	} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(kind.GroupVersion().WithKind(kind.Kind + "List"))
		if err := e.c.List(e.ctx, list, client.InNamespace(ns)); err != nil {
			e.t.Fatal(err)
		}
		for _, child := range list.Items {
			if !slices.ContainsFunc(child.GetOwnerReferences(), func(o metav1.OwnerReference) bool { return o.UID == obj.GetUID() }) {
				continue
			}
			spec := child.Object["spec"]
			if kind.Kind == "Service" {
				// The API server picks a Service's addresses.
				spec = withoutKeys(spec, "clusterIP", "clusterIPs")
			}
			state[kind.Kind+" "+child.GetName()] = jsonOf(spec)
		}
	}
	return state
}

func withoutKeys(v any, keys ...string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := maps.Clone(m)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

// contractState is the contract as the provider records it, what its key can do (checked with
// the key), and its Secret's data with its own key and contract id masked.
func (e *env) contractState(obj *unstructured.Unstructured) map[string]string {
	e.t.Helper()
	id, _, _ := unstructured.NestedString(obj.Object, "status", "contractID")
	secretName, _, _ := unstructured.NestedString(obj.Object, "status", "secretName")
	state := map[string]string{"provider": e.providerRecord(id)}
	if secretName == "" {
		return state // an existing account's Secret is the user's own
	}
	var sec corev1.Secret
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: secretName}, &sec); err != nil {
		state["secret"] = "error " + err.Error()
		return state
	}
	keyID, _, _ := unstructured.NestedString(obj.Object, "status", "accessKeyID")
	key := secretKeyIn(sec)
	if keyID == "" || key == "" {
		state["secret"] = "no key in Secret " + secretName
		return state
	}
	hide := strings.NewReplacer(keyID, "{{key}}", key, "{{secret}}", secretName, "{{secret-name}}", id, "{{id}}")
	for _, k := range slices.Sorted(maps.Keys(sec.Data)) {
		state["secret "+k] = hide.Replace(string(sec.Data[k]))
	}
	_, err := e.storeWith(keyID, key).BucketNames(e.ctx)
	state["checked with the key"] = "listing buckets: " + objectstore.ErrorCode(err)
	return state
}

// providerRecord is the contract id's record at the provider: what a person sees there.
func (e *env) providerRecord(id string) string {
	e.t.Helper()
	if id == "" {
		return "none"
	}
	req, err := http.NewRequestWithContext(e.ctx, http.MethodGet, e.stk.ContractAPI.URL+"/v1/contracts/"+id, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.stk.ContractAPI.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "error " + err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	var rec struct {
		State, Plan, Region, DisplayName string
		AccessKeys                       []any
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&rec); err != nil {
		return fmt.Sprintf("%d, unreadable: %v", resp.StatusCode, err)
	}
	return fmt.Sprintf("%d %s plan %q region %q display name %q, %d keys", resp.StatusCode, rec.State, rec.Plan, rec.Region, rec.DisplayName, len(rec.AccessKeys))
}

// copySecret makes Secret to with from's data, once.
func (e *env) copySecret(from, to string) {
	e.t.Helper()
	var src corev1.Secret
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: from}, &src); err != nil {
		e.t.Fatal(err)
	}
	err := e.c.Create(e.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: to}, Data: src.Data})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
}
