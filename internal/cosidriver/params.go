package cosidriver

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/object-storage-manager/object-storage-manager/internal/bucketpolicy"
	"github.com/object-storage-manager/object-storage-manager/internal/naming"
)

// BucketClass parameters.
const (
	// ParamContractNamespace and ParamContractName name the Contract (storage.osm.dev) whose
	// account holds the class's buckets. COSI's classes are cluster-scoped, so the namespace is
	// required.
	ParamContractNamespace = "contractNamespace"
	ParamContractName      = "contractName"
)

// BucketAccessClass parameters.
const (
	// ParamAccess is ReadOnly, ReadWrite or WriteOnly, as a BucketAccess (storage.osm.dev) asks.
	ParamAccess = "access"
)

// contractRef names a Contract.
type contractRef struct{ Namespace, Name string }

func (c contractRef) String() string { return c.Namespace + "/" + c.Name }

// bucketClassParams reads a BucketClass's parameters. Unknown ones are refused, so a typo is
// not taken silently for a default.
func bucketClassParams(params map[string]string) (contractRef, error) {
	if err := onlyKnown(params, ParamContractNamespace, ParamContractName); err != nil {
		return contractRef{}, err
	}
	ref := contractRef{Namespace: params[ParamContractNamespace], Name: params[ParamContractName]}
	var missing []string
	if ref.Namespace == "" {
		missing = append(missing, ParamContractNamespace)
	}
	if ref.Name == "" {
		missing = append(missing, ParamContractName)
	}
	if len(missing) > 0 {
		return contractRef{}, fmt.Errorf("the BucketClass parameters must name the Contract whose account holds its buckets: %s missing",
			strings.Join(missing, " and "))
	}
	return ref, nil
}

// accessClassParams reads a BucketAccessClass's parameters: the access mode.
func accessClassParams(params map[string]string) (string, error) {
	if err := onlyKnown(params, ParamAccess); err != nil {
		return "", err
	}
	switch mode := params[ParamAccess]; mode {
	case bucketpolicy.ReadOnly, bucketpolicy.ReadWrite, bucketpolicy.WriteOnly:
		return mode, nil
	case "":
		return "", fmt.Errorf("the BucketAccessClass parameter %s is missing: say %s, %s or %s",
			ParamAccess, bucketpolicy.ReadOnly, bucketpolicy.ReadWrite, bucketpolicy.WriteOnly)
	default:
		return "", fmt.Errorf("the BucketAccessClass parameter %s is %q: say %s, %s or %s",
			ParamAccess, mode, bucketpolicy.ReadOnly, bucketpolicy.ReadWrite, bucketpolicy.WriteOnly)
	}
}

func onlyKnown(params map[string]string, known ...string) error {
	var unknown []string
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("unknown parameters %s: this driver knows %s", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return nil
}

// bucketID is what COSI keeps as a Bucket's status.bucketID and hands back in every later call:
// the Contract and the bucket's name, "<contractNamespace>/<contractName>/<bucket>". Deleting
// a bucket and granting access to it come with no class parameters, so the id carries them.
// A COSI admin's static Bucket (spec.existingBucketID) names a bucket of a Contract's account
// the same way.
type bucketID struct {
	Contract contractRef
	Bucket   string
}

func (b bucketID) String() string { return b.Contract.String() + "/" + b.Bucket }

func parseBucketID(id string) (bucketID, error) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return bucketID{}, fmt.Errorf("bucket id %q is not <contractNamespace>/<contractName>/<bucket>", id)
	}
	b := bucketID{Contract: contractRef{Namespace: parts[0], Name: parts[1]}, Bucket: parts[2]}
	if reasons := naming.ValidateBucketName(b.Bucket); len(reasons) > 0 {
		return bucketID{}, fmt.Errorf("bucket id %q: the bucket name %s", id, strings.Join(reasons, "; "))
	}
	return b, nil
}
