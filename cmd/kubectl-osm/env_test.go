package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
)

func TestEnv(t *testing.T) {
	quoted := secret("odd-credentials", accessKeys...)
	quoted.Data[storagev1alpha1.SecretKeySecretAccessKey] = []byte(`it's $HOME`)
	for _, tc := range []struct {
		name        string
		objs        []client.Object
		ref         ref
		want        string
		wantWarning string
		wantErr     string
	}{{
		name: "a Ready BucketAccess: its five variables, in a fixed order",
		objs: []client.Object{access("reader", "photos", available), secret("reader-credentials", accessKeys...)},
		ref:  ref{kindBucketAccess, "reader"},
		want: `export AWS_ACCESS_KEY_ID='value-of-AWS_ACCESS_KEY_ID'
export AWS_SECRET_ACCESS_KEY='value-of-AWS_SECRET_ACCESS_KEY'
export AWS_ENDPOINT_URL='value-of-AWS_ENDPOINT_URL'
export AWS_REGION='value-of-AWS_REGION'
export BUCKET_NAME='value-of-BUCKET_NAME'
`,
	}, {
		name: "a Contract: the account's four, from the Secret status names",
		objs: []client.Object{func() client.Object {
			c := contract("demo", available)
			c.Status.SecretName = "moved"
			return c
		}(), secret("moved", contractKeys...)},
		ref: ref{kindContract, "demo"},
		want: `export AWS_ACCESS_KEY_ID='value-of-AWS_ACCESS_KEY_ID'
export AWS_SECRET_ACCESS_KEY='value-of-AWS_SECRET_ACCESS_KEY'
export AWS_ENDPOINT_URL='value-of-AWS_ENDPOINT_URL'
export AWS_REGION='value-of-AWS_REGION'
`,
	}, {
		name: "a value a shell would expand is quoted",
		objs: []client.Object{func() client.Object {
			a := access("odd", "photos", available)
			a.Status.SecretName = "odd-credentials"
			return a
		}(), quoted},
		ref: ref{kindBucketAccess, "odd"},
		want: `export AWS_ACCESS_KEY_ID='value-of-AWS_ACCESS_KEY_ID'
export AWS_SECRET_ACCESS_KEY='it'\''s $HOME'
export AWS_ENDPOINT_URL='value-of-AWS_ENDPOINT_URL'
export AWS_REGION='value-of-AWS_REGION'
export BUCKET_NAME='value-of-BUCKET_NAME'
`,
	}, {
		name: "not Ready, but its Secret holds a key: printed, with a warning",
		objs: []client.Object{access("reader", "photos", ready(metav1.ConditionFalse, "PolicyPending", "The key cannot read yet")),
			secret("reader-credentials", accessKeys...)},
		ref:         ref{kindBucketAccess, "reader"},
		want:        "export AWS_ACCESS_KEY_ID='value-of-AWS_ACCESS_KEY_ID'\nexport AWS_SECRET_ACCESS_KEY='value-of-AWS_SECRET_ACCESS_KEY'\nexport AWS_ENDPOINT_URL='value-of-AWS_ENDPOINT_URL'\nexport AWS_REGION='value-of-AWS_REGION'\nexport BUCKET_NAME='value-of-BUCKET_NAME'\n",
		wantWarning: "BucketAccess/reader is not Ready (PolicyPending: The key cannot read yet)",
	}, {
		name:    "no Secret yet: an error that says why",
		objs:    []client.Object{access("reader", "photos", ready(metav1.ConditionFalse, "BucketNotReady", "Waiting for Bucket photos"))},
		ref:     ref{kindBucketAccess, "reader"},
		wantErr: `secrets "reader-credentials" not found; BucketAccess/reader is not Ready (BucketNotReady: Waiting for Bucket photos)`,
	}, {
		name:    "a Secret without the secret key: nothing half printed",
		objs:    []client.Object{access("reader", "photos", available), secret("reader-credentials", storagev1alpha1.SecretKeyAccessKeyID)},
		ref:     ref{kindBucketAccess, "reader"},
		wantErr: "secret reader-credentials has no AWS_SECRET_ACCESS_KEY yet (nor a key pair in another format); BucketAccess/reader writes it once it has a key",
	}, {
		name: "a Ready Contract over an existing account: the keys of its own Secret, the endpoint and region of its status",
		objs: []client.Object{existing("own", "mine"),
			secret("mine", storagev1alpha1.SecretKeyAccessKeyID, storagev1alpha1.SecretKeySecretAccessKey)},
		ref: ref{kindContract, "own"},
		want: `export AWS_ACCESS_KEY_ID='value-of-AWS_ACCESS_KEY_ID'
export AWS_SECRET_ACCESS_KEY='value-of-AWS_SECRET_ACCESS_KEY'
export AWS_ENDPOINT_URL='https://s3.example.com'
export AWS_REGION='eu-west-1'
`,
	}, {
		name: "an existing account whose Secret names another endpoint: status's, which spec.credentials chose, wins",
		objs: []client.Object{existing("own", "mine"), secret("mine", contractKeys...)},
		ref:  ref{kindContract, "own"},
		want: `export AWS_ACCESS_KEY_ID='value-of-AWS_ACCESS_KEY_ID'
export AWS_SECRET_ACCESS_KEY='value-of-AWS_SECRET_ACCESS_KEY'
export AWS_ENDPOINT_URL='https://s3.example.com'
export AWS_REGION='eu-west-1'
`,
	}, {
		name:    "an existing account's Secret without keys: the user puts them there",
		objs:    []client.Object{existing("own", "mine"), secret("mine", storagev1alpha1.SecretKeyEndpointURL)},
		ref:     ref{kindContract, "own"},
		wantErr: "secret mine has no AWS_ACCESS_KEY_ID yet (nor a key pair in another format); it is the account's own (spec.credentials.secretName): put the account's keys in it",
	}, {
		name: "a Contract whose Secret holds the key in rclone.conf only (spec.formats: [rclone])",
		objs: []client.Object{func() client.Object {
			c := contract("demo", available)
			c.Status.Endpoint, c.Status.Region = "http://127.0.0.1:7070", "us-east-1"
			return c
		}(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo-credentials"}, Data: map[string][]byte{
			"rclone.conf": []byte("[osm]\ntype = s3\naccess_key_id = AKR\nsecret_access_key = SKR\nendpoint = http://127.0.0.1:7070\n")}}},
		ref: ref{kindContract, "demo"},
		want: `export AWS_ACCESS_KEY_ID='AKR'
export AWS_SECRET_ACCESS_KEY='SKR'
export AWS_ENDPOINT_URL='http://127.0.0.1:7070'
export AWS_REGION='us-east-1'
`,
	}, {
		name: "a BucketAccess with a prefix, whose Secret holds aws-files only: endpoint and region from its Bucket, and the prefix",
		objs: []client.Object{func() client.Object {
			a := access("web", "photos", available)
			a.Spec.Prefix, a.Status.BucketName = "web/", "team-photos"
			return a
		}(), func() client.Object {
			b := bucket("photos", "demo", available)
			b.Status.Endpoint, b.Status.Region = "http://127.0.0.1:7070", "us-east-1"
			return b
		}(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-credentials"}, Data: map[string][]byte{
			"credentials": []byte("[default]\naws_access_key_id = AKW\naws_secret_access_key = SKW\n")}}},
		ref: ref{kindBucketAccess, "web"},
		want: `export AWS_ACCESS_KEY_ID='AKW'
export AWS_SECRET_ACCESS_KEY='SKW'
export AWS_ENDPOINT_URL='http://127.0.0.1:7070'
export AWS_REGION='us-east-1'
export BUCKET_NAME='team-photos'
export BUCKET_PREFIX='web/'
`,
	}, {
		name: "a BucketAccess over several Buckets: each bucket's variables, named by its Bucket, from status.buckets",
		objs: []client.Object{func() client.Object {
			a := access("app", "", available)
			a.Spec.Access = ""
			a.Spec.Buckets = []storagev1alpha1.AccessBucket{{Name: "photos", Access: storagev1alpha1.AccessReadOnly},
				{Name: "user-uploads", Access: storagev1alpha1.AccessWriteOnly, Prefix: "db/"}}
			a.Status.Buckets = []storagev1alpha1.AccessBucketStatus{{Name: "photos", BucketName: "team-photos"}, {Name: "user-uploads", BucketName: "team-uploads"}}
			return a
		}(), func() client.Object {
			b := bucket("photos", "demo", available)
			b.Status.Endpoint, b.Status.Region = "http://127.0.0.1:7070", "us-east-1"
			return b
		}(), secret("app-credentials", storagev1alpha1.SecretKeyAccessKeyID, storagev1alpha1.SecretKeySecretAccessKey)},
		ref: ref{kindBucketAccess, "app"},
		want: `export AWS_ACCESS_KEY_ID='value-of-AWS_ACCESS_KEY_ID'
export AWS_SECRET_ACCESS_KEY='value-of-AWS_SECRET_ACCESS_KEY'
export AWS_ENDPOINT_URL='http://127.0.0.1:7070'
export AWS_REGION='us-east-1'
export BUCKET_NAME_PHOTOS='team-photos'
export BUCKET_NAME_USER_UPLOADS='team-uploads'
export BUCKET_PREFIX_USER_UPLOADS='db/'
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			creds, err := readCredentials(context.Background(), fakeClient(tc.objs...), ns, tc.ref)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := writeEnv(&out, creds.vars); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if creds.warning != tc.wantWarning {
				t.Errorf("warning %q, want %q", creds.warning, tc.wantWarning)
			}
		})
	}
}

// existing is a Ready Contract over an existing account whose keys are in Secret secret, as the
// operator leaves it: the endpoint and region of spec.credentials in status.
func existing(name, secret string) *storagev1alpha1.Contract {
	c := contract(name, available)
	c.Spec = storagev1alpha1.ContractSpec{Credentials: &storagev1alpha1.ContractCredentials{SecretName: secret,
		Endpoint: "https://s3.example.com", Region: "eu-west-1"}}
	c.Status.SecretName, c.Status.Endpoint, c.Status.Region, c.Status.State = secret, "https://s3.example.com", "eu-west-1", "active"
	return c
}

// TestEnvOutputIsWhatAShellReads evaluates the lines in sh, as eval "$(kubectl osm env ...)"
// does, and reads the variables back.
func TestEnvOutputIsWhatAShellReads(t *testing.T) {
	values := map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": `a'b"c$d\e` + "`f` g"}
	var out bytes.Buffer
	if err := writeEnv(&out, [][2]string{{"AWS_ACCESS_KEY_ID", values["AWS_ACCESS_KEY_ID"]}, {"AWS_SECRET_ACCESS_KEY", values["AWS_SECRET_ACCESS_KEY"]}}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", out.String()+`printf '%s\n%s' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY"`)
	got, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := values["AWS_ACCESS_KEY_ID"] + "\n" + values["AWS_SECRET_ACCESS_KEY"]; string(got) != want {
		t.Errorf("sh read %q, want %q", got, want)
	}
}

// TestEnvRefusesATerminal: a secret key is never printed to a screen unless asked, and the
// refusal comes before anything is read from the cluster.
func TestEnvRefusesATerminal(t *testing.T) {
	var out, errOut bytes.Buffer
	cmd := newRootCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, func() bool { return true })
	// A kubeconfig that cannot work: the refusal must not need it.
	cmd.SetArgs([]string{"--kubeconfig", os.DevNull, "env", "bucketaccess/reader"})
	err := cmd.Execute()
	if !errors.Is(err, errTerminal) {
		t.Fatalf("env to a terminal: error %v, want %v", err, errTerminal)
	}
	if out.Len() != 0 {
		t.Errorf("env printed %q to the terminal", out.String())
	}
	if !strings.Contains(errOut.String(), "--show") {
		t.Errorf("the refusal does not say how to print anyway: %q", errOut.String())
	}

	// With --show it goes on, and fails only for want of a cluster.
	out.Reset()
	errOut.Reset()
	cmd = newRootCommand(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, func() bool { return true })
	cmd.SetArgs([]string{"--kubeconfig", os.DevNull, "env", "--show", "bucketaccess/reader"})
	if err := cmd.Execute(); err == nil || errors.Is(err, errTerminal) {
		t.Errorf("env --show to a terminal: error %v, want one about the cluster", err)
	}
}
