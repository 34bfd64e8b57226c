package storage

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/credentials"
	"github.com/object-storage-manager/object-storage-manager/internal/egress"
	"github.com/object-storage-manager/object-storage-manager/internal/engine"
	"github.com/object-storage-manager/object-storage-manager/internal/objectstore"
)

// activeState is the state of a Contract whose account can be used: what the provider says of
// a bought one, and what the operator says of an existing one whose keys work.
const activeState = "active"

// existingAccount says whether c uses an account the user already has (spec.credentials)
// rather than buying one.
func existingAccount(c *storagev1alpha1.Contract) bool { return c.Spec.Credentials != nil }

// useExisting is the pass of a Contract over an existing account: nothing is bought and no key
// is made. It reads the account's Secret, labels it so that its changes wake the Contract and
// its Buckets, and checks that its keys work with one call that changes nothing.
func (k contractKind) useExisting(ctx context.Context, c *storagev1alpha1.Contract, found contractFound) contractOutcome {
	found.keys = existingKeys(c)
	secret, out, done := k.existingSecret(ctx, c, found)
	if done {
		return out
	}
	acct, missing := existingAccountOf(c, secret)
	if missing != "" {
		return k.unusable(c, found, credentialsIncomplete{missing})
	}
	c.Status.ContractID, c.Status.Plan, c.Status.BucketPolicy = "", "", nil
	c.Status.SecretName, c.Status.AccessKeyID = c.SecretNameOrDefault(), acct.AccessKeyID
	c.Status.Endpoint, c.Status.Region, c.Status.VirtualHostedStyle = acct.Endpoint, acct.Region, acct.VirtualHosted
	if !storagev1alpha1.ValidRegion(acct.Region) {
		return k.unusable(c, found, invalidConfiguration{fmt.Sprintf("The region %q is not a region: letters, digits, '.', '_' and '-' "+
			"(set spec.credentials.region, or AWS_REGION in Secret %s)", acct.Region, c.SecretNameOrDefault())})
	}
	// The endpoint is the tenant's word: only where the platform allows is it ever called.
	if err := k.AllowedEndpoints.CheckURL(acct.Endpoint); err != nil {
		return k.unusable(c, found, endpointNotAllowed{err})
	}
	if err := k.checkExisting(ctx, c, acct); err != nil {
		return k.existingFailed(c, found, err)
	}
	c.Status.State = activeState
	return found.end(existingAvailable{}, engine.ResyncAfter(k.ResyncPeriod), nil)
}

// existingKeys is what a pass says of the keys of an existing account: they cannot rotate here,
// which KeyRotation says only when a rotation is asked for.
func existingKeys(c *storagev1alpha1.Contract) credentials.Finding {
	if c.Annotations[storagev1alpha1.RotateKeyAnnotation] == "" {
		return credentials.Finding{State: credentials.NotAsked}
	}
	return credentials.Finding{State: credentials.Unsupported, Why: fmt.Sprintf(
		"the account of spec.credentials is not the provider's to rotate: put new keys in Secret %s, and the Contract and its Buckets use them at once",
		c.SecretNameOrDefault())}
}

// existingSecret reads the account's Secret, labels it for this Contract, so its changes reach
// the manager's cache and watches, and holds it with the finalizer, as a bought Contract holds
// its own: a namespace's deletion takes Secrets first, and the Buckets deleted with it need the
// keys to settle their buckets. done says the pass ends with out: the Secret is missing, or
// another Contract's.
func (k contractKind) existingSecret(ctx context.Context, c *storagev1alpha1.Contract, found contractFound) (*corev1.Secret, contractOutcome, bool) {
	name := c.SecretNameOrDefault()
	secret := &corev1.Secret{}
	err := k.ownSecrets.get(ctx, k.Client, k.APIReader, client.ObjectKey{Namespace: c.Namespace, Name: name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		// Not labelled, so no watch sees it come: look again later.
		return nil, k.unusable(c, found, credentialsIncomplete{fmt.Sprintf("Secret %s does not exist in namespace %s", name, c.Namespace)}), true
	case err != nil:
		return nil, found.end(nil, 0, fmt.Errorf("reading Secret %q: %w", name, err)), true
	}
	if owner := metav1.GetControllerOf(secret); owner != nil || secret.Labels[storagev1alpha1.ContractLabel] != c.Name && secret.Labels[storagev1alpha1.ContractLabel] != "" {
		// The operator's own Secret of another resource, or one another Contract uses.
		return nil, found.end(secretTaken{secret: name}, engine.WaitingRetry(k.ResyncPeriod), nil), true
	}
	// No finalizer can be added to a Secret already being deleted: it is held only if it was.
	hold := secret.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(secret, Finalizer)
	if secret.Labels[storagev1alpha1.ContractLabel] == c.Name && !hold {
		return secret, contractOutcome{}, false
	}
	patch := client.MergeFrom(secret.DeepCopy())
	metav1.SetMetaDataLabel(&secret.ObjectMeta, storagev1alpha1.ContractLabel, c.Name)
	if hold {
		controllerutil.AddFinalizer(secret, Finalizer)
	}
	if err := k.Patch(ctx, secret, patch); err != nil {
		return nil, found.end(nil, 0, fmt.Errorf("labelling Secret %q: %w", name, err)), true
	}
	return secret, contractOutcome{}, false
}

// existingAccountOf is the account spec.credentials and its Secret name, or what is missing.
func existingAccountOf(c *storagev1alpha1.Contract, secret *corev1.Secret) (objectstore.Account, string) {
	creds := c.Spec.Credentials
	key := credentials.KeyOf(secret)
	a := objectstore.Account{Endpoint: creds.Endpoint, Region: creds.Region, AccessKeyID: key.AccessKeyID, SecretAccessKey: key.SecretAccessKey,
		TenantEndpoint: true}
	if a.Endpoint == "" {
		a.Endpoint = string(secret.Data[storagev1alpha1.SecretKeyEndpointURL])
	}
	if a.Region == "" {
		a.Region = string(secret.Data[storagev1alpha1.SecretKeyRegion])
	}
	if a.Region == "" {
		a.Region = "us-east-1"
	}
	var missing []string
	for _, k := range []struct{ what, value string }{
		{storagev1alpha1.SecretKeyAccessKeyID, a.AccessKeyID}, {storagev1alpha1.SecretKeySecretAccessKey, a.SecretAccessKey},
		{storagev1alpha1.SecretKeyEndpointURL + " (or spec.credentials.endpoint)", a.Endpoint},
	} {
		if k.value == "" {
			missing = append(missing, k.what)
		}
	}
	if len(missing) > 0 {
		return a, fmt.Sprintf("Secret %s has no %s", secret.Name, strings.Join(missing, ", nor "))
	}
	u, err := url.Parse(a.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return a, fmt.Sprintf("The endpoint %q is not an http:// or https:// URL", a.Endpoint)
	}
	a.VirtualHosted = !ptrOr(creds.ForcePathStyle, !strings.HasSuffix(u.Hostname(), ".amazonaws.com"))
	return a, ""
}

func ptrOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// checkExisting lists the account's buckets with its keys: one call that changes nothing. A key
// the server authenticates but may not list buckets with still works (AWS answers AccessDenied
// to a key without s3:ListAllMyBuckets). The answer stands for a resync period, for as long as
// the account is the same, so a Bucket event does not cost a call.
func (k contractKind) checkExisting(ctx context.Context, c *storagev1alpha1.Contract, acct objectstore.Account) error {
	if checked, _, ok := k.checked.Get(c.UID, k.ResyncPeriod); ok && checked == acct {
		return nil
	}
	_, err := k.Stores(acct).BucketNames(ctx)
	if err != nil && !errors.Is(err, objectstore.ErrAccessDenied) {
		k.checked.Delete(c.UID)
		return err
	}
	k.checked.Put(c.UID, acct)
	return nil
}

// existingFailed ends a pass whose check of the keys failed: an answer that may change by itself
// is retried with backoff, a refusal waits for the Secret or the spec to change (or a resync).
func (k contractKind) existingFailed(c *storagev1alpha1.Contract, found contractFound, err error) contractOutcome {
	switch {
	case errors.Is(err, egress.ErrNotAllowed):
		return k.unusable(c, found, endpointNotAllowed{err})
	case egress.Refused(err) || errors.Is(err, objectstore.ErrNotAnAnswer):
		return k.unusable(c, found, answerRefused{err})
	case objectstore.ErrorCode(err) == "AuthorizationHeaderMalformed":
		// The endpoint answered: the region is not one it serves.
		return k.unusable(c, found, invalidConfiguration{fmt.Sprintf("The S3 endpoint %s does not serve region %s (%s): "+
			"set spec.credentials.region, or AWS_REGION in Secret %s, to the endpoint's region", c.Status.Endpoint, c.Status.Region,
			objectstore.Describe(err), c.SecretNameOrDefault())})
	}
	if isUntrusted(err) || !objectstore.Answered(err) {
		return k.unusable(c, found, endpointUnreachable{err})
	}
	if objectstore.IsTransient(err) {
		return found.end(existingS3Failed{err}, 0, err)
	}
	return k.unusable(c, found, invalidCredentials{err})
}

// unusable ends a pass that found the account cannot be used: its Buckets wait until it can.
// Nothing watched says when a Secret not labelled yet, or the endpoint, gets better: look again
// after a while.
func (k contractKind) unusable(c *storagev1alpha1.Contract, found contractFound, f contractFinding) contractOutcome {
	c.Status.State = ""
	return found.end(f, engine.WaitingRetry(k.ResyncPeriod), reconcile.TerminalError(errors.New("the account of spec.credentials cannot be used")))
}

// releaseExisting lets an existing account's Secret go when its Contract is deleted; the Secret
// and the account stay the user's.
func (k contractKind) releaseExisting(ctx context.Context, c *storagev1alpha1.Contract, p *engine.Pass[*storagev1alpha1.Contract], found contractFound) contractOutcome {
	k.checked.Delete(c.UID)
	key := client.ObjectKey{Namespace: c.Namespace, Name: c.SecretNameOrDefault()}
	k.ownSecrets.forget(key)
	secret := &corev1.Secret{}
	err := k.Get(ctx, key, secret)
	if err == nil && secret.Labels[storagev1alpha1.ContractLabel] == c.Name && metav1.GetControllerOf(secret) == nil {
		// The label and the finalizer the operator added go; another Contract's are left.
		patch := client.MergeFrom(secret.DeepCopy())
		delete(secret.Labels, storagev1alpha1.ContractLabel)
		controllerutil.RemoveFinalizer(secret, Finalizer)
		err = k.Patch(ctx, secret, patch)
	}
	if client.IgnoreNotFound(err) != nil {
		return found.end(nil, 0, fmt.Errorf("releasing Secret %q: %w", c.SecretNameOrDefault(), err))
	}
	return found.end(nil, 0, p.Release(ctx))
}

// isUntrusted says whether err is a TLS certificate the manager does not trust.
func isUntrusted(err error) bool {
	var unknown x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	var hostname x509.HostnameError
	return errors.As(err, &unknown) || errors.As(err, &verify) || errors.As(err, &hostname)
}

type (
	// existingAvailable: the keys of spec.credentials work on their endpoint.
	existingAvailable struct{}
	// credentialsIncomplete: the Secret, a key in it, or the endpoint is missing.
	credentialsIncomplete struct{ what string }
	// invalidCredentials: the endpoint refused the keys.
	invalidCredentials struct{ err error }
	// endpointUnreachable: no answer, or a certificate the manager does not trust.
	endpointUnreachable struct{ err error }
	// existingS3Failed: the endpoint failed in a way that may pass.
	existingS3Failed struct{ err error }
	// endpointNotAllowed: the endpoint is not on the platform's list.
	endpointNotAllowed struct{ err error }
	// answerRefused: the endpoint answered with what the manager does not read: too long, a
	// redirect elsewhere, or not what the call returns.
	answerRefused struct{ err error }
	// invalidConfiguration: a value of spec.credentials or of its Secret cannot be used.
	invalidConfiguration struct{ what string }
)

func (f endpointNotAllowed) ready(*storagev1alpha1.Contract) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonEndpointNotAllowed, fmt.Sprintf(
		"%s: the platform decides which S3 endpoints tenants may name (the manager's --%s); ask your platform team to list it, "+
			"or name an endpoint it allows; nothing was called", objectstore.Describe(f.err), egress.EndpointsFlag))
}

func (f answerRefused) ready(c *storagev1alpha1.Contract) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonAnswerRefused, fmt.Sprintf(
		"The S3 endpoint %s answered with what the operator does not accept (%s): check that spec.credentials.endpoint "+
			"(or AWS_ENDPOINT_URL) is the S3 API itself, not a proxy or a page in front of it", c.Status.Endpoint, objectstore.Describe(f.err)))
}

func (f invalidConfiguration) ready(*storagev1alpha1.Contract) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonInvalidConfiguration, f.what)
}

func (existingAvailable) ready(c *storagev1alpha1.Contract) *engine.Condition {
	return engine.True(storagev1alpha1.ReasonAvailable, fmt.Sprintf(
		"The keys in Secret %s (key %s) work on %s; nothing is bought or cancelled for this account", c.Status.SecretName, c.Status.AccessKeyID, c.Status.Endpoint))
}

func (f credentialsIncomplete) ready(*storagev1alpha1.Contract) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonCredentialsIncomplete, f.what+
		": spec.credentials needs a Secret in this namespace with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and an endpoint "+
		"(spec.credentials.endpoint or AWS_ENDPOINT_URL in the Secret); looked at again shortly")
}

func (f invalidCredentials) ready(c *storagev1alpha1.Contract) *engine.Condition {
	hint := "check the keys in Secret " + c.Status.SecretName
	if objectstore.ErrorCode(f.err) == "PermanentRedirect" {
		hint = "the region (" + c.Status.Region + ") or the addressing style is not the bucket endpoint's: set spec.credentials.region or forcePathStyle"
	}
	return engine.False(storagev1alpha1.ReasonInvalidCredentials, fmt.Sprintf(
		"The S3 endpoint %s refused key %s (%s): %s; nothing was created", c.Status.Endpoint, c.Status.AccessKeyID, objectstore.Describe(f.err), hint))
}

func (f endpointUnreachable) ready(c *storagev1alpha1.Contract) *engine.Condition {
	if isUntrusted(f.err) {
		return engine.False(storagev1alpha1.ReasonEndpointUnreachable, fmt.Sprintf(
			"The TLS certificate of %s is not trusted (%s): add the CA that signed it to the manager's trust, "+
				"by mounting it and setting SSL_CERT_FILE (or SSL_CERT_DIR) in the manager's environment", c.Status.Endpoint, objectstore.Describe(f.err)))
	}
	return engine.False(storagev1alpha1.ReasonEndpointUnreachable, fmt.Sprintf(
		"The S3 endpoint %s did not answer (%s): check spec.credentials.endpoint (or AWS_ENDPOINT_URL), and that the manager can reach it",
		c.Status.Endpoint, objectstore.Describe(f.err)))
}

func (f existingS3Failed) ready(c *storagev1alpha1.Contract) *engine.Condition {
	return engine.False(storagev1alpha1.ReasonS3Unavailable, fmt.Sprintf(
		"The S3 endpoint %s failed (%s); retrying", c.Status.Endpoint, objectstore.Describe(f.err)))
}

// contractOfExistingSecret maps the Secret of spec.credentials, by the label the Contract put on
// it, to its Contract. The operator's own Secrets are their owners' business (Owns).
func contractOfExistingSecret(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[storagev1alpha1.ContractLabel]
	if name == "" || metav1.GetControllerOf(obj) != nil {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}}}
}
