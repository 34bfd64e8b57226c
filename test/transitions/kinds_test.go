package transitions

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1 "k8s.io/api/core/v1"

	paasv1alpha1 "github.com/object-storage-manager/object-storage-manager/api/paas/v1alpha1"
	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
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
	}
	spec := merged(base, f.base)
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
	s := strings.NewReplacer("{{bucket}}", ns+"-"+obj.GetName(), "{{name}}", obj.GetName(), "{{ns}}", ns, "{{owner}}", e.owner).Replace(string(raw))
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
	r = append(r, ns+"-"+obj.GetName(), "{{bucket}}", obj.GetName(), "{{name}}")
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
	return map[string]string{
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
