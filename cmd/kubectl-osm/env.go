package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	osmcredentials "github.com/object-storage-manager/object-storage-manager/internal/credentials"
)

// errTerminal is env's refusal to print a secret key where anyone looking at the screen, or
// the terminal's scrollback, would keep it.
var errTerminal = errors.New("this prints a secret key, and stdout is a terminal: " +
	`load it into your shell with eval "$(kubectl osm env KIND/NAME)", or add --show to print it here`)

// credentials are what env prints: the key pair and where it works (AWS_*, and BUCKET_NAME and
// BUCKET_PREFIX of a BucketAccess) and, on stderr, a warning when the object is not Ready.
type credentials struct {
	vars    [][2]string
	warning string
}

// readCredentials reads the key pair of a Contract or a BucketAccess from its Secret, in
// whichever format the Secret holds it (osmcredentials.KeyOf, as the operator reads it), and
// where it works from status, or else from the Secret's AWS_* keys. A Contract over an
// existing account (spec.credentials) is the user's own Secret, which may hold only the keys:
// its endpoint and region are in spec.credentials, and status has them as the operator uses them.
func readCredentials(ctx context.Context, c client.Reader, namespace string, r ref) (*credentials, error) {
	var (
		conds  []metav1.Condition
		secret string
		// vars are the variables after the key pair, each from status or else the Secret.
		vars [][2]string
		// writer says who puts the key pair into the Secret, for an error when it holds none.
		writer = fmt.Sprintf("%s writes it once it has a key", r)
	)
	key := client.ObjectKey{Namespace: namespace, Name: r.Name}
	switch r.Kind {
	case kindContract:
		var ct storagev1alpha1.Contract
		if err := c.Get(ctx, key, &ct); err != nil {
			return nil, err
		}
		conds, secret = ct.Status.Conditions, secretName(ct.Status.SecretName, ct.SecretNameOrDefault())
		vars = [][2]string{{storagev1alpha1.SecretKeyEndpointURL, ct.Status.Endpoint}, {storagev1alpha1.SecretKeyRegion, ct.Status.Region}}
		if ct.Spec.Credentials != nil {
			writer = "it is the account's own (spec.credentials.secretName): put the account's keys in it"
		}
	case kindBucketAccess:
		var a storagev1alpha1.BucketAccess
		if err := c.Get(ctx, key, &a); err != nil {
			return nil, err
		}
		conds, secret = a.Status.Conditions, secretName(a.Status.SecretName, a.SecretNameOrDefault())
		// The (first) Bucket's status says where its bucket is; without it (not readable), the
		// Secret does.
		var b storagev1alpha1.Bucket
		if items := a.AccessBuckets(); len(items) > 0 {
			if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: string(items[0].Name)}, &b); err != nil {
				b = storagev1alpha1.Bucket{}
			}
		}
		vars = [][2]string{{storagev1alpha1.SecretKeyEndpointURL, b.Status.Endpoint}, {storagev1alpha1.SecretKeyRegion, b.Status.Region}}
		vars = append(vars, bucketVars(&a)...)
	default:
		return nil, fmt.Errorf("env takes contract/NAME or bucketaccess/NAME, not %s", r.Kind)
	}
	out := &credentials{}
	if ready := meta.FindStatusCondition(conds, storagev1alpha1.ReadyCondition); ready == nil || ready.Status != metav1.ConditionTrue {
		why := "it has no Ready condition yet"
		if ready != nil {
			why = fmt.Sprintf("%s: %s", ready.Reason, ready.Message)
		}
		out.warning = fmt.Sprintf("%s is not Ready (%s)", r, why)
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secret}, &s); err != nil {
		if out.warning != "" {
			return nil, fmt.Errorf("%w; %s", err, out.warning)
		}
		return nil, err
	}
	pair := osmcredentials.KeyOf(&s)
	if pair.AccessKeyID == "" || pair.SecretAccessKey == "" {
		missing := storagev1alpha1.SecretKeyAccessKeyID
		if len(s.Data[missing]) > 0 {
			missing = storagev1alpha1.SecretKeySecretAccessKey
		}
		return nil, fmt.Errorf("secret %s has no %s yet (nor a key pair in another format); %s", secret, missing, writer)
	}
	out.vars = [][2]string{{storagev1alpha1.SecretKeyAccessKeyID, pair.AccessKeyID}, {storagev1alpha1.SecretKeySecretAccessKey, pair.SecretAccessKey}}
	for _, v := range vars {
		value := cmp.Or(v[1], string(s.Data[v[0]]))
		if value == "" {
			return nil, fmt.Errorf("%s has no %s yet, in its status or in Secret %s; %s", r, v[0], secret, writer)
		}
		out.vars = append(out.vars, [2]string{v[0], value})
	}
	return out, nil
}

// writeEnv writes one `export NAME='value'` line per variable, quoted for any POSIX shell.
func writeEnv(w io.Writer, vars [][2]string) error {
	for _, v := range vars {
		if _, err := fmt.Fprintf(w, "export %s=%s\n", v[0], shellQuote(v[1])); err != nil {
			return err
		}
	}
	return nil
}

// shellQuote quotes s in single quotes, inside which a shell expands nothing.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// bucketVars are a BucketAccess's bucket variables, as its env format writes them: BUCKET_NAME
// (and BUCKET_PREFIX) of its one bucket, or BUCKET_NAME_<NAME> (and BUCKET_PREFIX_<NAME>) of
// each of spec.buckets, from status.buckets.
func bucketVars(a *storagev1alpha1.BucketAccess) [][2]string {
	if !a.MultiBucket() {
		vars := [][2]string{{storagev1alpha1.SecretKeyBucketName, a.Status.BucketName}}
		if a.Spec.Prefix != "" {
			vars = append(vars, [2]string{storagev1alpha1.SecretKeyBucketPrefix, string(a.Spec.Prefix)})
		}
		return vars
	}
	var vars [][2]string
	for _, item := range a.Spec.Buckets {
		env := storagev1alpha1.EnvNameOf(string(item.Name))
		name := ""
		for _, st := range a.Status.Buckets {
			if st.Name == string(item.Name) {
				name = st.BucketName
			}
		}
		vars = append(vars, [2]string{storagev1alpha1.SecretKeyBucketName + "_" + env, name})
		if item.Prefix != "" {
			vars = append(vars, [2]string{storagev1alpha1.SecretKeyBucketPrefix + "_" + env, string(item.Prefix)})
		}
	}
	return vars
}
