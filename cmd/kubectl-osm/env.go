package main

import (
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
)

// errTerminal is env's refusal to print a secret key where anyone looking at the screen, or
// the terminal's scrollback, would keep it.
var errTerminal = errors.New("this prints a secret key, and stdout is a terminal: " +
	`load it into your shell with eval "$(kubectl osm env KIND/NAME)", or add --show to print it here`)

// credentials are what env prints: the Secret's AWS_* keys (and BUCKET_NAME of a BucketAccess)
// and, on stderr, a warning when the object is not Ready.
type credentials struct {
	vars    [][2]string
	warning string
}

// readCredentials reads the Secret of a Contract or a BucketAccess.
func readCredentials(ctx context.Context, c client.Reader, namespace string, r ref) (*credentials, error) {
	var (
		conds  []metav1.Condition
		secret string
		keys   []string
	)
	key := client.ObjectKey{Namespace: namespace, Name: r.Name}
	switch r.Kind {
	case kindContract:
		var ct storagev1alpha1.Contract
		if err := c.Get(ctx, key, &ct); err != nil {
			return nil, err
		}
		conds, secret, keys = ct.Status.Conditions, secretName(ct.Status.SecretName, ct.SecretNameOrDefault()), contractKeys
	case kindBucketAccess:
		var a storagev1alpha1.BucketAccess
		if err := c.Get(ctx, key, &a); err != nil {
			return nil, err
		}
		conds, secret, keys = a.Status.Conditions, secretName(a.Status.SecretName, a.SecretNameOrDefault()), accessKeys
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
	for _, k := range keys {
		if len(s.Data[k]) == 0 {
			return nil, fmt.Errorf("secret %s has no %s yet; %s writes it once it has a key", secret, k, r)
		}
		out.vars = append(out.vars, [2]string{k, string(s.Data[k])})
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
