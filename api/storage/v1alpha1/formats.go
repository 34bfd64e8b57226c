package v1alpha1

// SecretFormat is one shape a credentials Secret holds its key in.
// +kubebuilder:validation:Enum=env;aws-files;cosi;obc;rclone;s3cfg
type SecretFormat string

const (
	// FormatEnv: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION, and for
	// one bucket BUCKET_NAME (and BUCKET_PREFIX): for envFrom.
	FormatEnv SecretFormat = "env"
	// FormatAWSFiles: "credentials" and "config", the AWS CLI's and SDKs' shared files
	// (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE), with the endpoint in the profile.
	FormatAWSFiles SecretFormat = "aws-files"
	// FormatCOSI: COSI v1alpha1's BucketInfo document under "BucketInfo", and v1alpha2's
	// COSI_* keys.
	FormatCOSI SecretFormat = "cosi"
	// FormatOBC: Rook's ObjectBucketClaim keys (BUCKET_HOST, BUCKET_PORT, BUCKET_NAME,
	// BUCKET_REGION, BUCKET_SUBREGION) beside the key pair, and in a ConfigMap of the Secret's
	// name without it.
	FormatOBC SecretFormat = "obc"
	// FormatRclone: "rclone.conf", with one remote.
	FormatRclone SecretFormat = "rclone"
	// FormatS3cfg: ".s3cfg", s3cmd's configuration.
	FormatS3cfg SecretFormat = "s3cfg"
)

// FormatsOrDefault is formats, or [env] when none are given.
func FormatsOrDefault(formats []SecretFormat) []SecretFormat {
	if len(formats) == 0 {
		return []SecretFormat{FormatEnv}
	}
	return formats
}
