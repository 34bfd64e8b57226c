package v1alpha1

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/webhook/webhooktest"
)

func validContract() *storagev1alpha1.Contract {
	return &storagev1alpha1.Contract{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a", Namespace: "team-a"},
		Spec:       storagev1alpha1.ContractSpec{Plan: "standard"},
	}
}

// testEndpoints is what the platform of these tests lets tenants name.
var testEndpoints = mustAllow("https://*.amazonaws.com, https://minio.example.com:9000")

func TestContractDefault(t *testing.T) {
	tests := []struct {
		name   string
		op     admissionv1.Operation
		modify func(*storagev1alpha1.Contract)
		want   storagev1alpha1.ContractSpec
	}{
		{name: "a bought Contract is cancelled when deleted, unless told otherwise", modify: func(*storagev1alpha1.Contract) {}, want: storagev1alpha1.ContractSpec{
			Plan: "standard", ReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete, SecretName: "team-a-credentials",
		}},
		{name: "set fields stay", modify: func(c *storagev1alpha1.Contract) {
			c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyRetain
			c.Spec.SecretName = "s3"
		}, want: storagev1alpha1.ContractSpec{
			Plan: "standard", ReclaimPolicy: storagev1alpha1.ReclaimPolicyRetain, SecretName: "s3",
		}},
		{name: "an account the user has keeps its keys where they are, and is never closed", modify: func(c *storagev1alpha1.Contract) {
			c.Spec = storagev1alpha1.ContractSpec{Credentials: &storagev1alpha1.ContractCredentials{SecretName: "own-keys"}}
		}, want: storagev1alpha1.ContractSpec{
			ReclaimPolicy: storagev1alpha1.ReclaimPolicyRetain, Credentials: &storagev1alpha1.ContractCredentials{SecretName: "own-keys"},
		}},
		{name: "no name yet (generateName)", modify: func(c *storagev1alpha1.Contract) {
			c.Name = ""
			c.GenerateName = "team-"
		}, want: storagev1alpha1.ContractSpec{
			Plan: "standard", ReclaimPolicy: storagev1alpha1.ReclaimPolicyDelete,
		}},
		// A Contract created with the webhooks off keeps its contract (an empty policy cancels
		// nothing); an update, such as the controller adding its finalizer, must not make it Delete.
		{name: "an update leaves an empty policy as it is", op: admissionv1.Update, modify: func(*storagev1alpha1.Contract) {}, want: storagev1alpha1.ContractSpec{
			Plan: "standard", SecretName: "team-a-credentials",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validContract()
			tt.modify(c)
			op := tt.op
			if op == "" {
				op = admissionv1.Create
			}
			ctx := admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: op}})
			if err := (&ContractDefaulter{}).Default(ctx, c); err != nil {
				t.Fatalf("Default() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, c.Spec); diff != "" {
				t.Errorf("spec mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContractValidateCreate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*storagev1alpha1.Contract)
		want   []string
	}{
		{name: "minimal", modify: func(*storagev1alpha1.Contract) {}},
		{name: "everything set", modify: func(c *storagev1alpha1.Contract) {
			c.Spec.Region = "eu-central-1"
			c.Spec.DisplayName = "Team A"
			c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
			c.Spec.SecretName = "team-a.s3-credentials"
		}},
		{name: "no plan", modify: func(c *storagev1alpha1.Contract) { c.Spec.Plan = "" }, want: []string{
			`spec.plan: Required value: name the provider's plan, for example "standard", or use an account you have with spec.credentials`,
		}},
		{name: "blank plan", modify: func(c *storagev1alpha1.Contract) { c.Spec.Plan = "  " }, want: []string{
			`spec.plan: Required value: name the provider's plan, for example "standard", or use an account you have with spec.credentials`,
		}},
		{name: "secretName not a DNS subdomain", modify: func(c *storagev1alpha1.Contract) { c.Spec.SecretName = "Team_A" }, want: []string{
			`spec.secretName: Invalid value: "Team_A": must be a valid Secret name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		}},
		{name: "secretName too long", modify: func(c *storagev1alpha1.Contract) { c.Spec.SecretName = strings.Repeat("a", 254) }, want: []string{
			`spec.secretName: Invalid value: "` + strings.Repeat("a", 254) + `": must be a valid Secret name: must be no more than 253 characters`,
		}},
		{name: "an account the user has", modify: func(c *storagev1alpha1.Contract) {
			c.Spec = storagev1alpha1.ContractSpec{ReclaimPolicy: storagev1alpha1.ReclaimPolicyRetain, Credentials: &storagev1alpha1.ContractCredentials{
				SecretName: "own-keys", Endpoint: "https://s3.eu-west-1.amazonaws.com", Region: "eu-west-1"}}
		}},
		{name: "an account at an endpoint the platform does not allow", modify: func(c *storagev1alpha1.Contract) {
			c.Spec = storagev1alpha1.ContractSpec{ReclaimPolicy: storagev1alpha1.ReclaimPolicyRetain, Credentials: &storagev1alpha1.ContractCredentials{
				SecretName: "own-keys", Endpoint: "http://169.254.169.254/latest/meta-data", Region: "eu-west-1"}}
		}, want: []string{
			`spec.credentials.endpoint: Forbidden: http://169.254.169.254/latest/meta-data is not on the platform's list of allowed endpoints; ` +
				`the platform allows https://*.amazonaws.com, https://minio.example.com:9000`,
		}},
		{name: "an account at an endpoint with a password, or a region that is not one", modify: func(c *storagev1alpha1.Contract) {
			c.Spec = storagev1alpha1.ContractSpec{ReclaimPolicy: storagev1alpha1.ReclaimPolicyRetain, Credentials: &storagev1alpha1.ContractCredentials{
				SecretName: "own-keys", Endpoint: "https://user:pw@minio.example.com:9000"}}
		}, want: []string{
			`spec.credentials.endpoint: Forbidden: https://user:pw@minio.example.com:9000 is not allowed: it may not carry a user or password; ` +
				`the platform allows https://*.amazonaws.com, https://minio.example.com:9000`,
		}},
		{name: "an account the user has, with what only buying means", modify: func(c *storagev1alpha1.Contract) {
			c.Spec.Credentials = &storagev1alpha1.ContractCredentials{SecretName: "Own_Keys"}
			c.Spec.Region = "eu-west-1"
			c.Spec.SecretName = "copy"
			c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
			c.Spec.KeyRotation = &storagev1alpha1.KeyRotation{}
		}, want: []string{
			`spec.plan: Forbidden: set exactly one of plan and credentials: spec.credentials uses an account you have, and nothing is bought`,
			`spec.region: Forbidden: use spec.credentials.region: spec.credentials uses an account you have, and nothing is bought`,
			`spec.secretName: Forbidden: the keys stay in spec.credentials.secretName, and are not copied: spec.credentials uses an account you have, and nothing is bought`,
			`spec.reclaimPolicy: Forbidden: reclaimPolicy does not apply: deleting the Contract never closes the account: spec.credentials uses an account you have, and nothing is bought`,
			`spec.keyRotation: Forbidden: the operator cannot make keys for this account: put new keys in the Secret, and they are used at once: spec.credentials uses an account you have, and nothing is bought`,
			`spec.credentials.secretName: Invalid value: "Own_Keys": must be a valid Secret name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		}},
		{name: "both problems", modify: func(c *storagev1alpha1.Contract) {
			c.Spec.Plan = ""
			c.Spec.SecretName = "-x"
		}, want: []string{
			`spec.plan: Required value: name the provider's plan, for example "standard", or use an account you have with spec.credentials`,
			`spec.secretName: Invalid value: "-x": must be a valid Secret name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validContract()
			tt.modify(c)
			warnings, err := (&ContractValidator{Endpoints: testEndpoints}).ValidateCreate(context.Background(), c)
			if len(warnings) > 0 {
				t.Errorf("warnings = %q, want none", warnings)
			}
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("ValidateCreate() causes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContractValidateUpdate(t *testing.T) {
	tests := []struct {
		name   string
		old    func(*storagev1alpha1.Contract)
		modify func(*storagev1alpha1.Contract)
		want   []string
	}{
		{name: "unchanged", modify: func(*storagev1alpha1.Contract) {}},
		{name: "mutable fields changed", modify: func(c *storagev1alpha1.Contract) {
			c.Spec.ReclaimPolicy = storagev1alpha1.ReclaimPolicyDelete
			c.Spec.SecretName = "team-a-s3"
			c.Finalizers = []string{"storage.osm.dev/in-use"}
		}},
		{name: "plan changed", modify: func(c *storagev1alpha1.Contract) { c.Spec.Plan = "premium" }, want: []string{
			`spec.plan: Invalid value: "premium": cannot change (was "standard")`,
		}},
		{name: "plan removed", modify: func(c *storagev1alpha1.Contract) { c.Spec.Plan = "" }, want: []string{
			`spec.plan: Invalid value: "": cannot change (was "standard")`,
			`spec.plan: Required value: name the provider's plan, for example "standard", or use an account you have with spec.credentials`,
		}},
		{name: "region added", modify: func(c *storagev1alpha1.Contract) { c.Spec.Region = "eu-central-1" }, want: []string{
			`spec.region: Invalid value: "eu-central-1": cannot change (was unset)`,
		}},
		{name: "region removed", old: func(c *storagev1alpha1.Contract) { c.Spec.Region = "eu-central-1" }, modify: func(c *storagev1alpha1.Contract) { c.Spec.Region = "" }, want: []string{
			`spec.region: Invalid value: "": cannot change (was "eu-central-1")`,
		}},
		{name: "region changed", old: func(c *storagev1alpha1.Contract) { c.Spec.Region = "eu-central-1" }, modify: func(c *storagev1alpha1.Contract) { c.Spec.Region = "us-east-1" }, want: []string{
			`spec.region: Invalid value: "us-east-1": cannot change (was "eu-central-1")`,
		}},
		{name: "secretName changed to an invalid name", modify: func(c *storagev1alpha1.Contract) { c.Spec.SecretName = "team-a." }, want: []string{
			`spec.secretName: Invalid value: "team-a.": must be a valid Secret name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		}},
		{name: "an account the user has, moved to another endpoint", old: func(c *storagev1alpha1.Contract) {
			c.Spec = storagev1alpha1.ContractSpec{Credentials: &storagev1alpha1.ContractCredentials{SecretName: "own-keys"}}
		}, modify: func(c *storagev1alpha1.Contract) { c.Spec.Credentials.Endpoint = "https://elsewhere.example.com" }, want: []string{
			`spec.credentials: Forbidden: cannot change: create another Contract for another account (the keys in the Secret may change)`,
			`spec.credentials.endpoint: Forbidden: https://elsewhere.example.com is not on the platform's list of allowed endpoints; ` +
				`the platform allows https://*.amazonaws.com, https://minio.example.com:9000`,
		}},
		{name: "a bought account turned into one the user has", modify: func(c *storagev1alpha1.Contract) {
			c.Spec.Plan = ""
			c.Spec.Credentials = &storagev1alpha1.ContractCredentials{SecretName: "own-keys"}
		}, want: []string{
			`spec.plan: Invalid value: "": cannot change (was "standard")`,
			`spec.credentials: Forbidden: cannot change: create another Contract for another account (the keys in the Secret may change)`,
		}},
		// Fields that did not change are not checked again, so an object admitted under older
		// rules stays editable and deletable.
		{name: "unchanged fields are not checked again", old: func(c *storagev1alpha1.Contract) {
			c.Spec.Plan = " "
			c.Spec.SecretName = "Legacy_Secret"
		}, modify: func(c *storagev1alpha1.Contract) {
			c.Spec.Formats = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatS3cfg}
		}},
		{name: "display name changed", modify: func(c *storagev1alpha1.Contract) { c.Spec.DisplayName = "Team B" }, want: []string{
			`spec.displayName: Invalid value: "Team B": cannot change (was unset)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldC := validContract()
			if tt.old != nil {
				tt.old(oldC)
			}
			newC := oldC.DeepCopy()
			tt.modify(newC)
			warnings, err := (&ContractValidator{Endpoints: testEndpoints}).ValidateUpdate(context.Background(), oldC, newC)
			if len(warnings) > 0 {
				t.Errorf("warnings = %q, want none", warnings)
			}
			if diff := cmp.Diff(tt.want, webhooktest.Causes(t, err)); diff != "" {
				t.Errorf("ValidateUpdate() causes mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestContractValidateDelete(t *testing.T) {
	c := validContract()
	c.Spec.Plan = ""
	if _, err := (&ContractValidator{Endpoints: testEndpoints}).ValidateDelete(context.Background(), c); err != nil {
		t.Errorf("ValidateDelete() error = %v, want nil", err)
	}
}
