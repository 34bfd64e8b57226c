package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	osmwebhook "github.com/object-storage-manager/object-storage-manager/internal/webhook"
)

// client returns the admin's API client, made once: each new one discovers the API groups
// again, which costs seconds on a busy machine.
func (e *environment) client() (client.Client, error) {
	if e.apiClient != nil {
		return e.apiClient, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", e.kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := authenticationv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := discoveryv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	e.apiClient = c
	return c, nil
}

// installCRDs applies config/crd/bases, waits until every CRD is established, and makes the
// namespace demo.
func (e *environment) installCRDs(ctx context.Context) error {
	n, err := e.applyCRDs(ctx)
	if err != nil {
		return err
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	status("crds", "%d installed; namespace demo", n)
	return nil
}

func (e *environment) crdFiles() ([]string, error) {
	return filepath.Glob(filepath.Join(e.root, "config", "crd", "bases", "*.yaml"))
}

// applyCRDs applies config/crd/bases, waits until every CRD is established, and records what
// it applied in e.appliedCRDs.
func (e *environment) applyCRDs(ctx context.Context) (int, error) {
	c, err := e.client()
	if err != nil {
		return 0, err
	}
	files, err := e.crdFiles()
	if err != nil {
		return 0, err
	}
	hash, err := contentHash(files...)
	if err != nil {
		return 0, err
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		objs, err := apply(ctx, c, data)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		for _, o := range objs {
			names = append(names, o.GetName())
		}
	}
	for _, name := range names {
		if err := waitEstablished(ctx, c, name); err != nil {
			return 0, err
		}
	}
	e.appliedCRDs = hash
	return len(names), nil
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err == nil {
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("CRD %s not established after 30s", name)
}

// installWebhooks registers the webhook configurations of config/webhook, pointed at the
// manager on 127.0.0.1 and trusting .certs/ca.crt.
func (e *environment) installWebhooks(ctx context.Context) error {
	n, err := e.applyWebhooks(ctx)
	if err != nil {
		return err
	}
	status("webhooks", "%d configurations point at https://%s", n, hostPort(e.opts.webhookPort))
	return nil
}

func (e *environment) webhookManifests() string {
	return filepath.Join(e.root, "config", "webhook", "manifests.yaml")
}

// applyWebhooks applies the local webhook configurations and records what it applied in
// e.appliedWebhooks.
func (e *environment) applyWebhooks(ctx context.Context) (int, error) {
	manifests, err := os.ReadFile(e.webhookManifests())
	if err != nil {
		return 0, err
	}
	ca, err := os.ReadFile(e.certPath("ca.crt"))
	if err != nil {
		return 0, err
	}
	local, err := osmwebhook.LocalConfigurations(manifests, "https://"+hostPort(e.opts.webhookPort), ca)
	if err != nil {
		return 0, err
	}
	c, err := e.client()
	if err != nil {
		return 0, err
	}
	objs, err := apply(ctx, c, local)
	if err != nil {
		return 0, err
	}
	e.appliedWebhooks = hashOf(manifests)
	return len(objs), nil
}

// contentHash is a hash of the names and content of files, to tell whether they changed.
func contentHash(files ...string) (string, error) {
	h := sha256.New()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		_, _ = fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// apply creates each object of a multi-document YAML, or replaces it when it exists.
func apply(ctx context.Context, c client.Client, data []byte) ([]*unstructured.Unstructured, error) {
	objs, err := decodeObjects(data)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if err := applyObject(ctx, c, o); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

// decodeObjects decodes a multi-document YAML, skipping empty documents.
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// applyObject creates u, or replaces the object when it exists.
func applyObject(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	err := c.Create(ctx, u)
	if apierrors.IsAlreadyExists(err) {
		existing := &unstructured.Unstructured{}
		existing.SetGroupVersionKind(u.GroupVersionKind())
		if err = c.Get(ctx, client.ObjectKeyFromObject(u), existing); err == nil {
			u.SetResourceVersion(existing.GetResourceVersion())
			err = c.Update(ctx, u)
		}
	}
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}
