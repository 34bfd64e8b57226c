package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/object-storage-manager/object-storage-manager/internal/localenv"
)

const (
	defaultWaitTimeout   = 2 * time.Minute
	defaultExpectTimeout = 30 * time.Second
	cleanupTimeout       = time.Minute
	// kubectlSlack is how much longer than its own --timeout a kubectl command may run.
	kubectlSlack = 30 * time.Second
	// quick bounds kubectl commands that do not wait for anything.
	quick = 30 * time.Second
)

// caseRun runs one Case in its own namespace.
type caseRun struct {
	t   *testing.T
	c   *Case
	env *Env
	ns  string
	k   *kubectl
	// s3 is the case Contract's independent client, made when first needed.
	s3 *s3.Client
	// keys caches access key ids by Contract for the placeholders.
	keys map[string]string
}

// newRun creates the case's namespace and registers its removal.
func newRun(t *testing.T, env *Env, c *Case) *caseRun {
	ns := fmt.Sprintf("e2e-%s-%s", c.Name, randomSuffix())
	r := &caseRun{t: t, c: c, env: env, ns: ns, keys: map[string]string{}}
	r.k = &kubectl{env: env, logf: t.Logf}
	if _, err := r.k.must(quick, "create", "namespace", ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.cleanup)
	r.k.namespace = ns
	t.Logf("case %s: %s (namespace %s)", c.Name, c.Description, ns)
	return r
}

func randomSuffix() string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return string(b)
}

// steps runs the case's steps in order, stopping at the first that fails.
func (r *caseRun) steps() {
	for i, raw := range r.c.Steps {
		text, err := expand(string(raw), r.resolve)
		if err != nil {
			r.t.Fatalf("step %d: %v", i+1, err)
		}
		s, err := decodeStep([]byte(text))
		if err != nil {
			r.t.Fatalf("step %d: %v", i+1, err)
		}
		if err := r.step(s); err != nil {
			r.t.Fatalf("step %d: %v", i+1, err)
		}
	}
}

func (r *caseRun) step(s *Step) error {
	switch {
	case len(s.Apply) > 0:
		return r.apply(s.Apply, s.ExpectError)
	case len(s.Wait) > 0:
		return r.wait(s.Wait, s.For, s.timeout(defaultWaitTimeout))
	case len(s.Delete) > 0:
		_, err := r.k.must(quick, append([]string{"delete", "--wait=false"}, s.Delete...)...)
		return err
	case len(s.WaitDeleted) > 0:
		timeout := s.timeout(defaultWaitTimeout)
		for _, res := range s.WaitDeleted {
			if _, err := r.k.must(timeout+kubectlSlack, "wait", "--for=delete", "--timeout="+timeout.String(), res); err != nil {
				return fmt.Errorf("%w%s", err, r.conditions(res))
			}
		}
		return nil
	case s.Patch != "":
		_, err := r.k.must(quick, "patch", s.Patch, "--type=merge", "-p", string(s.Merge))
		return err
	case s.PutObject != nil:
		return r.putObject(s.PutObject)
	case len(s.Expect) > 0:
		return r.expect(s.Expect, s.timeout(defaultExpectTimeout))
	}
	return errors.New("empty step")
}

// resolve gives the value of a placeholder.
func (r *caseRun) resolve(name, arg string) (string, error) {
	noArg := func(v string) (string, error) {
		if arg != "" {
			return "", fmt.Errorf("${%s} takes no argument", name)
		}
		return v, nil
	}
	switch name {
	case "NAMESPACE":
		return noArg(r.ns)
	case "S3_ENDPOINT":
		return noArg(r.env.S3Endpoint)
	case "S3_REGION":
		return noArg(r.env.S3Region)
	case "OWNER":
		if _, err := noArg(""); err != nil {
			return "", err
		}
		return r.accessKeyID(r.c.Contract)
	case "ACCESS_KEY_ID":
		if arg == "" {
			return "", errors.New("${ACCESS_KEY_ID:<contract>} names a Contract")
		}
		return r.accessKeyID(arg)
	}
	return "", fmt.Errorf("unknown placeholder ${%s}", name)
}

// secretData reads the credentials Secret of a Contract, as a user would: the Secret named in
// its status, through `kubectl get secret -o jsonpath={.data}`.
func (r *caseRun) secretData(contract string) (map[string]string, error) {
	name, err := r.k.must(quick, "get", "contract", contract, "-o", "jsonpath={.status.secretName}")
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, fmt.Errorf("contract %s has no status.secretName yet: wait for it to be Ready first", contract)
	}
	return r.readSecret(name)
}

// readSecret returns a Secret's data, decoded. Never log what it returns.
func (r *caseRun) readSecret(name string) (map[string]string, error) {
	out, err := r.k.must(quick, "get", "secret", name, "-o", "jsonpath={.data}")
	if err != nil {
		return nil, err
	}
	var encoded map[string]string
	if err := json.Unmarshal([]byte(out), &encoded); err != nil {
		return nil, fmt.Errorf("secret %s: reading its data: %v", name, err)
	}
	data := map[string]string{}
	for k, v := range encoded {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, fmt.Errorf("secret %s: key %s is not base64", name, k)
		}
		data[k] = string(b)
	}
	return data, nil
}

func (r *caseRun) accessKeyID(contract string) (string, error) {
	if key, ok := r.keys[contract]; ok {
		return key, nil
	}
	data, err := r.secretData(contract)
	if err != nil {
		return "", err
	}
	if data["AWS_ACCESS_KEY_ID"] == "" {
		return "", fmt.Errorf("the Secret of contract %s has no AWS_ACCESS_KEY_ID", contract)
	}
	r.keys[contract] = data["AWS_ACCESS_KEY_ID"]
	return r.keys[contract], nil
}

// client returns an S3 client with the case Contract's credentials, against the endpoint its
// Secret names: what any S3 tool would do with that Secret.
func (r *caseRun) client() (*s3.Client, error) {
	if r.s3 != nil {
		return r.s3, nil
	}
	data, err := r.secretData(r.c.Contract)
	if err != nil {
		return nil, err
	}
	for _, key := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_REGION"} {
		if data[key] == "" {
			return nil, fmt.Errorf("the Secret of contract %s lacks %s", r.c.Contract, key)
		}
	}
	r.s3 = localenv.NewS3Client(data["AWS_ENDPOINT_URL"], data["AWS_REGION"], data["AWS_ACCESS_KEY_ID"], data["AWS_SECRET_ACCESS_KEY"])
	return r.s3, nil
}

// apply runs `kubectl apply -f -` with the files' placeholders expanded.
func (r *caseRun) apply(files []string, expectError string) error {
	var docs []string
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(r.c.Dir, f))
		if err != nil {
			return err
		}
		text, err := expand(string(raw), r.resolve)
		if err != nil {
			return fmt.Errorf("%s: %v", f, err)
		}
		docs = append(docs, text)
	}
	r.t.Logf("(kubectl apply -f %s, with placeholders expanded)", strings.Join(files, " -f "))
	res := r.k.run(quick, []byte(strings.Join(docs, "\n---\n")), "apply", "-f", "-")
	if expectError == "" {
		return res.Err
	}
	if res.Err == nil {
		return fmt.Errorf("kubectl apply succeeded; want it rejected with %q", expectError)
	}
	if !strings.Contains(res.Stderr, expectError) {
		return fmt.Errorf("kubectl apply failed, but its stderr lacks %q:\n%s", expectError, res.Stderr)
	}
	r.t.Logf("rejected as expected: %s", strings.TrimSpace(res.Stderr))
	return nil
}

// wait runs kubectl wait on each resource. For the default condition=Ready it first waits for
// status.observedGeneration to reach metadata.generation, so that a Ready left from before
// the last change does not count.
func (r *caseRun) wait(resources []string, cond string, timeout time.Duration) error {
	for _, res := range resources {
		var fors []string
		if cond == "" {
			gen, err := r.k.must(quick, "get", res, "-o", "jsonpath={.metadata.generation}")
			if err != nil {
				return err
			}
			fors = []string{"jsonpath={.status.observedGeneration}=" + gen, "condition=Ready"}
		} else {
			fors = []string{cond}
		}
		for _, f := range fors {
			if _, err := r.k.must(timeout+kubectlSlack, "wait", res, "--for="+f, "--timeout="+timeout.String()); err != nil {
				return fmt.Errorf("%w%s", err, r.conditions(res))
			}
		}
	}
	return nil
}

// conditions describes a resource's conditions, for an error message.
func (r *caseRun) conditions(res string) string {
	out, err := r.k.must(quick, "get", res, "-o",
		`jsonpath={range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}`)
	if err != nil || out == "" {
		return ""
	}
	return "\nconditions of " + res + ":\n" + out
}

func (r *caseRun) putObject(p *PutObject) error {
	c, err := r.client()
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(quick)
	defer cancel()
	r.t.Logf("(S3 PutObject s3://%s/%s)", p.Bucket, p.Key)
	_, err = c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(p.Bucket), Key: aws.String(p.Key), Body: strings.NewReader(p.Body),
	})
	if err != nil {
		return fmt.Errorf("putting s3://%s/%s: %w", p.Bucket, p.Key, err)
	}
	return nil
}

// expect retries the checks until all pass at once or the timeout passes.
func (r *caseRun) expect(checks []Check, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var errs []error
		for i := range checks {
			if err := r.check(&checks[i]); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s:\n%w", timeout, errors.Join(errs...))
		}
		time.Sleep(time.Second)
	}
}

func (r *caseRun) check(ch *Check) error {
	switch {
	case ch.Secret != "":
		return r.checkSecret(ch)
	case ch.Bucket != "":
		return r.checkBucket(ch)
	default:
		return r.checkResource(ch)
	}
}

func (r *caseRun) checkSecret(ch *Check) error {
	data, err := r.readSecret(ch.Secret)
	if err != nil {
		return err
	}
	var errs []error
	for _, key := range ch.Keys {
		if data[key] == "" {
			errs = append(errs, fmt.Errorf("secret %s: %s missing or empty", ch.Secret, key))
		}
	}
	for key, want := range ch.Values {
		if got := data[key]; got != want {
			errs = append(errs, fmt.Errorf("secret %s: %s = %q, want %q", ch.Secret, key, got, want))
		}
	}
	return errors.Join(errs...)
}

func (r *caseRun) checkResource(ch *Check) error {
	res := r.k.run(quick, nil, "get", ch.Resource, "-o", "jsonpath="+ch.JSONPath)
	if ch.Absent {
		if res.Err == nil {
			return fmt.Errorf("%s exists; want it gone", ch.Resource)
		}
		if !strings.Contains(res.Stderr, "NotFound") {
			return res.Err
		}
		return nil
	}
	if res.Err != nil {
		return res.Err
	}
	if res.Stdout != *ch.Equals {
		return fmt.Errorf("%s: %s = %q, want %q", ch.Resource, ch.JSONPath, res.Stdout, *ch.Equals)
	}
	return nil
}

func (r *caseRun) checkBucket(ch *Check) error {
	c, err := r.client()
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(quick)
	defer cancel()
	bucket := aws.String(ch.Bucket)

	_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: bucket})
	if ch.Exists != nil && !*ch.Exists {
		if err == nil {
			return fmt.Errorf("bucket %s exists; want it gone", ch.Bucket)
		}
		if httpStatus(err) != http.StatusNotFound {
			return fmt.Errorf("bucket %s: want 404 from HeadBucket: %w", ch.Bucket, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("bucket %s: HeadBucket: %w", ch.Bucket, err)
	}

	var errs []error
	if len(ch.ACL) > 0 {
		errs = append(errs, r.checkACL(ctx, c, ch))
	}
	if want, ok, err := r.wantPolicy(ch); err != nil {
		errs = append(errs, err)
	} else if ok {
		errs = append(errs, checkPolicy(ctx, c, ch.Bucket, want))
	}
	if ch.Objects != nil {
		out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: bucket})
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("bucket %s: ListObjectsV2: %w", ch.Bucket, err))
		case len(out.Contents) != *ch.Objects:
			errs = append(errs, fmt.Errorf("bucket %s holds %d objects, want %d", ch.Bucket, len(out.Contents), *ch.Objects))
		}
	}
	return errors.Join(errs...)
}

// checkACL compares the bucket's grants with the expected ones as sets: versitygw lists the
// owner's grant twice.
func (r *caseRun) checkACL(ctx context.Context, c *s3.Client, ch *Check) error {
	out, err := c.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: aws.String(ch.Bucket)})
	if err != nil {
		return fmt.Errorf("bucket %s: GetBucketAcl: %w", ch.Bucket, err)
	}
	var got []string
	for _, g := range out.Grants {
		if g.Grantee == nil {
			continue
		}
		who := aws.ToString(g.Grantee.ID)
		if uri := aws.ToString(g.Grantee.URI); uri != "" {
			who = uri
		} else if email := aws.ToString(g.Grantee.EmailAddress); email != "" && who == "" {
			who = email
		}
		got = append(got, fmt.Sprintf("%s:%s:%s", g.Grantee.Type, who, g.Permission))
	}
	want := slices.Clone(ch.ACL)
	slices.Sort(got)
	slices.Sort(want)
	got, want = slices.Compact(got), slices.Compact(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("bucket %s: ACL grants\n  got:  %v\n  want: %v", ch.Bucket, got, want)
	}
	return nil
}

// wantPolicy returns the policy a check expects ("" for none), and whether it checks one.
func (r *caseRun) wantPolicy(ch *Check) (string, bool, error) {
	switch {
	case ch.NoPolicy:
		return "", true, nil
	case len(ch.Policy) > 0:
		return string(ch.Policy), true, nil
	case ch.PolicyFromSpec != "":
		out, err := r.k.must(quick, "get", ch.PolicyFromSpec, "-o", "jsonpath={.spec.policy}")
		if err != nil {
			return "", false, err
		}
		if out == "" {
			return "", false, fmt.Errorf("%s has no spec.policy", ch.PolicyFromSpec)
		}
		return out, true, nil
	}
	return "", false, nil
}

func checkPolicy(ctx context.Context, c *s3.Client, bucket, want string) error {
	got := ""
	out, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String(bucket)})
	switch {
	case errorCode(err) == "NoSuchBucketPolicy":
	case err != nil:
		return fmt.Errorf("bucket %s: GetBucketPolicy: %w", bucket, err)
	default:
		got = aws.ToString(out.Policy)
	}
	if want == "" || got == "" {
		if want != got {
			return fmt.Errorf("bucket %s: policy\n  got:  %s\n  want: %s", bucket, orNone(got), orNone(want))
		}
		return nil
	}
	gotC, err := canonicalPolicy([]byte(got))
	if err != nil {
		return fmt.Errorf("bucket %s: the server's policy: %v", bucket, err)
	}
	wantC, err := canonicalPolicy([]byte(want))
	if err != nil {
		return fmt.Errorf("bucket %s: the expected policy: %v", bucket, err)
	}
	if gotC != wantC {
		return fmt.Errorf("bucket %s: policy\n  got:  %s\n  want: %s", bucket, gotC, wantC)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

func httpStatus(err error) int {
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) {
		return respErr.HTTPStatusCode()
	}
	return 0
}

// statusTemplate prints each object's generations and conditions, for a failed case.
const statusTemplate = `{range .items[*]}{.kind}/{.metadata.name}: generation {.metadata.generation}, ` +
	`observed {.status.observedGeneration}{"\n"}` +
	`{range .status.conditions[*]}  {.type}={.status} {.reason}: {.message}{"\n"}{end}{end}`

// cleanup removes the case's namespace and what is in it. Buckets go first, so that a Bucket
// whose deletion is blocked is switched to Retain rather than emptied; then the Contracts, then
// the namespace, which the namespace controller empties and removes.
func (r *caseRun) cleanup() {
	t, k := r.t, r.k
	if t.Failed() {
		for _, args := range [][]string{
			{"get", "contracts,buckets", "-o", "jsonpath=" + statusTemplate},
			{"get", "events", "--sort-by=.lastTimestamp"},
		} {
			if out, err := k.must(quick, args...); err == nil {
				t.Logf("%s", out)
			}
		}
	}
	wait := func(kind string) error {
		_, err := k.must(cleanupTimeout+kubectlSlack, "wait", "--for=delete", kind, "--all", "--timeout="+cleanupTimeout.String())
		if err != nil && strings.Contains(err.Error(), "no matching resources found") {
			return nil
		}
		return err
	}
	if _, err := k.must(quick, "delete", "buckets", "--all", "--wait=false"); err != nil {
		t.Errorf("cleanup: %v", err)
	}
	if err := wait("buckets"); err != nil {
		t.Logf("cleanup: %v; switching what is left to Retain", err)
		names, _ := k.must(quick, "get", "buckets", "-o", "name")
		for _, name := range strings.Fields(names) {
			_, _ = k.must(quick, "patch", name, "--type=merge", "-p", `{"spec":{"bucketReclaimPolicy":"Retain"}}`)
		}
		if err := wait("buckets"); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
	if _, err := k.must(quick, "delete", "contracts", "--all", "--wait=false"); err != nil {
		t.Errorf("cleanup: %v", err)
	}
	if err := wait("contracts"); err != nil {
		t.Errorf("cleanup: %v", err)
	}
	// The namespace controller removes the rest (Secrets, Applications and their children).
	global := &kubectl{env: r.env, logf: t.Logf}
	ns := "namespace/" + r.ns
	if _, err := global.must(quick, "delete", ns, "--wait=false"); err != nil {
		t.Errorf("cleanup: %v", err)
		return
	}
	if _, err := global.must(cleanupTimeout+kubectlSlack, "wait", "--for=delete", ns, "--timeout="+cleanupTimeout.String()); err != nil {
		t.Errorf("cleanup: %v", err)
	}
}
