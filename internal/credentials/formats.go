package credentials

import (
	"errors"
	"maps"
	"net/url"
	"slices"

	storagev1alpha1 "github.com/object-storage-manager/object-storage-manager/api/storage/v1alpha1"
	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// Connection is where a key pair works.
type Connection struct {
	Endpoint, Region string
	// Bucket, when set, is the one bucket the key is for; Prefix, when set, the prefix of the
	// objects it reaches there.
	Bucket, Prefix string
	// Buckets, when set, are the several buckets the key is for (a BucketAccess's
	// spec.buckets), in their order; then Bucket and Prefix are not.
	Buckets []BucketConnection
}

// BucketConnection is one of several buckets a key reaches.
type BucketConnection struct {
	// Name is the Bucket's (the resource's) name, which names its variables and its rclone
	// remote; Bucket is its S3 bucket, Prefix the prefix of the objects the key reaches there.
	Name, Bucket, Prefix string
}

// Secret keys of the list form's env format: BUCKET_NAME_<EnvNameOf(name)> and
// BUCKET_PREFIX_<EnvNameOf(name)> for each bucket.
const (
	envBucketNamePrefix   = storagev1alpha1.SecretKeyBucketName + "_"
	envBucketPrefixPrefix = storagev1alpha1.SecretKeyBucketPrefix + "_"
)

// EnvBucketNameKey is the env format's variable that holds, in the Secret of a BucketAccess over
// several Buckets, the S3 bucket of the Bucket named name.
func EnvBucketNameKey(name string) string {
	return envBucketNamePrefix + storagev1alpha1.EnvNameOf(name)
}

// Rendered is a Secret's credentials in the formats asked for.
type Rendered struct {
	// Data is set on the Secret; Remove are keys the operator wrote in a format that is no
	// longer asked for (or that no longer applies, such as BUCKET_PREFIX), taken out of it.
	Data   map[string][]byte
	Remove []string
	// RemovePrefixed: every key that starts with one of these and is not in Data is taken out
	// (the variables of a bucket taken out of a BucketAccess's spec.buckets).
	RemovePrefixed []string
	// ConfigMap is the data of the ConfigMap of the Secret's name (obc), never a key; nil: no
	// such ConfigMap (one the owner has is deleted).
	ConfigMap map[string]string
}

// format is one shape of the credentials in a Secret: a renderer of the credential state, and
// the reader of the key pair it wrote.
type format struct {
	// keys are the Secret keys it writes.
	keys []string
	// render is its data for c and key; without a key (nil), only what holds none. An error
	// (UnsafeValueError) is a value the format cannot hold as it is.
	render func(c Connection, key *contractclient.Credentials) (map[string][]byte, error)
	// key is the key pair data holds in this format, zero for none.
	key func(data map[string][]byte) contractclient.Credentials
}

// Secret keys of the formats beyond env's.
const (
	AWSCredentialsFile = "credentials"
	AWSConfigFile      = "config"
	RcloneConfigFile   = "rclone.conf"
	S3cfgFile          = ".s3cfg"
	// RcloneRemote is the remote rclone.conf defines: "rclone lsf osm:<bucket>".
	RcloneRemote = "osm"
)

var envKeys = []string{storagev1alpha1.SecretKeyAccessKeyID, storagev1alpha1.SecretKeySecretAccessKey,
	storagev1alpha1.SecretKeyEndpointURL, storagev1alpha1.SecretKeyRegion, storagev1alpha1.SecretKeyBucketName,
	storagev1alpha1.SecretKeyBucketPrefix}

// formats are every format; keyOrder the order KeyOf looks for a key pair in.
var (
	formats = map[storagev1alpha1.SecretFormat]format{
		storagev1alpha1.FormatEnv:      {keys: envKeys, render: takesAny(Env), key: envKey},
		storagev1alpha1.FormatAWSFiles: {keys: []string{AWSCredentialsFile, AWSConfigFile}, render: awsFiles, key: iniKey(AWSCredentialsFile, "aws_access_key_id", "aws_secret_access_key")},
		storagev1alpha1.FormatCOSI:     {keys: cosiKeys, render: takesAny(cosi), key: cosiKey},
		storagev1alpha1.FormatOBC:      {keys: obcSecretKeys, render: takesAny(obc), key: envKey},
		storagev1alpha1.FormatRclone:   {keys: []string{RcloneConfigFile}, render: rclone, key: iniKey(RcloneConfigFile, "access_key_id", "secret_access_key")},
		storagev1alpha1.FormatS3cfg:    {keys: []string{S3cfgFile}, render: s3cfg, key: iniKey(S3cfgFile, "access_key", "secret_key")},
	}
	keyOrder = []storagev1alpha1.SecretFormat{storagev1alpha1.FormatEnv, storagev1alpha1.FormatAWSFiles,
		storagev1alpha1.FormatRclone, storagev1alpha1.FormatS3cfg, storagev1alpha1.FormatCOSI}
)

// Render is the Secret data of the formats asked for, for key (nil: none known, and what holds
// one is left as it is) and its connection: one rendering of one state, so a new key reaches
// every format in the same write. A value one of them cannot hold as it is fails the whole
// rendering (ErrUnsafeValue), so no Secret is ever written in part.
func Render(asked []storagev1alpha1.SecretFormat, c Connection, key *contractclient.Credentials) (Rendered, error) {
	out := Rendered{Data: map[string][]byte{}}
	written := map[string]bool{}
	for _, name := range storagev1alpha1.FormatsOrDefault(asked) {
		f, ok := formats[name]
		if !ok {
			continue
		}
		data, err := f.render(c, key)
		if unsafe := (*UnsafeValueError)(nil); errors.As(err, &unsafe) {
			unsafe.Format = name
		}
		if err != nil {
			return Rendered{}, err
		}
		for k, v := range data {
			out.Data[k] = v
		}
		for _, k := range f.keys {
			written[k] = true
		}
		if name == storagev1alpha1.FormatOBC {
			out.ConfigMap = obcConfigMap(c)
		}
	}
	if c.Buckets != nil {
		out.RemovePrefixed = []string{envBucketNamePrefix, envBucketPrefixPrefix}
	}
	for _, name := range slices.Sorted(maps.Keys(formats)) {
		for _, k := range formats[name].keys {
			_, rendered := out.Data[k]
			// Without a key, a format asked for keeps what it holds; with one, it holds only
			// what it rendered.
			if !rendered && (!written[k] || key != nil) && !slices.Contains(out.Remove, k) {
				out.Remove = append(out.Remove, k)
			}
		}
	}
	return out, nil
}

// takesAny is a renderer of a format that holds any value as it is: each value is a Secret key
// of its own (env, obc) or JSON-encoded (cosi's BucketInfo).
func takesAny(render func(Connection, *contractclient.Credentials) map[string][]byte) func(Connection, *contractclient.Credentials) (map[string][]byte, error) {
	return func(c Connection, key *contractclient.Credentials) (map[string][]byte, error) {
		return render(c, key), nil
	}
}

// keyIn is the key pair Secret data holds, in whichever format holds one; zero for none.
func keyIn(data map[string][]byte) contractclient.Credentials {
	for _, name := range keyOrder {
		if key := formats[name].key(data); key.AccessKeyID != "" && key.SecretAccessKey != "" {
			return key
		}
	}
	return contractclient.Credentials{}
}

// Env is the key pair and its connection as environment variables every S3 client reads
// (AWS_*), with BUCKET_NAME (and BUCKET_PREFIX) for a key of one bucket, and
// BUCKET_NAME_<NAME> (and BUCKET_PREFIX_<NAME>) for each of several, NAME the Bucket's name as
// storagev1alpha1.EnvNameOf spells it. Without a key (nil), only the connection.
func Env(c Connection, key *contractclient.Credentials) map[string][]byte {
	data := map[string][]byte{
		storagev1alpha1.SecretKeyEndpointURL: []byte(c.Endpoint),
		storagev1alpha1.SecretKeyRegion:      []byte(c.Region),
	}
	for _, b := range c.Buckets {
		data[EnvBucketNameKey(b.Name)] = []byte(b.Bucket)
		if b.Prefix != "" {
			data[envBucketPrefixPrefix+storagev1alpha1.EnvNameOf(b.Name)] = []byte(b.Prefix)
		}
	}
	if c.Bucket != "" {
		data[storagev1alpha1.SecretKeyBucketName] = []byte(c.Bucket)
	}
	if c.Prefix != "" {
		data[storagev1alpha1.SecretKeyBucketPrefix] = []byte(c.Prefix)
	}
	if key != nil {
		data[storagev1alpha1.SecretKeyAccessKeyID] = []byte(key.AccessKeyID)
		data[storagev1alpha1.SecretKeySecretAccessKey] = []byte(key.SecretAccessKey)
	}
	return data
}

func envKey(data map[string][]byte) contractclient.Credentials {
	return contractclient.Credentials{AccessKeyID: string(data[storagev1alpha1.SecretKeyAccessKeyID]),
		SecretAccessKey: string(data[storagev1alpha1.SecretKeySecretAccessKey])}
}

// awsFiles are the AWS CLI's and SDKs' shared files, profile "default": the key in
// credentials, the region, the endpoint and path-style addressing in config.
func awsFiles(c Connection, key *contractclient.Credentials) (map[string][]byte, error) {
	if key == nil {
		return nil, nil
	}
	creds, err := ini(AWSCredentialsFile, "default", "aws_access_key_id", key.AccessKeyID, "aws_secret_access_key", key.SecretAccessKey)
	if err != nil {
		return nil, err
	}
	config, err := ini(AWSConfigFile, "default", "region", c.Region, "endpoint_url", c.Endpoint)
	if err != nil {
		return nil, err
	}
	config += "s3 =\n    addressing_style = path\n"
	return map[string][]byte{AWSCredentialsFile: []byte(creds), AWSConfigFile: []byte(config)}, nil
}

// rclone is an rclone.conf with one remote, RcloneRemote. It never creates a bucket (the key
// may not), and addresses buckets by path, as every S3 server takes. A key of several buckets
// also gets, for each, an alias remote "osm-<Bucket's name>" that stands for its bucket and
// prefix: "rclone lsf osm-photos:".
func rclone(c Connection, key *contractclient.Credentials) (map[string][]byte, error) {
	if key == nil {
		return nil, nil
	}
	conf, err := ini(RcloneConfigFile, RcloneRemote, "type", "s3", "provider", "Other", "access_key_id", key.AccessKeyID,
		"secret_access_key", key.SecretAccessKey, "endpoint", c.Endpoint, "region", c.Region,
		"force_path_style", "true", "no_check_bucket", "true")
	if err != nil {
		return nil, err
	}
	for _, b := range c.Buckets {
		alias, err := ini(RcloneConfigFile, RcloneRemote+"-"+b.Name, "type", "alias", "remote", RcloneRemote+":"+b.Bucket+"/"+b.Prefix)
		if err != nil {
			return nil, err
		}
		conf += "\n" + alias
	}
	return map[string][]byte{RcloneConfigFile: []byte(conf)}, nil
}

// s3cfg is s3cmd's configuration: the endpoint as host and port for path-style addressing,
// https or not as the endpoint says, signature v4.
func s3cfg(c Connection, key *contractclient.Credentials) (map[string][]byte, error) {
	if key == nil {
		return nil, nil
	}
	host, https := c.Endpoint, "True"
	if u, err := url.Parse(c.Endpoint); err == nil && u.Host != "" {
		host = u.Host
		if u.Scheme == "http" {
			https = "False"
		}
	}
	conf, err := ini(S3cfgFile, "default", "access_key", key.AccessKeyID, "secret_key", key.SecretAccessKey, "host_base", host,
		"host_bucket", host, "use_https", https, "bucket_location", c.Region, "signature_v2", "False")
	if err != nil {
		return nil, err
	}
	return map[string][]byte{S3cfgFile: []byte(conf)}, nil
}

// OBC keys: Rook's ObjectBucketClaim puts these in a ConfigMap, and the key pair (AWS_*) in a
// Secret, both of the claim's name.
const (
	OBCBucketHost      = "BUCKET_HOST"
	OBCBucketPort      = "BUCKET_PORT"
	OBCBucketRegion    = "BUCKET_REGION"
	OBCBucketSubregion = "BUCKET_SUBREGION"
)

var obcSecretKeys = []string{storagev1alpha1.SecretKeyAccessKeyID, storagev1alpha1.SecretKeySecretAccessKey,
	OBCBucketHost, OBCBucketPort, storagev1alpha1.SecretKeyBucketName, OBCBucketRegion, OBCBucketSubregion}

// obc is an ObjectBucketClaim's keys in the Secret: the connection and the key pair.
func obc(c Connection, key *contractclient.Credentials) map[string][]byte {
	data := map[string][]byte{}
	for k, v := range obcConfigMap(c) {
		data[k] = []byte(v)
	}
	if key != nil {
		data[storagev1alpha1.SecretKeyAccessKeyID] = []byte(key.AccessKeyID)
		data[storagev1alpha1.SecretKeySecretAccessKey] = []byte(key.SecretAccessKey)
	}
	return data
}

// obcConfigMap is the connection as an ObjectBucketClaim's ConfigMap holds it: host and port
// apart (the scheme's port when the endpoint names none), never a key.
func obcConfigMap(c Connection) map[string]string {
	host, port := c.Endpoint, ""
	if u, err := url.Parse(c.Endpoint); err == nil && u.Host != "" {
		host, port = u.Hostname(), u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
	}
	data := map[string]string{OBCBucketHost: host, OBCBucketPort: port, OBCBucketRegion: c.Region, OBCBucketSubregion: ""}
	if c.Bucket != "" {
		data[storagev1alpha1.SecretKeyBucketName] = c.Bucket
	}
	return data
}
