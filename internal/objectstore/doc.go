// Package objectstore is the operator's narrow view of an S3 endpoint: the few bucket calls the
// Bucket controller makes (Store, over aws-sdk-go-v2), the check of what a key can do
// (CheckAccess), and the normal forms that decide when an ACL, lifecycle or CORS rules really
// differ from what the spec asks for (policies are compared in bucketpolicy).
//
// Servers disagree in how they spell the same ACL (versitygw names the AllUsers group
// "all-users" instead of its URI; AWS turns e-mail grantees into canonical ids) and how they
// echo a configuration back, so everything is compared in a normal form, never as sent.
package objectstore
