package webhook

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// LocalConfigurations rewrites the webhook configurations of config/webhook/manifests.yaml for a
// manager running outside the cluster: every webhook calls baseURL (for example
// https://127.0.0.1:9443) plus its path directly, instead of a Service, and trusts caPEM. The
// result is YAML for `kubectl apply -f`.
func LocalConfigurations(manifests []byte, baseURL string, caPEM []byte) ([]byte, error) {
	if len(bytes.TrimSpace(caPEM)) == 0 {
		return nil, errors.New("empty CA bundle")
	}
	baseURL = strings.TrimSuffix(baseURL, "/")
	clientConfig := func(cc *admissionregistrationv1.WebhookClientConfig, name string) error {
		if cc.Service == nil || cc.Service.Path == nil {
			return fmt.Errorf("webhook %s has no service path to point at %s", name, baseURL)
		}
		url := baseURL + *cc.Service.Path
		*cc = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM}
		return nil
	}

	var out bytes.Buffer
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifests)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading webhook manifests: %w", err)
		}
		var meta struct {
			Kind string `json:"kind"`
		}
		var fields map[string]any
		if err := yaml.Unmarshal(doc, &fields); err != nil {
			return nil, fmt.Errorf("reading webhook manifests: %w", err)
		}
		if len(fields) == 0 {
			continue // only separators or comments
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("reading webhook manifests: %w", err)
		}
		var obj any
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			var c admissionregistrationv1.MutatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(doc, &c); err != nil {
				return nil, fmt.Errorf("reading %s: %w", meta.Kind, err)
			}
			for i := range c.Webhooks {
				if err := clientConfig(&c.Webhooks[i].ClientConfig, c.Webhooks[i].Name); err != nil {
					return nil, err
				}
			}
			obj = &c
		case "ValidatingWebhookConfiguration":
			var c admissionregistrationv1.ValidatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(doc, &c); err != nil {
				return nil, fmt.Errorf("reading %s: %w", meta.Kind, err)
			}
			for i := range c.Webhooks {
				if err := clientConfig(&c.Webhooks[i].ClientConfig, c.Webhooks[i].Name); err != nil {
					return nil, err
				}
			}
			obj = &c
		default:
			return nil, fmt.Errorf("unexpected kind %q in webhook manifests", meta.Kind)
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	if out.Len() == 0 {
		return nil, errors.New("no webhook configurations in the manifests")
	}
	return out.Bytes(), nil
}
