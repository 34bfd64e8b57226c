package credentials

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cosiapi "sigs.k8s.io/container-object-storage-interface-api/apis"
	cosiv1alpha1 "sigs.k8s.io/container-object-storage-interface-api/apis/objectstorage/v1alpha1"

	"github.com/object-storage-manager/object-storage-manager/internal/contractclient"
)

// COSI's Secret keys: v1alpha1's provisioner sidecar writes one document, BucketInfo; v1alpha2
// writes one value per key.
const (
	COSIBucketInfo      = "BucketInfo"
	COSIProtocol        = "COSI_PROTOCOL"
	COSIS3BucketID      = "COSI_S3_BUCKET_ID"
	COSIS3Endpoint      = "COSI_S3_ENDPOINT"
	COSIS3Region        = "COSI_S3_REGION"
	COSIS3Addressing    = "COSI_S3_ADDRESSING_STYLE"
	COSIS3AccessKeyID   = "COSI_S3_ACCESS_KEY_ID"
	COSIS3AccessSecret  = "COSI_S3_ACCESS_SECRET_KEY" //nolint:gosec // a key's name, not a key
	cosiAPIVersion      = "objectstorage.k8s.io/v1alpha1"
	cosiBucketInfoKind  = "BucketInfo"
	cosiPathAddressing  = "path"
	cosiProtocolS3Value = string(cosiv1alpha1.ProtocolS3)
)

var cosiKeys = []string{COSIBucketInfo, COSIProtocol, COSIS3BucketID, COSIS3Endpoint, COSIS3Region, COSIS3Addressing,
	COSIS3AccessKeyID, COSIS3AccessSecret}

// BucketInfo is COSI v1alpha1's description of a bucket and the key that reaches it, as its
// provisioner sidecar writes it into a BucketAccess's Secret: what a COSI driver hands out is
// the same credential state, so it renders it here too.
func BucketInfo(c Connection, key contractclient.Credentials) cosiapi.BucketInfo {
	return cosiapi.BucketInfo{
		TypeMeta: metav1.TypeMeta{APIVersion: cosiAPIVersion, Kind: cosiBucketInfoKind},
		Spec: cosiapi.BucketInfoSpec{
			BucketName:         c.Bucket,
			AuthenticationType: cosiv1alpha1.AuthenticationTypeKey,
			S3: &cosiapi.SecretS3{Endpoint: c.Endpoint, Region: c.Region,
				AccessKeyID: key.AccessKeyID, AccessSecretKey: key.SecretAccessKey},
			Protocols: []cosiv1alpha1.Protocol{cosiv1alpha1.ProtocolS3},
		},
	}
}

// cosi is both COSI versions' keys: BucketInfo (with a key), and v1alpha2's COSI_* values.
func cosi(c Connection, key *contractclient.Credentials) map[string][]byte {
	data := map[string][]byte{
		COSIProtocol:     []byte(cosiProtocolS3Value),
		COSIS3Endpoint:   []byte(c.Endpoint),
		COSIS3Region:     []byte(c.Region),
		COSIS3Addressing: []byte(cosiPathAddressing),
	}
	if c.Bucket != "" {
		data[COSIS3BucketID] = []byte(c.Bucket)
	}
	if key == nil {
		return data
	}
	data[COSIS3AccessKeyID] = []byte(key.AccessKeyID)
	data[COSIS3AccessSecret] = []byte(key.SecretAccessKey)
	if doc, err := json.Marshal(BucketInfo(c, *key)); err == nil {
		data[COSIBucketInfo] = doc
	}
	return data
}

func cosiKey(data map[string][]byte) contractclient.Credentials {
	return contractclient.Credentials{AccessKeyID: string(data[COSIS3AccessKeyID]), SecretAccessKey: string(data[COSIS3AccessSecret])}
}
