package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// caseFile is the expectation file of every fixture folder.
const caseFile = "case.yaml"

// maxCaseNameLen keeps namespace-derived bucket names (`${NAMESPACE}-something`) well inside
// S3's 63 characters: "e2e-" + case + "-" + 5 random characters.
const maxCaseNameLen = 20

// Case is one folder under fixtures/: manifests and the steps of its case.yaml.
type Case struct {
	// Name is the folder's name; the case runs in a namespace named after it.
	Name string `json:"-"`
	// Dir is the folder; manifest paths in steps are relative to it.
	Dir string `json:"-"`

	// Description says in a sentence what the case shows.
	Description string `json:"description"`
	// Contract names the Contract whose Secret the S3 checks and putObject steps use, and whose
	// AWS_ACCESS_KEY_ID ${OWNER} stands for.
	Contract string `json:"contract,omitempty"`
	// Steps run in order; the first that fails ends the case.
	Steps []json.RawMessage `json:"steps"`
}

// Step is one entry of a case's steps: exactly one action, with the options that belong to it.
// Placeholders are expanded in the step's text just before it runs, so a step can name the
// access key of a Contract that an earlier step made Ready.
type Step struct {
	// Apply lists manifests (relative to the case folder) for `kubectl apply -f -`, in order.
	Apply []string `json:"apply,omitempty"`
	// ExpectError, with Apply, says the apply must fail and kubectl's stderr contain this text.
	ExpectError string `json:"expectError,omitempty"`

	// Wait lists resources (kind/name) for `kubectl wait`. With the default For
	// (condition=Ready) it first waits for status.observedGeneration to reach
	// metadata.generation, so a Ready left from before a change does not count.
	Wait []string `json:"wait,omitempty"`
	// For is kubectl wait's --for; condition=Ready when empty.
	For string `json:"for,omitempty"`

	// Delete lists resources for `kubectl delete --wait=false`; follow with WaitDeleted.
	Delete []string `json:"delete,omitempty"`
	// WaitDeleted lists resources for `kubectl wait --for=delete`.
	WaitDeleted []string `json:"waitDeleted,omitempty"`

	// Patch is a resource for `kubectl patch --type=merge`, with Merge as the patch.
	Patch string          `json:"patch,omitempty"`
	Merge json.RawMessage `json:"merge,omitempty"`

	// PutObject writes an object with the independent S3 client and the case Contract's
	// credentials.
	PutObject *PutObject `json:"putObject,omitempty"`

	// Expect lists checks, retried together until all pass or Timeout passes.
	Expect []Check `json:"expect,omitempty"`

	// Timeout bounds Wait, WaitDeleted (per resource) and Expect. Defaults: 2m for waits, 30s
	// for Expect.
	Timeout string `json:"timeout,omitempty"`
}

// PutObject is an object to write.
type PutObject struct {
	Bucket string `json:"bucket"`
	Key    string `json:"key"`
	Body   string `json:"body"`
}

// Check is one expectation. Exactly one of Secret, Bucket or Resource is set.
type Check struct {
	// Secret names a Secret read with `kubectl get secret -o jsonpath={.data}`.
	Secret string `json:"secret,omitempty"`
	// Keys must be present and non-empty in the Secret.
	Keys []string `json:"keys,omitempty"`
	// Values must match exactly. Only keys whose values are not secret belong here: a mismatch
	// prints both values.
	Values map[string]string `json:"values,omitempty"`

	// Bucket names a bucket on the S3 server, checked with the case Contract's credentials.
	Bucket string `json:"bucket,omitempty"`
	// Exists is true by default; false expects HeadBucket to answer 404, and no other bucket
	// check may be set.
	Exists *bool `json:"exists,omitempty"`
	// ACL lists the grants as "<GranteeType>:<ID or URI>:<Permission>", compared as a set.
	ACL []string `json:"acl,omitempty"`
	// Policy is the expected bucket policy, compared semantically.
	Policy json.RawMessage `json:"policy,omitempty"`
	// PolicyFromSpec names a Bucket resource whose spec.policy the bucket's policy must match.
	PolicyFromSpec string `json:"policyFromSpec,omitempty"`
	// NoPolicy expects the bucket to have no policy.
	NoPolicy bool `json:"noPolicy,omitempty"`
	// Objects is the number of objects the bucket must hold.
	Objects *int `json:"objects,omitempty"`

	// Resource is a kind/name read with `kubectl get`.
	Resource string `json:"resource,omitempty"`
	// Absent expects kubectl get to answer NotFound.
	Absent bool `json:"absent,omitempty"`
	// JSONPath and Equals: `kubectl get -o jsonpath=<JSONPath>` must print Equals.
	JSONPath string  `json:"jsonpath,omitempty"`
	Equals   *string `json:"equals,omitempty"`
}

// loadCases reads every fixture folder under dir.
func loadCases(dir string) ([]*Case, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading fixtures: %w", err)
	}
	var cases []*Case
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		c, err := loadCase(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("no cases under %s", dir)
	}
	return cases, nil
}

var caseNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// loadCase reads and checks one fixture folder, so a typo fails before anything is applied.
func loadCase(dir string) (*Case, error) {
	name := filepath.Base(dir)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("fixture %s: %s", name, fmt.Sprintf(format, args...))
	}
	if !caseNameRE.MatchString(name) || len(name) > maxCaseNameLen {
		return nil, fail("the folder name must be lowercase letters, digits and hyphens, at most %d characters", maxCaseNameLen)
	}
	raw, err := os.ReadFile(filepath.Join(dir, caseFile))
	if err != nil {
		return nil, fail("%v", err)
	}
	c := &Case{Name: name, Dir: dir}
	if err := yaml.UnmarshalStrict(raw, c); err != nil {
		return nil, fail("%s: %v", caseFile, err)
	}
	if c.Description == "" {
		return nil, fail("%s: description is required", caseFile)
	}
	if len(c.Steps) == 0 {
		return nil, fail("%s: no steps", caseFile)
	}
	for i, rawStep := range c.Steps {
		s, err := decodeStep(rawStep)
		if err == nil {
			err = s.validate(c)
		}
		if err != nil {
			return nil, fail("%s: step %d: %v", caseFile, i+1, err)
		}
	}
	return c, nil
}

// decodeStep decodes one step strictly.
func decodeStep(raw []byte) (*Step, error) {
	var s Step
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

// validate checks a step's shape: one action, options only where they belong, files present.
func (s *Step) validate(c *Case) error {
	actions := map[string]bool{
		"apply":       len(s.Apply) > 0,
		"wait":        len(s.Wait) > 0,
		"delete":      len(s.Delete) > 0,
		"waitDeleted": len(s.WaitDeleted) > 0,
		"patch":       s.Patch != "",
		"putObject":   s.PutObject != nil,
		"expect":      len(s.Expect) > 0,
	}
	var set []string
	for name, ok := range actions {
		if ok {
			set = append(set, name)
		}
	}
	slices.Sort(set)
	if len(set) != 1 {
		return fmt.Errorf("want exactly one of apply, wait, delete, waitDeleted, patch, putObject, expect; got %v", set)
	}
	action := set[0]
	if s.ExpectError != "" && action != "apply" {
		return errors.New("expectError belongs to apply")
	}
	if s.For != "" && action != "wait" {
		return errors.New("for belongs to wait")
	}
	if (s.Patch != "") != (len(s.Merge) > 0) {
		return errors.New("patch and merge go together")
	}
	if s.Timeout != "" {
		if action != "wait" && action != "waitDeleted" && action != "expect" {
			return errors.New("timeout belongs to wait, waitDeleted and expect")
		}
		if _, err := time.ParseDuration(s.Timeout); err != nil {
			return fmt.Errorf("timeout: %v", err)
		}
	}
	for _, f := range s.Apply {
		if _, err := os.Stat(filepath.Join(c.Dir, f)); err != nil {
			return fmt.Errorf("apply: %v", err)
		}
	}
	for _, r := range slices.Concat(s.Wait, s.Delete, s.WaitDeleted, []string{s.Patch}) {
		if r != "" && !strings.Contains(r, "/") {
			return fmt.Errorf("%q: name resources as kind/name", r)
		}
	}
	if p := s.PutObject; p != nil && (p.Bucket == "" || p.Key == "") {
		return errors.New("putObject needs bucket and key")
	}
	if (s.PutObject != nil || s.needsS3()) && c.Contract == "" {
		return errors.New("S3 checks and putObject need the case's contract")
	}
	for i, ch := range s.Expect {
		if err := ch.validate(); err != nil {
			return fmt.Errorf("expect %d: %v", i+1, err)
		}
	}
	return nil
}

func (s *Step) needsS3() bool {
	for _, ch := range s.Expect {
		if ch.Bucket != "" {
			return true
		}
	}
	return false
}

func (s *Step) timeout(def time.Duration) time.Duration {
	if d, err := time.ParseDuration(s.Timeout); err == nil && s.Timeout != "" {
		return d
	}
	return def
}

func (ch *Check) validate() error {
	kinds := 0
	for _, set := range []bool{ch.Secret != "", ch.Bucket != "", ch.Resource != ""} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return errors.New("want exactly one of secret, bucket, resource")
	}
	if ch.Secret == "" && (len(ch.Keys) > 0 || len(ch.Values) > 0) {
		return errors.New("keys and values belong to secret")
	}
	bucketChecks := len(ch.ACL) > 0 || len(ch.Policy) > 0 || ch.PolicyFromSpec != "" || ch.NoPolicy || ch.Objects != nil
	if ch.Bucket == "" && (bucketChecks || ch.Exists != nil) {
		return errors.New("exists, acl, policy, policyFromSpec, noPolicy and objects belong to bucket")
	}
	if ch.Exists != nil && !*ch.Exists && bucketChecks {
		return errors.New("a bucket expected absent has nothing else to check")
	}
	policies := 0
	for _, set := range []bool{len(ch.Policy) > 0, ch.PolicyFromSpec != "", ch.NoPolicy} {
		if set {
			policies++
		}
	}
	if policies > 1 {
		return errors.New("want at most one of policy, policyFromSpec, noPolicy")
	}
	if len(ch.Policy) > 0 {
		if _, err := canonicalPolicy(ch.Policy); err != nil {
			return fmt.Errorf("policy: %v", err)
		}
	}
	if ch.Resource == "" && (ch.Absent || ch.JSONPath != "" || ch.Equals != nil) {
		return errors.New("absent, jsonpath and equals belong to resource")
	}
	if (ch.JSONPath != "") != (ch.Equals != nil) {
		return errors.New("jsonpath and equals go together")
	}
	if ch.Resource != "" && ch.Absent == (ch.JSONPath != "") {
		return errors.New("a resource check wants either absent or jsonpath and equals")
	}
	return nil
}

// placeholderRE matches ${NAME} and ${NAME:argument}.
var placeholderRE = regexp.MustCompile(`\$\{([A-Z_0-9]+)(?::([a-z0-9.-]+))?\}`)

// expand replaces the placeholders in text. resolve returns the value of one placeholder.
// Values go into YAML and JSON documents as they are, so they must not need quoting.
func expand(text string, resolve func(name, arg string) (string, error)) (string, error) {
	var firstErr error
	out := placeholderRE.ReplaceAllStringFunc(text, func(m string) string {
		sub := placeholderRE.FindStringSubmatch(m)
		v, err := resolve(sub[1], sub[2])
		if err == nil && strings.ContainsAny(v, "\"\\\n'") {
			err = fmt.Errorf("the value of %s needs quoting, which placeholders do not do", m)
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return m
		}
		return v
	})
	return out, firstErr
}
