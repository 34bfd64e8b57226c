// Package sts checks keyless access on Ceph RGW end to end: ServiceAccount tokens that
// kube-apiserver signs (kubectl create token), exchanged with RGW's STS for a role the contract
// API made, by an AWS SDK that reads only the environment a keyless Secret would hold; and the
// same through the operator, a BucketAccess with authentication ServiceAccount and the Secret it
// writes (TestKeylessBucketAccessThroughTheOperator), and a keyless Application, whose
// Deployment's environment and ServiceAccount token read its linked Buckets
// (TestKeylessApplicationThroughTheOperator). Each test runs its own stack
// (stack.Options.STS): with STS on, RGW answers an unknown key AccessDenied rather than
// InvalidAccessKeyId, which test/rgw tells apart.
package sts
